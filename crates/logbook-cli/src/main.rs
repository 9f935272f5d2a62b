//! The `logbook` command: parses arguments, calls the library, prints.
//! Every rule lives in the `logbook` crate; this crate only chooses between
//! human text and `--json` and maps errors to exit codes.

mod commands;
mod printer;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::printer::{Printer, Style};

/// Logbook: the session store for AI-agent work.
#[derive(Debug, Parser)]
#[command(name = "logbook", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Project root (default: nearest folder with logbook.yaml or .logbook/).
    #[arg(long, global = true, env = "LOGBOOK_ROOT", value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print exactly one JSON value on stdout instead of human text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let printer = Printer::new(cli.json);
    let result = commands::run(&cli, &printer);
    match result.and_then(|out| printer.print(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `logbook find | head` closing the pipe is not a failure.
            if err
                .chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return ExitCode::SUCCESS;
            }
            let style = Style::for_stderr();
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{} {err:#}", style.red("error:"));
            ExitCode::from(1)
        }
    }
}

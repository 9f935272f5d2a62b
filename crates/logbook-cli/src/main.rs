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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `logbook --json --version`: one JSON value, as `--json` promises.
        Err(e)
            if e.kind() == clap::error::ErrorKind::DisplayVersion
                && std::env::args_os().any(|a| a == "--json") =>
        {
            let out = printer::Output::new(
                serde_json::json!({ "name": "logbook", "version": env!("CARGO_PKG_VERSION") }),
                "",
            );
            return match Printer::new(true).print(&out) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::from(1),
            };
        }
        Err(e) => e.exit(),
    };
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
            let _ = writeln!(stderr, "{} {}", style.red("error:"), message(&err));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes on one line, like `{:#}`, but without a cause
/// the message above already quotes (library errors print their source in
/// their own text, so `{:#}` would repeat "No such file or directory").
fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    // A file another tool (or an editor) broke: say what to do about it.
    if err
        .chain()
        .any(|c| matches!(c.downcast_ref(), Some(logbook::Error::Corrupt { .. })))
    {
        out.push_str("; fix the file or move it aside (`logbook doctor` lists every problem)");
    }
    out
}

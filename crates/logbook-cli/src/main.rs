//! The `logbook` command: parses arguments, calls the library, prints.
//! Every rule lives in the `logbook` crate; this crate only chooses between
//! human text and `--json` and maps errors to exit codes.

mod commands;
mod printer;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use logbook::error::Face;

use crate::printer::{Printer, Style};

/// The command line: global options and one subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "logbook",
    version,
    about = "Keep AI-agent work safe on disk: work sessions with token budgets, one folder per agent run, transcripts and the orchestrator's history.",
    long_about = None,
    after_help = "Start here:\n  logbook start --client ACME --project AUDIT   start a work session\n  logbook run start --agent casey --workflow deep-dive   give an agent run its folder\n  logbook find --text \"laptop budget\"           find runs again\n  logbook demo /tmp/logbook-demo                 an example project to explore\n\nEvery command takes --json (one JSON value on stdout) and --root DIR.",
    propagate_version = true
)]
pub(crate) struct Cli {
    /// Project root (default: nearest folder with logbook.yaml or .logbook/).
    #[arg(long, global = true, env = "LOGBOOK_ROOT", value_name = "DIR")]
    root: Option<PathBuf>,
    /// Print exactly one JSON value on stdout instead of human text.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: commands::Command,
}

/// mimalloc, not glibc's allocator: Logbook allocates many small strings
/// and JSON values from several threads at once (the MCP and web servers'
/// pools, a rebuild's readers), where glibc's arenas spent a large share of
/// an MCP `find_runs` call in `malloc`, `free` and their consolidation.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    // A hook answers the agent in its own shape and always exits 0.
    if let commands::Command::Hook(args) = &cli.command {
        return commands::hook::main(cli.root.clone(), args);
    }
    let printer = Printer::new(cli.json);
    let result = commands::run(&cli, &printer);
    match result.and_then(|out| printer.print(&out).map(|()| out.failure)) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(failure)) => {
            let style = Style::for_stderr();
            let line = format!("{} {failure}", style.red("error:"));
            let _ = writeln!(std::io::stderr(), "{}", crate::printer::render(&line));
            ExitCode::from(1)
        }
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
            let line = format!("{} {}", style.red("error:"), message(&err));
            let _ = writeln!(stderr, "{}", crate::printer::render(&line));
            ExitCode::from(exit_code(&err))
        }
    }
}

/// The exit code of a failed command, by the kind of the library error in
/// its chain (the rule lives in [`logbook::ErrorKind::exit_code`]). Bad
/// usage (arguments clap refused) exits 2 before we get here.
fn exit_code(err: &anyhow::Error) -> u8 {
    logbook::error::exit_code(err.as_ref())
}

/// The error line after `error: `, worded for the command line by the
/// library's one [`logbook::error::message`]; the context this binary adds
/// is part of the chain it reads.
fn message(err: &anyhow::Error) -> String {
    logbook::error::message(err.as_ref(), Face::Cli)
}

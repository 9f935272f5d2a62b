//! Project-wide commands: init, completions.

use std::path::Path;

use anyhow::Result;
use clap::{Args, CommandFactory};
use serde_json::json;

use crate::printer::Output;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish.
    shell: clap_complete::Shell,
}

pub fn completions(args: &CompletionsArgs) -> Result<Output> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut crate::Cli::command(), "logbook", &mut buf);
    let script = String::from_utf8(buf)?;
    Ok(Output::new(
        json!({ "shell": args.shell.to_string(), "script": script }),
        script,
    ))
}

pub fn init(root: &Path) -> Result<Output> {
    let path = logbook::config::Config::init(root)?;
    Ok(Output::new(
        json!({ "config": path }),
        format!("Wrote {} with the defaults.\n", path.display()),
    ))
}

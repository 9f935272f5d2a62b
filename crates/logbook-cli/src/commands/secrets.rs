//! `logbook secrets scan`: the secrets in stored transcripts, run outputs
//! and work sessions, each masked; exit 1 when there is any.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Subcommand;
use logbook::ops::secrets;

use super::Context;
use crate::printer::Output;

#[derive(Debug, Subcommand)]
pub(crate) enum SecretsCommand {
    /// Find API keys, private keys, JWTs, passwords and tokens in stored
    /// files; each is shown masked. Exits 1 when any is found.
    Scan,
}

pub(crate) fn run(ctx: &Context, cmd: &SecretsCommand) -> Result<Output> {
    match cmd {
        SecretsCommand::Scan => scan(ctx),
    }
}

fn scan(ctx: &Context) -> Result<Output> {
    let report = secrets::scan(&ctx.project)?;
    for (file, why) in &report.unreadable {
        ctx.printer
            .warn(&format!("could not read {file}: {why} (not scanned)"));
    }
    let style = ctx.style();
    let mut human = String::new();
    for f in &report.findings {
        let _ = writeln!(
            human,
            "{}  {}  {}  {}",
            style.yellow(&f.kind),
            logbook::model::terminal::cell(&f.file),
            logbook::model::terminal::cell(&f.location),
            f.masked
        );
    }
    if report.findings.is_empty() {
        let _ = writeln!(
            human,
            "{} ({} files scanned)",
            style.green("No secrets found"),
            report.files
        );
    }
    let n = report.findings.len();
    let out = Output::new(serde_json::to_value(&report.findings)?, human);
    if n == 0 {
        return Ok(out);
    }
    Ok(out.failing(format!(
        "{n} secret{} found in {} files scanned; exports, team pushes and shared pages redact them, the stored files are left as they are",
        if n == 1 { "" } else { "s" },
        report.files
    )))
}

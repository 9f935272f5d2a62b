//! `logbook team init | push | status`: the shared PostgreSQL catalog.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Subcommand;
use logbook::ops::catalog::{self, TeamStatus};
use serde_json::json;

use super::Context;
use crate::printer::{Output, thousands};

#[derive(Debug, Subcommand)]
pub(crate) enum TeamCommand {
    /// Create or migrate the catalog's tables on the server (team_url).
    Init,
    /// Send every waiting change to the catalog now, with a progress bar.
    Push {
        /// Send secrets as they are: by default every API key, private
        /// key, token or password in titles, records and output text is
        /// replaced by `[REDACTED:kind]` (`logbook secrets scan` lists them).
        #[arg(long)]
        no_redact: bool,
    },
    /// The server, this machine's origin, the backlog and the last error.
    Status,
}

pub(crate) fn run(ctx: &Context, cmd: &TeamCommand) -> Result<Output> {
    match cmd {
        TeamCommand::Init => {
            let (server, version) = catalog::init(&ctx.project)?;
            Ok(Output::new(
                json!({ "server": server, "schema_version": version }),
                format!("Team catalog on {server} is at schema version {version}.\n"),
            ))
        }
        TeamCommand::Push { no_redact } => push(ctx, *no_redact),
        TeamCommand::Status => {
            let s = catalog::status(&ctx.project)?;
            Ok(Output::new(serde_json::to_value(&s)?, status_text(&s)))
        }
    }
}

/// `team push`, with a progress bar, redacting secrets unless `no_redact`.
fn push(ctx: &Context, no_redact: bool) -> Result<Output> {
    if no_redact {
        ctx.printer.warn(
            "--no-redact: secrets in what is pushed (API keys, private keys, tokens, passwords) go to the team catalog as they are",
        );
    }
    let report = ctx.printer.with_progress(
        "pushing [{bar:30}] {pos}/{len} records ({per_sec}, {eta})",
        |progress| catalog::push_with(&ctx.project, Some(progress), !no_redact),
    )?;
    let human = format!(
        "Pushed {} record(s) to {} as {}: {} written, {} unchanged, {} deleted; {} waiting.\n",
        thousands(report.pushed),
        report.server,
        report.origin,
        thousands(report.written),
        thousands(report.unchanged),
        thousands(report.deleted),
        thousands(report.backlog),
    );
    Ok(Output::new(serde_json::to_value(&report)?, human))
}

/// `team status` as text: the server and this machine's origin, then each
/// origin the catalog holds.
fn status_text(s: &TeamStatus) -> String {
    let mut out = String::new();
    let Some(server) = &s.server else {
        let _ = writeln!(
            out,
            "No team catalog: set team_url in logbook.yaml (or LOGBOOK_TEAM_URL) to share runs."
        );
        return out;
    };
    let state = if s.reachable {
        "reachable"
    } else {
        "unreachable"
    };
    let _ = writeln!(out, "Team catalog: {server} ({state})");
    let _ = writeln!(out, "  Origin:     {}", s.origin);
    let _ = writeln!(out, "  Backlog:    {} record(s)", thousands(s.backlog));
    let _ = writeln!(
        out,
        "  Last push:  {}",
        s.last_push.as_deref().unwrap_or("never")
    );
    if let Some(e) = &s.last_error {
        let _ = writeln!(out, "  Last error: {e}");
    }
    if let Some(e) = &s.error {
        let _ = writeln!(out, "  Now:        {e}");
    }
    if let Some(c) = &s.catalog {
        let _ = writeln!(out, "  Schema:     {}", c.schema_version);
        for o in &c.origins {
            let _ = writeln!(
                out,
                "  {:<20} {} run(s), {} work session(s), {} transcript(s), last push {}",
                o.origin,
                thousands(o.runs as u64),
                thousands(o.work_sessions as u64),
                thousands(o.transcripts as u64),
                o.last_push.as_deref().unwrap_or("never")
            );
        }
    }
    out
}

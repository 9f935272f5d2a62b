//! `logbook archive`, `logbook unarchive` and `logbook delete`: the archive
//! that keeps the live set small, and the only way a run is deleted. Every
//! rule is `logbook::ops::archive`'s; this parses and prints.

use anyhow::Result;
use clap::Args;
use logbook::ops::archive::{self, Archived};
use serde_json::json;

use super::Context;
use crate::printer::Output;

#[derive(Debug, Args)]
pub(crate) struct ArchiveArgs {
    /// Archive the runs that finished longer ago than this: 90d, 12h, 2w, 30m.
    #[arg(
        long,
        value_name = "AGE",
        required_unless_present = "policy",
        conflicts_with = "policy"
    )]
    older_than: Option<String>,
    /// Only runs of these finished statuses (completed, failed, cancelled; comma-separated).
    #[arg(long, value_name = "S,…", conflicts_with = "policy")]
    status: Vec<String>,
    /// Apply the retention policy of logbook.yaml (`retention:`).
    #[arg(long)]
    policy: bool,
    /// Say what would move; move nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct UnarchiveArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
}

#[derive(Debug, Args)]
pub(crate) struct DeleteArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// Delete for good (without it, nothing is removed and the command says what would be).
    #[arg(long)]
    yes: bool,
    /// Delete even though other runs link to it (their related_sessions).
    #[arg(long)]
    force: bool,
}

pub(crate) fn archive(ctx: &Context, a: &ArchiveArgs) -> Result<Output> {
    let done = match &a.older_than {
        Some(age) if !a.policy => archive::archive(&ctx.project, age, &a.status, a.dry_run)?,
        _ => archive::apply_policy(&ctx.project, a.dry_run)?,
    };
    Ok(Output::new(serde_json::to_value(&done)?, human(&done)))
}

fn human(done: &Archived) -> String {
    let verb = if done.dry_run { "would move" } else { "moved" };
    let mut out = String::new();
    for m in &done.moved {
        out.push_str(&format!(
            "{} {}  {}  ({}, finished {})\n",
            verb,
            m.session_id,
            m.to.display(),
            m.status,
            m.finished_at
        ));
    }
    for l in &done.left {
        out.push_str(&format!("left {}: {}\n", l.session_id, l.reason));
    }
    out.push_str(&format!(
        "{} {} run(s) to the archive{}\n",
        if done.dry_run {
            "Would archive"
        } else {
            "Archived"
        },
        done.count,
        if done.dry_run {
            " (dry run: nothing moved)"
        } else {
            ""
        }
    ));
    out
}

pub(crate) fn unarchive(ctx: &Context, a: &UnarchiveArgs) -> Result<Output> {
    let run = archive::unarchive(&ctx.project, &a.id)?;
    Ok(Output::new(
        json!({"session_id": run.id, "folder": run.folder}),
        format!("Unarchived {} to {}\n", run.id, run.folder.display()),
    ))
}

pub(crate) fn delete(ctx: &Context, a: &DeleteArgs) -> Result<Output> {
    let gone = archive::delete(&ctx.project, &a.id, a.yes, a.force)?;
    let mut human = format!(
        "Deleted {} ({}); tombstone {}\n",
        gone.session_id,
        gone.folder.display(),
        gone.tombstone.display()
    );
    if !gone.linked_from.is_empty() {
        human.push_str(&format!(
            "runs {} still name it in related_sessions\n",
            gone.linked_from.join(", ")
        ));
    }
    Ok(Output::new(serde_json::to_value(&gone)?, human))
}

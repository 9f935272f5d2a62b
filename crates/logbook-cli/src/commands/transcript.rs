//! `logbook transcript …`: main-agent and subagent transcripts (seed 003).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use logbook::clock;
use logbook::model::ids::short_id;
use logbook::model::transcript::Kind;
use logbook::ops::transcript::{self, ListOptions};
use serde_json::Value;

use super::Context;
use crate::printer::{Output, thousands};

#[derive(Debug, Subcommand)]
pub(crate) enum TranscriptCommand {
    /// List transcripts of this project, newest first.
    List(ListArgs),
    /// Show one transcript (by UUID, or a unique part of it).
    Show {
        /// The session UUID, its first 8 or more characters, or its last 8
        /// (the short id that names its file).
        id: String,
    },
    /// Save a transcript given as a JSON file in seed 003's format.
    Import {
        /// The transcript file.
        file: PathBuf,
        /// Store it as a subagent transcript (subagent_session_…).
        #[arg(long)]
        subagent: bool,
        /// The parent main session's UUID (implies --subagent).
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        /// The run this conversation belongs to (UUID or unique prefix): its
        /// manifest gets userSummary and messageCount (metadata.runId does
        /// the same).
        #[arg(long, value_name = "RUN_ID")]
        run: Option<String>,
    },
    /// Move transcripts inactive for more than DAYS days to the archive folder.
    Prune {
        /// Age in days of the last activity.
        #[arg(long, value_name = "DAYS")]
        older_than: u64,
        /// Only show what would move.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Every workdir, not only this project's.
    #[arg(long)]
    all: bool,
    /// Only main-agent transcripts.
    #[arg(long, conflicts_with = "subagents")]
    main: bool,
    /// Only subagent transcripts.
    #[arg(long)]
    subagents: bool,
    /// At most N transcripts.
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(super::run::PAGING_RANGE))]
    limit: Option<u64>,
    /// Skip the first N transcripts.
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(super::run::PAGING_RANGE))]
    offset: u64,
}

pub(crate) fn run(ctx: &Context, cmd: &TranscriptCommand) -> Result<Output> {
    match cmd {
        TranscriptCommand::List(a) => list(ctx, a),
        TranscriptCommand::Show { id } => show(ctx, id),
        TranscriptCommand::Import {
            file,
            subagent,
            parent,
            run,
        } => import(ctx, file, *subagent, parent.as_deref(), run.as_deref()),
        TranscriptCommand::Prune {
            older_than,
            dry_run,
        } => prune(ctx, *older_than, *dry_run),
    }
}

fn list(ctx: &Context, a: &ListArgs) -> Result<Output> {
    let opts = ListOptions {
        within: (!a.all).then(|| ctx.project.root().to_path_buf()),
        kind: if a.main {
            Some(Kind::Main)
        } else if a.subagents {
            Some(Kind::Subagent)
        } else {
            None
        },
        limit: a.limit.map(super::run::paging),
        offset: super::run::paging(a.offset),
    };
    let listing = transcript::list(&ctx.project, &opts)?;
    ctx.warn_skipped(&listing.corrupt);
    let st = ctx.style();
    let mut out = String::new();
    if listing.transcripts.is_empty() {
        let _ = match (a.all, listing.elsewhere) {
            (true, _) => writeln!(out, "No transcripts."),
            (false, 0) => writeln!(out, "No transcripts for this project."),
            (false, n) => writeln!(
                out,
                "No transcripts for this project; {n} in other workdirs (`logbook transcript list --all` lists them)."
            ),
        };
    }
    for t in &listing.transcripts {
        let parent = t
            .parent_session_id
            .as_deref()
            .map(|p| format!(" ← {}", short_id(p)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}  {:<8}  {}  {:>9} tokens{}",
            st.bold(&t.id),
            t.kind.as_str(),
            clock::display(&t.last_active_at),
            thousands(t.latest_total_tokens),
            st.dim(&parent)
        );
    }
    Ok(Output::new(transcript::listing_json(&listing), out))
}

fn show(ctx: &Context, id: &str) -> Result<Output> {
    let stored = transcript::load(&ctx.project, id)?;
    let st = ctx.style();
    let t = &stored.transcript;
    let mut out = String::new();
    if !ctx.printer.json {
        let _ = writeln!(out, "{} ({})", st.bold(&t.id), stored.kind.as_str());
        let _ = writeln!(out, "File:      {}", stored.path.display());
        let _ = writeln!(out, "Workdir:   {}", t.metadata.workdir);
        let _ = writeln!(out, "Started:   {}", clock::display(&t.metadata.started_at));
        let _ = writeln!(
            out,
            "Active:    {}",
            clock::display(&t.metadata.last_active_at)
        );
        let _ = writeln!(
            out,
            "Tokens:    {}",
            thousands(t.metadata.latest_total_tokens)
        );
        if let Some(p) = &t.metadata.parent_session_id {
            let _ = writeln!(out, "Parent:    {p}");
        }
        let _ = writeln!(out, "Messages:  {}", t.messages.len());
        for m in t.messages.iter().rev().take(5).rev() {
            let text = m
                .blocks
                .iter()
                .find_map(|b| b.get("content").and_then(Value::as_str))
                .unwrap_or("");
            let line = logbook::model::naming::shorten(text, 70);
            let _ = writeln!(out, "  {:<9} {line}", m.role);
        }
    }
    // Moved, not copied, into the JSON so a large transcript is held once.
    let json = if ctx.printer.json {
        stored.transcript.into_value()
    } else {
        Value::Null
    };
    Ok(Output::new(json, out))
}

fn import(
    ctx: &Context,
    file: &std::path::Path,
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<Output> {
    let stored = transcript::import(&ctx.project, file, subagent, parent, run)?;
    let mut human = format!(
        "Saved {} transcript {} to {}",
        stored.kind.as_str(),
        stored.transcript.id,
        stored.path.display()
    );
    let run_id = stored.transcript.run_id();
    if let Some(run_id) = run_id {
        let _ = write!(
            human,
            "\nRun {run_id}: {} message(s) recorded in its manifest",
            stored.transcript.messages.len()
        );
    }
    Ok(Output::new(transcript::imported_json(&stored), human))
}

fn prune(ctx: &Context, days: u64, dry_run: bool) -> Result<Output> {
    let report = transcript::prune(&ctx.project, days, dry_run)?;
    ctx.warn_skipped(&report.corrupt);
    let mut out = String::new();
    let verb = if dry_run { "Would move" } else { "Moved" };
    if report.moved.is_empty() {
        let _ = writeln!(out, "No transcript inactive for more than {days} days.");
    }
    for m in &report.moved {
        let _ = writeln!(
            out,
            "{verb} {} ({}, last active {}) to {}",
            m.id,
            m.kind.as_str(),
            clock::display(&m.last_active_at),
            m.to.display()
        );
    }
    Ok(Output::new(transcript::pruned_json(&report, dry_run), out))
}

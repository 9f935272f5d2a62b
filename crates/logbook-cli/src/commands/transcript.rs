//! `logbook transcript …`: main-agent and subagent transcripts (seed 003).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use logbook::clock;
use logbook::model::ids::short_id;
use logbook::model::terminal::cell;
use logbook::ops::params::{self, paging_count};
use logbook::ops::query::{self, Scope};
use logbook::ops::transcript::listing::{Caller, ListRequest};
use logbook::ops::transcript::{
    self, ImportFormat, ImportPlan, ImportReport, ImportRequest, UsageBy, UsageScope,
};
use serde_json::Value;

use super::Context;
use crate::printer::{Output, thousands};

#[derive(Debug, Subcommand)]
pub(crate) enum TranscriptCommand {
    /// List transcripts of this repository (the current folder's), newest first.
    List(ListArgs),
    /// Show one transcript (by UUID, or a unique part of it).
    Show {
        /// The session UUID, its first 8 or more characters, or its last 8
        /// (the short id that names its file).
        id: String,
    },
    /// Give a transcript a title that sticks (re-imports keep it); an empty
    /// TEXT removes it.
    Name {
        /// The session UUID, its first 8 or more characters, or its last 8.
        id: String,
        /// The title.
        text: String,
    },
    /// The messages of a transcript that say TEXT (from the index: word
    /// forms, case and accents aside, as `list --text`), and with --errors
    /// the messages holding a failed tool result.
    Find(FindArgs),
    /// The command that resumes this session in the agent that wrote it
    /// (`claude --resume ID`, `codex resume ID`), and the folder to run it in.
    Resume {
        /// The session UUID, its first 8 or more characters, or its last 8.
        id: String,
    },
    /// Import agent history: Claude Code and Codex logs (a file, or a folder
    /// searched recursively) or a JSON file in seed 003's format.
    Import(ImportArgs),
    /// Tokens measured in imported sessions, per model, day or session.
    Usage(UsageArgs),
    /// Write a session as one file to share: a self-contained HTML page
    /// (--html) or Markdown (--markdown), secrets redacted.
    Export(super::transcript_export::ExportArgs),
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
pub(crate) struct FindArgs {
    /// The session UUID, its first 8 or more characters, or its last 8.
    id: String,
    /// Words every matching message says.
    #[arg(required_unless_present = "errors")]
    text: Option<String>,
    /// Also list the messages holding a failed tool result.
    #[arg(long)]
    errors: bool,
    /// Only messages after message N (0-based).
    #[arg(long, value_name = "N")]
    after: Option<u64>,
    /// At most N messages of each list.
    #[arg(long, value_name = "N", default_value_t = 50)]
    limit: u64,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// A log, a folder of logs (searched recursively) or a seed 003 transcript file.
    #[arg(value_name = "PATH", required_unless_present = "from_home")]
    file: Option<PathBuf>,
    /// Which agent wrote it; `auto` decides per file from its first lines.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Import ~/.claude/projects and ~/.codex/sessions ($CLAUDE_CONFIG_DIR, $CODEX_HOME).
    #[arg(long, conflicts_with = "file")]
    from_home: bool,
    /// Keep importing as the agents write (until interrupted).
    #[arg(long)]
    watch: bool,
    /// Seed 003 file: store it as a subagent transcript (subagent_session_…).
    #[arg(long)]
    subagent: bool,
    /// Seed 003 file: the parent main session's UUID (implies --subagent).
    #[arg(long, value_name = "ID")]
    parent: Option<String>,
    /// Seed 003 file: the run this conversation belongs to (UUID or unique
    /// prefix): its manifest gets userSummary and messageCount
    /// (metadata.runId does the same).
    #[arg(long, value_name = "RUN_ID")]
    run: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    Auto,
    ClaudeCode,
    Codex,
    Logbook,
}

impl From<FormatArg> for ImportFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Auto => ImportFormat::Auto,
            FormatArg::ClaudeCode => ImportFormat::ClaudeCode,
            FormatArg::Codex => ImportFormat::Codex,
            FormatArg::Logbook => ImportFormat::Logbook,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// One transcript (UUID or a unique part), with its subagents.
    #[arg(value_name = "ID", conflicts_with = "all")]
    id: Option<String>,
    /// Every transcript, not only this project's.
    #[arg(long)]
    all: bool,
    /// How rows are grouped.
    #[arg(long, value_enum, default_value_t = ByArg::Model)]
    by: ByArg,
    /// Every machine's transcripts in the team catalog (with --all).
    #[arg(long, requires = "all")]
    team: bool,
    /// Only those imported from claude-code or codex logs, or logbook (seed 003 files).
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
    /// A cost column (USD, each call at its model's price; `--json` always has `cost_usd`).
    #[arg(long)]
    cost: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ByArg {
    Model,
    Day,
    Session,
    Repo,
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
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Skip the first N transcripts.
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: u64,
    /// Only those whose workdir is DIR or inside it (any project's).
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Only those imported from claude-code or codex logs, or logbook (seed 003 files).
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
    /// Only those whose measured usage names a model containing TEXT.
    #[arg(long, value_name = "TEXT")]
    model: Option<String>,
    /// Only those active since TIME (RFC 3339, or 2h, 7d…).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only those begun before TIME (RFC 3339, or 2h, 7d… ago).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
    /// Only those whose messages say every one of these words (word forms,
    /// case and accents aside, as `find --text`; from the index).
    #[arg(long, value_name = "WORDS")]
    text: Option<String>,
    /// Every machine's transcripts in the team catalog (team_url).
    #[arg(long)]
    team: bool,
    /// Only the live sessions: an agent is writing them now (from its
    /// SessionStart or `import --watch` until its SessionEnd, or 10 idle
    /// minutes).
    #[arg(long)]
    live: bool,
    /// Only this repository's transcripts (default: the current folder's):
    /// a remote URL in any spelling, a folder, or `.`; those recorded
    /// without one are listed when their workdir is in this project.
    #[arg(long, value_name = "REPO", conflicts_with = "all")]
    repo: Option<String>,
}

pub(crate) fn run(ctx: &Context, cmd: &TranscriptCommand) -> Result<Output> {
    match cmd {
        TranscriptCommand::List(a) => list(ctx, a),
        TranscriptCommand::Show { id } => show(ctx, id),
        TranscriptCommand::Name { id, text } => {
            let stored = transcript::name(&ctx.project, id, text)?;
            let human = match text.trim() {
                "" => format!("Transcript {} has no title now\n", stored.transcript.id),
                t => format!("Transcript {} is titled {t:?}\n", stored.transcript.id),
            };
            Ok(Output::new(transcript::imported_json(&stored), human))
        }
        TranscriptCommand::Resume { id } => {
            let r = logbook::ops::agent::transcript_resume(&ctx.project, id)?;
            let human = format!("{}\n", logbook::ops::agent::resume_line(Some(&r)));
            Ok(Output::new(
                logbook::ops::agent::resume_json(Some(&r))?,
                human,
            ))
        }
        TranscriptCommand::Find(a) => find(ctx, a),
        TranscriptCommand::Import(a) => import_cmd(ctx, a),
        TranscriptCommand::Usage(a) => usage(ctx, a),
        TranscriptCommand::Export(a) => super::transcript_export::export(ctx, a),
        TranscriptCommand::Prune {
            older_than,
            dry_run,
        } => prune(ctx, *older_than, *dry_run),
    }
}

fn find(ctx: &Context, a: &FindArgs) -> Result<Output> {
    use logbook::ops::transcript::find::{self, Page};
    let page = Page {
        after: a.after.map(|n| paging_count("after", n)).transpose()?,
        limit: paging_count("limit", a.limit)?,
    };
    let matches = a
        .text
        .as_deref()
        .map(|text| find::find_in(&ctx.project, &a.id, text, page, true))
        .transpose()?;
    let errors = a
        .errors
        .then(|| find::errors(&ctx.project, &a.id, page))
        .transpose()?;
    let mut human = String::new();
    if let (Some(m), Some(text)) = (&matches, &a.text) {
        let _ = writeln!(
            human,
            "{} message{} say {text:?}{}",
            m.total,
            if m.total == 1 { "" } else { "s" },
            // With none shown there is no last message to page on from:
            // `--after 0` would skip message 0.
            if let Some(last) = m.items.last().filter(|_| (m.items.len() as u64) < m.total) {
                format!(
                    " ({} shown; --after {} for more)",
                    m.items.len(),
                    last.message
                )
            } else if m.items.is_empty() && m.total > 0 {
                format!(
                    " (none shown with --limit {}; raise --limit to see them)",
                    a.limit
                )
            } else {
                String::new()
            }
        );
        for f in &m.items {
            let _ = writeln!(
                human,
                "  #{:<6} {}",
                f.message,
                cell(&f.snippet.as_deref().unwrap_or_default().replace('\n', " "))
            );
        }
    }
    if let Some(e) = &errors {
        let list: Vec<String> = e.items.iter().map(|m| format!("#{m}")).collect();
        let _ = writeln!(
            human,
            "{} error{}{}{}",
            e.total,
            if e.total == 1 { "" } else { "s" },
            if list.is_empty() { "" } else { ": messages " },
            list.join(", ")
        );
    }
    Ok(Output::new(
        find::found_json(matches.as_ref(), errors.as_ref()),
        human,
    ))
}

fn list(ctx: &Context, a: &ListArgs) -> Result<Output> {
    let request = ListRequest {
        all: a.all,
        workdir: a.workdir.clone(),
        repo: a.repo.clone(),
        filters: params::TranscriptParams {
            source: a.source.clone(),
            model: a.model.clone(),
            since: a.since.clone(),
            until: a.until.clone(),
            text: a.text.clone(),
        },
        main: a.main,
        subagents: a.subagents,
        limit: a.limit,
        offset: a.offset,
        live: a.live,
        scope: Scope::of_flag(a.team),
    };
    let listing = request.list(&ctx.project, &Caller::User(ctx.cwd.clone()))?;
    ctx.warn_skipped(&listing.corrupt);
    let st = ctx.style();
    let mut out = String::new();
    if listing.rows.is_empty() {
        let _ = match (a.all, listing.elsewhere) {
            _ if a.team => writeln!(out, "No transcripts in the team catalog."),
            (true, _) => writeln!(out, "No transcripts."),
            (false, 0) => writeln!(out, "No transcripts for this project."),
            (false, n) => writeln!(
                out,
                "No transcripts for this project; {n} in other workdirs (`logbook transcript list --all` lists them)."
            ),
        };
    }
    for row in &listing.rows {
        let t = &row.summary;
        // The first model and how many more; the measured total (input,
        // output and cache) where the log measured it, else the context
        // size the transcript recorded.
        let model = match t.models.as_slice() {
            [] => "-".to_string(),
            [one] => cell(one).into_owned(),
            [first, rest @ ..] => format!("{} +{}", cell(first), rest.len()),
        };
        let tokens = t.usage.map_or(t.latest_total_tokens, |u| u.total_tokens);
        let _ = writeln!(
            out,
            "{}  {:<8}  {:<11}  {}  {:>7}  {:>5} msgs  {:>9} tokens  {:>10}  {:<18}  {}{}",
            st.bold(&cell(&t.id)),
            t.kind.as_str(),
            cell(&t.source),
            clock::display(&t.last_active_at),
            t.duration().unwrap_or_else(|| "-".into()),
            thousands(t.messages),
            thousands(tokens),
            // A cost where the log measured the calls; the title stays last.
            if t.usage.is_some() {
                usd_cell(row.cost_usd)
            } else {
                "-".into()
            },
            model,
            if t.title.is_empty() {
                "-".into()
            } else {
                cell(&t.title)
            },
            st.dim(&row_notes(row))
        );
    }
    Ok(Output::new(listing.json()?, out))
}

/// What a list row ends with: its main session, its machine, and whether
/// an agent is writing it.
fn row_notes(row: &query::TranscriptRow) -> String {
    let t = &row.summary;
    let parent = t
        .parent_session_id
        .as_deref()
        .map(|p| format!(" ← {}", cell(short_id(p))))
        .unwrap_or_default();
    let origin = row
        .origin
        .as_ref()
        .map(|o| format!("  @{}", cell(o)))
        .unwrap_or_default();
    let live = if row.live { "  (live)" } else { "" };
    format!("{parent}{origin}{live}")
}

fn show(ctx: &Context, id: &str) -> Result<Output> {
    let stored = transcript::load(&ctx.project, id)?;
    let st = ctx.style();
    let t = &stored.transcript;
    let mut out = String::new();
    if !ctx.printer.json {
        let _ = writeln!(out, "{} ({})", st.bold(&cell(&t.id)), stored.kind.as_str());
        let title = logbook::model::transcript::title(&t.metadata, t.first_prompt().as_deref());
        if !title.is_empty() {
            let _ = writeln!(out, "Title:     {}", cell(&title));
        }
        let _ = writeln!(
            out,
            "File:      {}",
            cell(&stored.path.display().to_string())
        );
        let _ = writeln!(out, "Workdir:   {}", cell(&t.metadata.workdir));
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
            let _ = writeln!(out, "Parent:    {}", cell(p));
        }
        let _ = writeln!(out, "Messages:  {}", t.messages.len());
        for m in t.messages.iter().rev().take(5).rev() {
            let text = m
                .blocks
                .iter()
                .find_map(|b| b.get("content").and_then(Value::as_str))
                .unwrap_or("");
            let line = logbook::model::naming::shorten(text, 70);
            let _ = writeln!(out, "  {:<9} {}", cell(&m.role), cell(&line));
        }
    }
    // Moved, not copied, into the JSON so a large transcript is held once.
    let json = if ctx.printer.json {
        stored.transcript.into_value()?
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
    let (report, stored) = transcript::import_seed(&ctx.project, file, subagent, parent, run)?;
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
    Ok(Output::new(
        transcript::seed_import_json(&report, &stored)?,
        human,
    ))
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

/// A single seed 003 file keeps the human answer `transcript import FILE`
/// always gave (and its flags); its JSON is the import report every input
/// kind prints. Logs and folders get the import summary.
fn import_cmd(ctx: &Context, a: &ImportArgs) -> Result<Output> {
    let format = ImportFormat::from(a.format);
    let request = ImportRequest {
        file: a.file.clone(),
        format,
        watch: a.watch,
        subagent: a.subagent,
        parent: a.parent.clone(),
        run: a.run.clone(),
    };
    let roots = match request.plan()? {
        ImportPlan::Seed {
            file,
            subagent,
            parent,
            run,
        } => return import(ctx, &file, subagent, parent.as_deref(), run.as_deref()),
        ImportPlan::Logs(roots) => roots,
    };
    let report = import_roots(ctx, &roots, format)?;
    if a.watch {
        super::transcript_watch::watch(ctx, &roots, format, report)?;
        return Ok(Output::new(Value::Null, String::new()));
    }
    import_output(ctx, &report)
}

/// Imports each root in turn, with a progress bar on a terminal.
pub(crate) fn import_roots(
    ctx: &Context,
    roots: &[PathBuf],
    format: ImportFormat,
) -> Result<ImportReport> {
    ctx.printer
        .with_progress("importing [{bar:30}] {percent}% ({eta})", |progress| {
            let mut report = ImportReport::default();
            for root in roots {
                let r = transcript::import_named(&ctx.project, root, format, Some(progress))?;
                report.imported.extend(r.imported);
                report.updated.extend(r.updated);
                report.unchanged.extend(r.unchanged);
                report.skipped.extend(r.skipped);
            }
            Ok(report)
        })
}

/// The import summary: counts, then each new or updated transcript, each
/// skipped file with its reason and each bad line as `file:line: reason`.
pub(crate) fn import_output(ctx: &Context, report: &ImportReport) -> Result<Output> {
    let st = ctx.style();
    let mut out = String::new();
    for (verb, list) in [("Imported", &report.imported), ("Updated", &report.updated)] {
        for i in list {
            let _ = writeln!(
                out,
                "{verb} {} {} ({}, {} messages, {} tokens) from {}",
                i.kind.as_str(),
                st.bold(&i.id),
                i.format,
                i.messages,
                thousands(i.total_tokens),
                i.source.display()
            );
        }
    }
    for list in [&report.imported, &report.updated] {
        for i in list {
            for b in &i.bad_lines {
                ctx.printer.warn(&format!(
                    "{}:{}: {} (the other lines were imported)",
                    i.source.display(),
                    b.line,
                    b.reason
                ));
            }
        }
    }
    for i in report.imported.iter().chain(&report.updated) {
        for (ty, n) in &i.unknown_types {
            let _ = writeln!(
                out,
                "{}: {n} record{} of an unknown type `{}`, kept as raw lines",
                i.source.display(),
                if *n == 1 { "" } else { "s" },
                cell(ty)
            );
        }
    }
    for s in &report.skipped {
        let _ = writeln!(out, "Skipped {}: {}", s.source.display(), s.reason);
    }
    let _ = writeln!(
        out,
        "{} imported, {} updated, {} unchanged, {} skipped",
        report.imported.len(),
        report.updated.len(),
        report.unchanged.len(),
        report.skipped.len()
    );
    Ok(Output::new(serde_json::to_value(report)?, out))
}

/// Prints one import summary now (`--watch` prints one per round): a JSON
/// line with `--json`, else the human text.
pub(crate) fn print_report(ctx: &Context, report: &ImportReport) -> Result<()> {
    use std::io::Write as _;
    let o = import_output(ctx, report)?;
    let mut stdout = std::io::stdout().lock();
    let _ = if ctx.printer.json {
        writeln!(stdout, "{}", o.json)
    } else {
        write!(stdout, "{}", crate::printer::render(&o.human))
    };
    let _ = stdout.flush();
    Ok(())
}

fn usage(ctx: &Context, a: &UsageArgs) -> Result<Output> {
    let scope = UsageScope::asked(&ctx.project, a.id.as_deref(), a.all, &ctx.cwd);
    let by = match a.by {
        ByArg::Model => UsageBy::Model,
        ByArg::Day => UsageBy::Day,
        ByArg::Session => UsageBy::Session,
        ByArg::Repo => UsageBy::Repo,
    };
    let filter = params::TranscriptParams {
        source: a.source.clone(),
        ..Default::default()
    }
    .filter(ctx.project.clock.now())?;
    let report =
        query::backend(&ctx.project, Scope::of_flag(a.team))?.usage(&scope, by, &filter)?;
    let out = if report.transcripts.is_empty() {
        let here = scope == UsageScope::Project;
        format!(
            "No measured usage{}: import agent logs with `logbook transcript import PATH`{}.\n",
            if here { " for this project" } else { "" },
            if here { ", or use --all" } else { "" }
        )
    } else {
        usage_table(&ctx.style(), by, &report, a.cost)
    };
    Ok(Output::new(serde_json::to_value(&report)?, out))
}

/// A price table as the cost lines name it: its source and date.
pub(crate) fn table_cell(id: &logbook::model::price::TableId) -> String {
    format!("{} ({})", cell(&id.source), cell(&id.date))
}

/// Which table the costs came from, and what they assumed.
fn cost_footer(out: &mut String, st: &crate::printer::Style, report: &transcript::UsageReport) {
    let basis = &report.cost_basis;
    let _ = writeln!(
        out,
        "{}",
        st.dim(&format!("Costs at {}.", table_cell(&basis.prices)))
    );
    for note in &basis.notes {
        let _ = writeln!(out, "{}", st.dim(&cell(note)));
    }
}

/// A cost as a table cell: `$1.2345`, or `not priced`.
pub(crate) fn usd_cell(c: Option<f64>) -> String {
    c.map_or_else(|| "not priced".to_string(), |c| format!("${c:.4}"))
}

/// `transcript usage`'s table: a row per group (with each model's part
/// when a day or repository used several), the total, and what was
/// counted once.
fn usage_table(
    st: &crate::printer::Style,
    by: UsageBy,
    report: &transcript::UsageReport,
    with_cost: bool,
) -> String {
    let head = match by {
        UsageBy::Model => "Model",
        UsageBy::Day => "Day (UTC)",
        UsageBy::Session => "Session",
        UsageBy::Repo => "Repository",
    };
    let mut out = String::new();
    let cost_head = if with_cost { "        cost" } else { "" };
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!(
            "{head:<38} {:>12} {:>10} {:>12} {:>12} {:>13}{cost_head}",
            "input", "output", "cache write", "cache read", "total"
        ))
    );
    let row =
        |out: &mut String, key: &str, u: &logbook::model::agent_log::Usage, c: Option<f64>| {
            let cost = if with_cost {
                format!(" {:>11}", usd_cell(c))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{key:<38} {:>12} {:>10} {:>12} {:>12} {:>13}{cost}",
                thousands(u.input_tokens),
                thousands(u.output_tokens),
                thousands(u.cache_creation_input_tokens),
                thousands(u.cache_read_input_tokens + u.cached_input_tokens),
                thousands(u.total_tokens)
            );
        };
    for r in &report.rows {
        row(&mut out, &cell(&r.key), &r.usage, r.cost_usd);
        // Per day and per repository, each model's part (the usage
        // page's table), when there is more than one.
        if r.by_model.len() > 1 {
            for (m, u) in &r.by_model {
                let c = r.cost_by_model.get(m).copied().flatten();
                row(&mut out, &format!("  {}", cell(m)), u, c);
            }
        }
    }
    row(&mut out, "Total", &report.total, report.cost_usd);
    usage_footer(st, report, with_cost, &mut out);
    out
}

/// The notes under the usage table: the price table used, calls counted
/// once, and what the rows count.
fn usage_footer(
    st: &crate::printer::Style,
    report: &transcript::UsageReport,
    with_cost: bool,
    out: &mut String,
) {
    if with_cost {
        cost_footer(out, st, report);
    }
    if report.duplicates.total_tokens > 0 {
        let _ = writeln!(
            out,
            "{}",
            st.dim(&format!(
                "{} tokens of calls found in more than one log (resumed or copied sessions) were counted once.",
                thousands(report.duplicates.total_tokens)
            ))
        );
    }
    let _ = writeln!(
        out,
        "{}",
        st.dim(&format!(
            "{} transcript(s); subagents counted once, in their main session's row with --by session. Codex's cached input is part of its input.",
            report.transcripts.len()
        ))
    );
}

//! Run commands (seed 000): the lifecycle of one agent run and the
//! discovery commands over all of them (`find`, `latest-output`, `lineage`).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use logbook::clock;
use logbook::model::ids::RunRef;
use logbook::model::query::RunQuery;
use logbook::model::run::{OutputType, Run, RunStatus};
use logbook::model::terminal::cell;
use logbook::ops::params::{self, FindParams, RepoBase};
use logbook::ops::query::{self, FindOptions, FoundRun, Scope};
use logbook::ops::{run, transcript};
use serde_json::Value;

use super::Context;
use crate::printer::{Output, pad};

#[derive(Debug, Subcommand)]
pub(crate) enum RunCommand {
    /// Start a run: a new folder and manifest, status running.
    Start(StartArgs),
    /// Register a file the agent wrote inside the run folder.
    Output(OutputArgs),
    /// Finish a run: set completed_at and the final status.
    Finish(FinishArgs),
    /// Record that a run builds on an earlier one (related_sessions).
    Link(LinkArgs),
    /// Show a run's manifest and display names.
    Show(IdArgs),
    /// Print the run's workflow variables as `export LOGBOOK_…=…` lines for `eval`.
    Env(IdArgs),
}

#[derive(Debug, Args)]
pub(crate) struct StartArgs {
    /// Agent identifier (e.g. alex).
    #[arg(long)]
    agent: String,
    /// Workflow name (e.g. intake-app); taken from --workflow-file when omitted.
    #[arg(long, required_unless_present = "workflow_file")]
    workflow: Option<String>,
    /// Agent title (default: the agent name).
    #[arg(long)]
    title: Option<String>,
    /// Bundle path (e.g. bmad/bmm).
    #[arg(long)]
    bundle: Option<String>,
    /// Workflow description (default: from --workflow-file).
    #[arg(long)]
    description: Option<String>,
    /// Workflow input, repeatable.
    #[arg(long = "input", value_name = "KEY=VALUE")]
    inputs: Vec<String>,
    /// An earlier run this one builds on (UUID or unique prefix), repeatable.
    #[arg(long = "related", value_name = "UUID")]
    related: Vec<String>,
    /// A tag for `find --tag`, repeatable.
    #[arg(long = "tag", value_name = "T")]
    tags: Vec<String>,
    /// Who runs it (default: the bundle config's user_name, logbook.yaml's user, $USER).
    #[arg(long)]
    user: Option<String>,
    /// A workflow.yaml: name, description, inputs and path variables.
    #[arg(long, value_name = "PATH")]
    workflow_file: Option<PathBuf>,
    /// Custom workflow-specific metadata (the manifest's `metadata`), repeatable.
    #[arg(long = "metadata", value_name = "KEY=VALUE")]
    metadata: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// Path relative to the run folder (the file must exist).
    file: String,
    /// What kind of file it is: document, data, report or artifact.
    #[arg(long = "type")]
    output_type: OutputType,
    /// What the file is for.
    #[arg(long)]
    description: String,
}

/// `run finish --status`, checked by the library's rule so clap refuses
/// what the library would, in its words.
fn final_status(s: &str) -> std::result::Result<RunStatus, String> {
    RunStatus::parse_final(s).map_err(|_| RunStatus::FINAL.to_string())
}

#[derive(Debug, Args)]
pub(crate) struct FinishArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// How it ended: completed, failed or cancelled.
    #[arg(long, value_parser = final_status, default_value = "completed")]
    status: RunStatus,
}

#[derive(Debug, Args)]
pub(crate) struct LinkArgs {
    /// The later run (its manifest changes): UUID or unique prefix.
    id: String,
    /// The earlier run it builds on: UUID or unique prefix.
    related_id: String,
}

#[derive(Debug, Args)]
pub(crate) struct IdArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
}

#[derive(Debug, Args)]
pub(crate) struct FindArgs {
    /// Agent name, exactly.
    #[arg(long)]
    agent: Option<String>,
    /// Workflow name, exactly or as a regular expression (e.g. '^deep-dive-').
    #[arg(long, value_name = "REGEX")]
    workflow: Option<String>,
    /// running, completed, failed or cancelled, or unknown: run folders
    /// without a manifest (a typo is an error, not an empty listing).
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// The user who started the run.
    #[arg(long)]
    user: Option<String>,
    /// A tag the run carries.
    #[arg(long)]
    tag: Option<String>,
    /// Started at or after: RFC 3339, a date, or an age such as 2h, 3d.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Full-text search (all words) over the manifest and small text outputs; newest first.
    #[arg(long, value_name = "QUERY")]
    text: Option<String>,
    /// At most N runs (default 50; a line on stderr says how many more match).
    #[arg(long, value_name = "N")]
    limit: Option<String>,
    /// Skip the first N runs.
    #[arg(long, value_name = "N")]
    offset: Option<String>,
    /// Search every machine's runs in the team catalog (team_url).
    #[arg(long)]
    team: bool,
    /// Only this repository's runs: a remote URL in any spelling, a folder,
    /// or `.` (the current folder's); runs recorded without one always match.
    #[arg(long, value_name = "REPO")]
    repo: Option<String>,
    /// The archived runs only (`logbook archive` moved them out of the live set).
    #[arg(long)]
    archived: bool,
}

#[derive(Debug, Args)]
pub(crate) struct LatestOutputArgs {
    /// Agent name, exactly.
    #[arg(long)]
    agent: String,
    /// Workflow name, exactly or as a regular expression.
    #[arg(long, value_name = "REGEX")]
    workflow: Option<String>,
    /// Output type (document, data, report, artifact).
    #[arg(long = "type", value_name = "T")]
    output_type: Option<OutputType>,
    /// The run's status: completed by default; running, failed, cancelled,
    /// or `any` for the newest run whatever its status (then said on stderr).
    #[arg(long, value_name = "S")]
    status: Option<String>,
    /// Look in every machine's runs in the team catalog (team_url).
    #[arg(long)]
    team: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum LineageFormat {
    Tree,
    Json,
    Dot,
    Mermaid,
}

#[derive(Debug, Args)]
pub(crate) struct LineageArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// How to print the graph.
    #[arg(long, value_enum, default_value = "tree")]
    format: LineageFormat,
    /// Follow the lineage across machines in the team catalog (team_url).
    #[arg(long)]
    team: bool,
}

pub(crate) fn command(ctx: &Context, cmd: &RunCommand) -> Result<Output> {
    match cmd {
        RunCommand::Start(a) => start(ctx, a),
        RunCommand::Output(a) => output(ctx, a),
        RunCommand::Finish(a) => finish(ctx, a),
        RunCommand::Link(a) => link(ctx, a),
        RunCommand::Show(a) => show(ctx, a),
        RunCommand::Env(a) => env(ctx, a),
    }
}

fn entry_json(ctx: &Context, run: &Run) -> Result<Value> {
    Ok(run::entry_json(run, ctx.project.clock.now())?)
}

fn start(ctx: &Context, a: &StartArgs) -> Result<Output> {
    let inputs = a
        .inputs
        .iter()
        .map(|kv| params::key_value("input", kv, "category=Hardware"))
        .collect::<logbook::Result<Vec<_>>>()?;
    let mut metadata = serde_json::Map::new();
    for kv in &a.metadata {
        let (k, v) = params::key_value("metadata", kv, "ticket=OPS-42")?;
        metadata.insert(k, Value::String(v));
    }
    let workflow_file = match &a.workflow_file {
        Some(p) if p.is_relative() => Some(std::env::current_dir()?.join(p)),
        other => other.clone(),
    };
    let started = run::start(
        &ctx.project,
        run::StartOptions {
            agent: a.agent.clone(),
            title: a.title.clone(),
            bundle: a.bundle.clone(),
            workflow: a.workflow.clone(),
            description: a.description.clone(),
            inputs,
            related: a.related.clone(),
            tags: a.tags.clone(),
            user: a.user.clone(),
            workflow_file,
            path_trust: logbook::PathTrust::User,
            metadata,
        },
    )?;
    for w in &started.warnings {
        ctx.printer.warn(&w.word(logbook::error::Face::Cli));
    }
    let style = ctx.style();
    let m = &started.manifest;
    let mut human = format!(
        "{} run {}\n  Agent:    {}\n  Workflow: {}\n  Folder:   {}\n",
        style.green("Started"),
        style.bold(started.session_id.as_str()),
        m.agent_label(),
        m.workflow.name,
        started.folder.display(),
    );
    if let Some(ws) = m.work_session() {
        let _ = writeln!(human, "  Work session: {ws}");
    }
    let _ = writeln!(
        human,
        "Register outputs with `logbook run output {} FILE --type document --description …`",
        started.session_id
    );
    Ok(Output::new(run::started_json(&started)?, human))
}

fn output(ctx: &Context, a: &OutputArgs) -> Result<Output> {
    let (run, record) = run::register_output(
        &ctx.project,
        &a.id,
        &a.file,
        a.output_type.clone(),
        &a.description,
    )?;
    let human = format!(
        "Registered {} ({}) in run {}\n",
        record.file, record.output_type, run.id
    );
    Ok(Output::new(run::output_json(&run, &record), human))
}

fn finish(ctx: &Context, a: &FinishArgs) -> Result<Output> {
    let run = run::finish(&ctx.project, &a.id, a.status.clone())?;
    let human = format!(
        "Run {} {} ({} outputs)\n",
        run.id,
        run.manifest.execution.status,
        run.manifest.outputs.len()
    );
    Ok(Output::new(entry_json(ctx, &run)?, human))
}

fn link(ctx: &Context, a: &LinkArgs) -> Result<Output> {
    let (run, added) = run::link(&ctx.project, &a.id, &a.related_id)?;
    let human = if added {
        format!(
            "Run {} now builds on {}\n",
            run.id,
            related_of(&run, &a.related_id)
        )
    } else {
        format!(
            "Run {} already builds on {}\n",
            run.id,
            related_of(&run, &a.related_id)
        )
    };
    Ok(Output::new(entry_json(ctx, &run)?, human))
}

/// The full id of the parent `given` (maybe a prefix) named.
fn related_of(run: &Run, given: &str) -> String {
    let given = given.trim().to_ascii_lowercase();
    run.manifest
        .related()
        .iter()
        .find(|r| r.to_ascii_lowercase().starts_with(&given))
        .cloned()
        .unwrap_or(given)
}

fn show(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let run = run::show(&ctx.project, &a.id)?;
    let style = ctx.style();
    let entry = run::entry(&run, ctx.project.clock.now());
    let m = &run.manifest;
    let mut h = String::new();
    let _ = writeln!(h, "{}", style.bold(&entry.label));
    let _ = writeln!(h, "  {}", entry.display_name);
    let _ = writeln!(h, "  Id:       {}", run.id);
    let _ = writeln!(h, "  Status:   {}", m.execution.status);
    let _ = writeln!(h, "  Started:  {}", clock::display(&m.execution.started_at));
    if let Some(c) = &m.execution.completed_at {
        let _ = writeln!(h, "  Finished: {}", clock::display(c));
    }
    if let Some(u) = &m.execution.user {
        let _ = writeln!(h, "  User:     {u}");
    }
    let _ = writeln!(h, "  Folder:   {}", run.folder.display());
    if !m.tags.is_empty() {
        let _ = writeln!(h, "  Tags:     {}", m.tags.join(", "));
    }
    if let Some(ws) = m.work_session() {
        let _ = writeln!(h, "  Work session: {ws}");
    }
    if !m.related().is_empty() {
        let _ = writeln!(h, "  Builds on: {}", m.related().join(", "));
    }
    // The conversations that name the run (`metadata.runId`).
    let transcripts = transcript::links::of_run(&ctx.project, &run);
    if !transcripts.is_empty() {
        let _ = writeln!(h, "  Transcripts: {}", transcripts.join(", "));
    }
    let _ = writeln!(h, "Outputs ({}):", m.outputs.len());
    for o in &m.outputs {
        let _ = writeln!(
            h,
            "  {} [{}] {}",
            cell(&o.file),
            o.output_type,
            style.dim(&cell(&o.description))
        );
    }
    let mut json = entry_json(ctx, &run)?;
    if let (Value::Object(o), false) = (&mut json, transcripts.is_empty()) {
        o.insert("transcripts".into(), transcripts.into());
    }
    Ok(Output::new(json, h))
}

/// `s` as the library's one shell word, always quoted (a value that
/// looks plain still reads as a value).
fn shell_quote(s: &str) -> String {
    let word = logbook::model::terminal::shell_word(s);
    if word.starts_with(['\'', '$']) {
        word
    } else {
        format!("'{word}'")
    }
}

fn env(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let run = run::show(&ctx.project, &a.id)?;
    let vars = run::variables_of(&run);
    let mut human = String::new();
    for (k, v) in &vars {
        let name: String = k
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        // `export`, so that a program started from the shell that ran
        // `eval "$(logbook run env ID)"` (an agent) sees them too.
        let _ = writeln!(
            human,
            "export LOGBOOK_{name}={}",
            shell_quote(v.as_str().unwrap_or_default())
        );
    }
    Ok(Output::new(Value::Object(vars), human))
}

pub(crate) fn find(ctx: &Context, a: &FindArgs) -> Result<Output> {
    let now = ctx.project.clock.now();
    let query = find_query(ctx, a, now)?;
    let scope = Scope::of_flag(a.team);
    // Streamed: every run `find` matches may be asked for (`--limit` in
    // the millions), so each is printed as it is read, never all held.
    let style = ctx.style();
    let mut stream = ctx.printer.stream();
    let mut human = String::new();
    let mut print = |f: FoundRun| {
        human.clear();
        found_run(&mut human, &style, &f);
        stream.item(&f, &human)
    };
    let streamed = query::find(
        &ctx.project,
        &query,
        FindOptions {
            now: Some(now),
            sink: Some(&mut print),
            ..FindOptions::new(scope)
        },
    );
    // `--json` stays the array of runs (a contract): transcripts that say
    // the words are for people reading the terminal, after the runs.
    let said = match (&streamed, ctx.printer.json) {
        (Ok(_), false) => transcripts_saying(ctx, scope, &query)?,
        _ => String::new(),
    };
    // The array is closed whatever happened, so stdout holds one JSON value.
    let finished = stream.finish("No runs match.\n", &said);
    let streamed = streamed?;
    finished?;
    let skipped = streamed.skipped;
    if skipped > 0 {
        ctx.printer.warn(&format!(
            "skipped {skipped} invalid manifest(s); `logbook doctor` names them"
        ));
    }
    Ok(Output::printed().with_note(find_notes(&streamed, query.offset)))
}

/// The library's query for `find`'s options, its `since` read at `now`.
fn find_query(ctx: &Context, a: &FindArgs, now: logbook::clock::Timestamp) -> Result<RunQuery> {
    Ok(FindParams {
        agent: a.agent.clone(),
        workflow: a.workflow.clone(),
        status: a.status.clone(),
        user: a.user.clone(),
        tag: a.tag.clone(),
        since: a.since.clone(),
        text: a.text.clone(),
        limit: a.limit.clone(),
        offset: a.offset.clone(),
        repo: a.repo.clone(),
        repo_base: RepoBase::Folders(ctx.cwd.clone()),
        archived: a.archived,
    }
    .query(now)?)
}

/// One run as `find` lists it: id, status, label and origin, then who
/// made it and its outputs, and the snippet of a text query.
fn found_run(human: &mut String, style: &crate::printer::Style, f: &FoundRun) {
    let e = &f.entry;
    let status = pad(e.manifest.execution.status.as_str(), 9);
    let status = match e.manifest.execution.status {
        RunStatus::Completed => style.green(&status),
        RunStatus::Failed => style.red(&status),
        RunStatus::Running => style.yellow(&status),
        _ => status,
    };
    let origin = f
        .origin
        .as_ref()
        .map(|o| format!("  {}", style.dim(&format!("@{}", cell(o)))))
        .unwrap_or_default();
    let _ = writeln!(
        human,
        "{}  {}  {}{origin}\n    {} · {} output(s)",
        e.session_id,
        status,
        style.bold(&cell(&e.label)),
        style.dim(&cell(&e.display_name)),
        e.manifest.outputs.len()
    );
    if let Some(snippet) = &f.snippet {
        let _ = writeln!(human, "    {}", cell(snippet));
    }
}

/// What `find` says after its runs: how many more match, and how many
/// archived ones it left out.
fn find_notes(streamed: &query::Page, offset: usize) -> Option<String> {
    let mut notes: Vec<String> = more_note(streamed, offset).into_iter().collect();
    if streamed.archived > 0 {
        notes.push(format!(
            "{} archived run(s) match too, left out; `logbook find --archived` lists them",
            streamed.archived
        ));
    }
    (!notes.is_empty()).then(|| notes.join("\n"))
}

/// The section of `find --text`'s human output naming the transcripts that
/// say the words (empty when none do, or the query is not one for them).
fn transcripts_saying(ctx: &Context, scope: Scope, query: &RunQuery) -> Result<String> {
    let mut human = String::new();
    let Some(said) = query::said_for_find(&ctx.project, scope, query)? else {
        return Ok(human);
    };
    if said.hits.is_empty() {
        return Ok(human);
    }
    let style = ctx.style();
    let _ = writeln!(
        human,
        "\n{} ({}):",
        style.bold("Transcripts that say it"),
        said.total
    );
    for h in &said.hits {
        let t = &h.transcript;
        let _ = writeln!(
            human,
            "{}  {:<8}  {}  {}",
            cell(&t.id),
            t.kind.as_str(),
            cell(&t.workdir),
            style.dim(&clock::display(&t.last_active_at))
        );
        if let Some(snippet) = &h.snippet {
            let _ = writeln!(human, "    {}", cell(snippet));
        }
    }
    if said.more() > 0 {
        let _ = writeln!(
            human,
            "{} more: logbook transcript list --all --text {}",
            said.more(),
            shell_quote(&said.words)
        );
    }
    Ok(human)
}

/// The note after a page of `find` that began at `offset` when runs match
/// beyond it: how many (at least, when a text query was counted only so
/// far), and how to see them.
fn more_note(page: &query::Page, offset: usize) -> Option<String> {
    let next = page.next_offset(offset)?;
    let more = page.more(offset);
    let more = if page.exact {
        more.to_string()
    } else {
        format!("at least {more}")
    };
    Some(format!(
        "{more} more run(s) match; show them with --offset {next} (or a larger --limit)"
    ))
}

pub(crate) fn latest_output(ctx: &Context, a: &LatestOutputArgs) -> Result<Output> {
    let ask = run::LatestQuery {
        agent: &a.agent,
        workflow: a.workflow.as_deref(),
        output_type: a.output_type.as_ref().map(OutputType::as_str),
        status: a.status.as_deref(),
    };
    let found = query::backend(&ctx.project, Scope::of_flag(a.team))?.latest_output(&ask)?;
    // stdout stays the path alone (scripts take it); when the status was
    // not fixed by the question, the answer says it, after the path.
    let status_note = ask.status_filter()?.is_none().then(|| {
        format!(
            "run {} is {}",
            found.run.id,
            found.run.manifest.execution.status.as_str()
        )
    });
    if let Some(origin) = &found.origin {
        // Another machine's path: named with its machine, never checked here.
        return Ok(Output::new(
            run::latest_output_json(&found)?,
            format!("{origin}:{}\n", found.path.display()),
        )
        .with_note(status_note));
    }
    if found.missing {
        ctx.printer.warn(&format!(
            "{} was registered by run {} but is no longer there (deleted or moved); `logbook run show {}` lists the run's outputs",
            found.path.display(),
            found.run.id,
            found.run.id
        ));
    }
    if let Some(u) = found.unconfined {
        ctx.printer.warn(&format!(
            "{} registered by run {} is not the run's own file: it {}; `logbook doctor` lists such outputs",
            found.path.display(),
            found.run.id,
            u.explain()
        ));
    }
    Ok(Output::new(
        run::latest_output_json(&found)?,
        format!("{}\n", found.path.display()),
    )
    .with_note(status_note))
}

pub(crate) fn lineage(ctx: &Context, a: &LineageArgs) -> Result<Output> {
    let found = query::backend(&ctx.project, Scope::of_flag(a.team))?
        .lineage(&RunRef::parse(&a.id)?, &clock::local_zone())?;
    let json = found.json()?;
    let graph = found.graph;
    let human = match a.format {
        LineageFormat::Tree => graph.to_tree(),
        LineageFormat::Json => serde_json::to_string_pretty(&json)? + "\n",
        LineageFormat::Dot => graph.to_dot(),
        LineageFormat::Mermaid => graph.to_mermaid(),
    };
    if !graph.cycles.is_empty() && !matches!(a.format, LineageFormat::Tree) {
        ctx.printer.warn(&format!(
            "lineage has {} cycle(s): {}",
            graph.cycles.len(),
            graph
                .cycles
                .iter()
                .map(|c| c.join(" -> "))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    Ok(Output::new(json, human))
}

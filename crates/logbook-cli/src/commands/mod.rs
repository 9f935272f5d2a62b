//! One module per area; each holds its clap `Args` and a function that
//! computes an [`Output`]. The printer decides between text and JSON.

mod agent;
mod archive;
mod budget;
mod doctor;
mod export;
pub(crate) mod hook;
mod hooks;
mod index;
mod infra;
mod mcp;
mod prices;
mod run;
mod secrets;
mod session;
mod statusline;
mod team;
mod transcript;
mod transcript_export;
mod transcript_watch;
mod workflow;

use anyhow::{Context as _, Result};
use clap::Subcommand;
use logbook::Logbook;
use logbook::error::{Face, Next, Step};

use crate::Cli;
use crate::printer::{Output, Printer, Style};

/// Completes every context this program opens, whatever the entry point
/// (a command, a hook, the MCP server, the viewer): the team catalog's
/// driver, and this program as the full-text index's builder, which a lost
/// index starts detached to write its text.
pub(crate) fn context(project: Logbook) -> Logbook {
    let project = project.with_catalog(std::sync::Arc::new(logbook_team_pg::PgConnector));
    match std::env::current_exe() {
        Ok(me) => project.with_text_builder(me),
        Err(_) => project,
    }
}

/// What every command gets: the opened project and how to print.
pub(crate) struct Context<'a> {
    pub(crate) project: Logbook,
    pub(crate) printer: &'a Printer,
    /// Where the command was run: its repository scopes `transcript list`
    /// and names `--repo .`.
    pub(crate) cwd: std::path::PathBuf,
}

impl Context<'_> {
    pub(crate) fn style(&self) -> Style {
        self.printer.style
    }

    /// Names each file a listing skipped, on stderr, once.
    pub(crate) fn warn_skipped(&self, corrupt: &[logbook::model::CorruptFile]) {
        for c in corrupt {
            let path = c.path.display().to_string();
            let what = if c.reason.contains(&path) {
                c.reason.clone()
            } else {
                format!("{path}: {}", c.reason)
            };
            self.printer.warn(&format!(
                "skipped {what} ({})",
                worded(Next::of(Step::Doctor { fix: false }, " checks every file"))
            ));
        }
    }
}

/// What to do next, worded as the commands a person runs: a hint the CLI
/// writes itself names its steps through the model's [`Step`], as the
/// library's hints do, so a command is spelled in one place.
pub(crate) fn worded(next: impl Into<Next>) -> String {
    next.into().word(Face::Cli)
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start a new work session and make it active.
    Start(session::StartArgs),
    /// Resume the active work session, or make a paused one active.
    Resume(session::IdArgs),
    /// Show a work session's status, tokens, milestones and artifacts.
    Status(session::IdArgs),
    /// Close a work session and move it to the archive.
    Close(session::CloseArgs),
    /// List work sessions, active and archived.
    List(session::ListArgs),
    /// Token usage report of a work session.
    Tokens(session::IdArgs),
    /// Token savings from running agents in isolation.
    Savings(session::IdArgs),
    /// Pause the active work session and activate another.
    Switch(session::SwitchArgs),
    /// Pause a work session (the active one by default).
    Pause(session::IdArgs),
    /// Record the main session's token usage.
    Usage(session::UsageArgs),
    /// Add a milestone or mark one done.
    #[command(subcommand)]
    Milestone(session::MilestoneCommand),
    /// Record artifacts produced during the session.
    #[command(subcommand)]
    Artifact(session::ArtifactCommand),
    /// Add a note to the work session.
    Note(session::NoteArgs),
    /// Record agents spawned for the work session and their token use.
    #[command(subcommand)]
    Agent(session::AgentCommand),
    /// Main-agent and subagent transcripts.
    #[command(subcommand)]
    Transcript(transcript::TranscriptCommand),
    /// The orchestrator's workflow state of a work session.
    Workflow(workflow::WorkflowArgs),
    /// Switch the work session's mode: analysis, planning, coding or disabled.
    Mode(workflow::ModeArgs),
    /// Rebuild, sync or inspect the SQLite index (derived from the files).
    #[command(subcommand)]
    Index(index::IndexCommand),
    /// Agent runs: start, register outputs, finish, link, show, env.
    #[command(subcommand)]
    Run(run::RunCommand),
    /// Find runs by agent, workflow, status, user, tag, time or text; newest first.
    Find(run::FindArgs),
    /// Print the absolute path of an agent's latest output.
    LatestOutput(run::LatestOutputArgs),
    /// Show the runs a run builds on and the runs built on it.
    Lineage(run::LineageArgs),
    /// Move finished runs out of the live set into the archive (never deletes).
    Archive(archive::ArchiveArgs),
    /// Move an archived run back into the live set.
    Unarchive(archive::UnarchiveArgs),
    /// Delete a run for good (the only way); refuses a linked run without --force.
    Delete(archive::DeleteArgs),
    /// What an agent needs after a compaction: session, tokens, milestones, outputs, workflow.
    ResumeContext(mcp::ResumeContextArgs),
    /// A handover for one coding agent from the latest session of the other:
    /// goal, files changed, commands run and failed, open milestones, last message.
    Handoff(agent::HandoffArgs),
    /// Serve the MCP server on stdio (for Claude Code, Cursor, Codex, …).
    Mcp,
    /// What Claude Code's and Codex's hooks run: one event as JSON on stdin; always exits 0.
    Hook(hook::HookArgs),
    /// Check every file; name what is corrupt or abandoned; --fix repairs.
    Doctor(doctor::DoctorArgs),
    /// Write logbook.yaml with the defaults.
    Init,
    /// Serve the read-only web viewer and HTTP API (127.0.0.1:7777 by default).
    Serve(infra::ServeArgs),
    /// The shared PostgreSQL catalog of a team: init, push, status.
    #[command(subcommand)]
    Team(team::TeamCommand),
    /// Send history to an observability tool as OpenTelemetry GenAI traces.
    #[command(subcommand)]
    Export(export::ExportCommand),
    /// Secrets in stored transcripts, run outputs and work sessions.
    #[command(subcommand)]
    Secrets(secrets::SecretsCommand),
    /// Claude Code's status line: its JSON on stdin, one line out (model,
    /// this session's tokens and cost, today's cost here, the budget).
    Statusline,
    /// Raise the work session's dollar limit: budget --add-cost USD.
    Budget(budget::BudgetArgs),
    /// The price table costs are computed with: show it, or load a newer copy.
    #[command(subcommand)]
    Prices(prices::PricesCommand),
    /// Fill a folder with a realistic example project to explore.
    Demo(infra::DemoArgs),
    /// Print shell completions.
    Completions(infra::CompletionsArgs),
    /// Install, remove or list Logbook's hooks in Claude Code's and Codex's settings.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
}

pub(crate) fn run(cli: &Cli, printer: &Printer) -> Result<Output> {
    if let Command::Completions(args) = &cli.command {
        return infra::completions(args);
    }
    if let Command::Statusline = &cli.command {
        // Never an error in the status line: whatever fails, a line.
        return Ok(statusline::run(cli.root.clone()));
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    if let Command::Demo(args) = &cli.command {
        return infra::demo(&cwd, args);
    }
    if let Command::Mcp = &cli.command {
        return mcp::serve(cli.root.clone());
    }
    if let Command::Hooks(c) = &cli.command {
        let root = logbook::ops::project::hooks_root(&cwd, cli.root.as_deref());
        return hooks::run(&root, c);
    }
    if let Command::Init = &cli.command {
        let root = cli.root.clone().unwrap_or(cwd);
        return infra::init(&root);
    }
    let project = if matches!(cli.command, Command::Start(_)) {
        Logbook::discover_or_new(&cwd, cli.root.as_deref())?
    } else if cli.root.is_none() && reads_user_home(&cli.command) {
        // No per-user home (no HOME): the cwd, as before. A LOGBOOK_HOME
        // set wrong is said, not read past.
        match Logbook::for_agent(&cwd) {
            Err(logbook::Error::NoUserHome) => Logbook::discover(&cwd, None)?,
            found => found?,
        }
    } else {
        Logbook::discover(&cwd, cli.root.as_deref())?
    };
    let ctx = Context {
        project: context(project),
        printer,
        cwd,
    };
    let result = command(&ctx, cli);
    // A write's background push to the team catalog gets its short deadline.
    logbook::ops::catalog::settle(&ctx.project);
    // What the library noticed on the way (the index left behind, a read
    // answered from the files) goes to stderr whether the command failed or not.
    for notice in ctx.project.notices.take() {
        printer.warn(&notice.word(logbook::error::Face::Cli));
    }
    result
}

fn command(ctx: &Context, cli: &Cli) -> Result<Output> {
    match &cli.command {
        Command::Start(a) => session::start(ctx, a),
        Command::Resume(a) => session::resume(ctx, a),
        Command::Status(a) => session::status(ctx, a),
        Command::Close(a) => session::close(ctx, a),
        Command::List(a) => session::list(ctx, a),
        Command::Tokens(a) => session::tokens(ctx, a),
        Command::Savings(a) => session::savings(ctx, a),
        Command::Switch(a) => session::switch(ctx, a),
        Command::Pause(a) => session::pause(ctx, a),
        Command::Usage(a) => session::usage(ctx, a),
        Command::Milestone(c) => session::milestone(ctx, c),
        Command::Artifact(c) => session::artifact(ctx, c),
        Command::Note(a) => session::note(ctx, a),
        Command::Agent(c) => session::agent(ctx, c),
        Command::Index(c) => index::run(ctx, c),
        Command::Transcript(c) => transcript::run(ctx, c),
        Command::Workflow(a) => workflow::run(ctx, a),
        Command::Mode(a) => workflow::mode(ctx, a),
        Command::Run(c) => run::command(ctx, c),
        Command::Find(a) => run::find(ctx, a),
        Command::LatestOutput(a) => run::latest_output(ctx, a),
        Command::Lineage(a) => run::lineage(ctx, a),
        Command::Archive(a) => archive::archive(ctx, a),
        Command::Unarchive(a) => archive::unarchive(ctx, a),
        Command::Delete(a) => archive::delete(ctx, a),
        Command::Doctor(a) => doctor::run(ctx, a),
        Command::ResumeContext(a) => mcp::resume_context(ctx, a),
        Command::Handoff(a) => agent::handoff(ctx, a),
        Command::Serve(a) => infra::serve(ctx, a),
        Command::Team(c) => team::run(ctx, c),
        Command::Export(c) => export::run(ctx, c),
        Command::Secrets(c) => secrets::run(ctx, c),
        Command::Prices(c) => prices::run(ctx, c),
        Command::Budget(a) => budget::budget(ctx, a),
        Command::Init
        | Command::Statusline
        | Command::Mcp
        | Command::Hook(_)
        | Command::Demo(_)
        | Command::Completions(_)
        | Command::Hooks(_) => {
            unreachable!("handled above")
        }
    }
}

// --- The per-user home fallback (issue 28: repository identity) ---------

/// Whether `command` reads the per-user home when no project is marked
/// above the cwd and no `--root`/`LOGBOOK_ROOT` is given: what user-level
/// agent hooks recorded there, scoped to the cwd's repository, is found
/// from a clone anywhere. Commands that write never fall back (a
/// repository that never asked for Logbook gets no files of ours, and a
/// project is only made where one is asked for).
fn reads_user_home(command: &Command) -> bool {
    use transcript::TranscriptCommand as T;
    match command {
        // The table of the project above, else the user's own.
        Command::Resume(_) | Command::Handoff(_) | Command::Export(_) | Command::Prices(_) => true,
        Command::Transcript(t) => {
            matches!(
                t,
                T::List(_) | T::Show { .. } | T::Usage(_) | T::Resume { .. } | T::Export(_)
            )
        }
        _ => false,
    }
}

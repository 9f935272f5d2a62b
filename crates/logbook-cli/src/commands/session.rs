//! Work session commands (seed 002), printed in the seed's layouts.

use std::fmt::Write as _;
use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use logbook::clock;
use logbook::error::Next;
use logbook::model::terminal::cell;
use logbook::model::work_session::{AgentOutcome, Indicator, SessionStatus, Usage, WorkSession};
use logbook::ops::work_session::{self as ws, StartOptions};

use super::{Context, worded};
use crate::printer::{Output, Style, thousands};

#[derive(Debug, Args)]
pub(crate) struct StartArgs {
    /// Id prefix: SES, ENG, ANA, DES, TST or any 2–5 capital letters.
    #[arg(long)]
    prefix: Option<String>,
    /// Client name (letters and digits; default INTERNAL).
    #[arg(long)]
    client: Option<String>,
    /// Project name (letters and digits; default: the project folder's name).
    #[arg(long)]
    project: Option<String>,
    /// Token budget (default: token_budget from logbook.yaml, 150000).
    #[arg(long, value_name = "N")]
    max_tokens: Option<u64>,
    /// Dollar budget (USD), beside the token budget; see budget_action in logbook.yaml.
    #[arg(long, value_name = "USD")]
    max_cost: Option<f64>,
    /// Close the active session without asking.
    #[arg(long, short)]
    yes: bool,
}

#[derive(Debug, Args)]
pub(crate) struct IdArgs {
    /// Work session id (default: the active one).
    id: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct CloseArgs {
    /// Work session id (default: the active one).
    id: Option<String>,
    /// Context summary to keep (default: composed from milestones, artifacts and notes).
    #[arg(long)]
    summary: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only active and paused sessions.
    #[arg(long, conflicts_with = "archived")]
    active: bool,
    /// Only closed (archived) sessions.
    #[arg(long)]
    archived: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SwitchArgs {
    /// The work session to make active.
    id: String,
}

/// Names the session a recording command changes.
#[derive(Debug, Args)]
pub(crate) struct SessionArg {
    /// Work session to change (default: the active one).
    #[arg(long, value_name = "ID", global = true)]
    session: Option<String>,
}

/// One of the two amounts is required; the group makes clap's error name
/// both flags rather than only the first.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("amount").required(true).args(["current", "add", "from_transcript"])))]
pub(crate) struct UsageArgs {
    /// The main session now uses N tokens.
    #[arg(long, value_name = "N")]
    current: Option<u64>,
    /// The main session used N more tokens.
    #[arg(long, value_name = "N")]
    add: Option<u64>,
    /// Current and peak as measured in this transcript (an imported agent
    /// log): the context size at its last call and the largest it reached.
    #[arg(long, value_name = "ID")]
    from_transcript: Option<String>,
    #[command(flatten)]
    session: SessionArg,
}

#[derive(Debug, Subcommand)]
pub(crate) enum MilestoneCommand {
    /// Add a milestone that is not done yet.
    Add {
        name: String,
        #[command(flatten)]
        session: SessionArg,
    },
    /// Mark an open milestone done (its name exactly as added).
    Done {
        name: String,
        #[command(flatten)]
        session: SessionArg,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ArtifactCommand {
    /// Record a file produced during the session.
    Add {
        path: String,
        /// Agent that produced it.
        #[arg(long)]
        agent: Option<String>,
        #[command(flatten)]
        session: SessionArg,
    },
}

#[derive(Debug, Args)]
pub(crate) struct NoteArgs {
    text: String,
    #[command(flatten)]
    session: SessionArg,
}

#[derive(Debug, Subcommand)]
pub(crate) enum AgentCommand {
    /// Record a spawned agent; prints its id.
    Spawn {
        /// Agent type (analyst, architect, …).
        #[arg(value_name = "TYPE")]
        agent_type: String,
        /// Agent id (default: agent-xxxxxxxx).
        #[arg(long)]
        id: Option<String>,
        /// Where the agent will write its output.
        #[arg(long)]
        output: Option<String>,
        #[command(flatten)]
        session: SessionArg,
    },
    /// Record that an agent finished and the tokens it used.
    Done {
        /// The id `agent spawn` printed.
        id: String,
        /// Tokens the agent used in its own context.
        #[arg(
            long,
            value_name = "N",
            required_unless_present = "transcript",
            conflicts_with = "transcript"
        )]
        tokens: Option<u64>,
        /// Take the tokens from the agent's transcript (the largest context
        /// it reached, as measured in its imported log).
        #[arg(long, value_name = "ID")]
        transcript: Option<String>,
        /// Its output file.
        #[arg(long)]
        output: Option<String>,
        /// How it ended: completed or failed.
        #[arg(long, default_value = "completed")]
        status: AgentOutcome,
        #[command(flatten)]
        session: SessionArg,
    },
}

fn indicator_text(style: Style, ind: Indicator) -> String {
    match ind {
        Indicator::Active => style.green(ind.emoji()),
        Indicator::Warning => style.yellow(ind.emoji()),
        Indicator::Critical | Indicator::Blocked => style.red(ind.emoji()),
        _ => ind.emoji().to_string(),
    }
}

fn percent(p: f64) -> String {
    format!("{}%", p.round() as i64)
}

fn bar(p: f64) -> String {
    let filled = ((p / 10.0).round() as i64).clamp(0, 10) as usize;
    format!("[{}{}]", "█".repeat(filled), "░".repeat(10 - filled))
}

fn session_output(s: &WorkSession, human: String) -> Result<Output> {
    Ok(Output::new(s.to_json()?, human))
}

/// Asks a yes/no question on the terminal; `None` without one.
fn ask(question: &str) -> Result<Option<bool>> {
    if !std::io::stdin().is_terminal() {
        return Ok(None);
    }
    let mut err = std::io::stderr().lock();
    write!(err, "{} [y/n] ", crate::printer::render(question))?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(Some(matches!(line.trim(), "y" | "Y" | "yes" | "Yes")))
}

pub(crate) fn start(ctx: &Context, a: &StartArgs) -> Result<Output> {
    let p = &ctx.project;
    let mut close_active = a.yes;
    if !a.yes
        && let Some(active) = ws::active(p)?
        && ws::get(p, Some(&active)).is_ok_and(|s| s.status != SessionStatus::Closed)
    {
        match ask(&format!("Active session found: {active}. Close it first?"))? {
            Some(true) => close_active = true,
            Some(false) => bail!("start cancelled; {active} is still active"),
            None => {} // no terminal: the library refuses with the --yes hint
        }
    }
    let s = ws::start(
        p,
        StartOptions {
            prefix: a.prefix.clone(),
            client: a.client.clone(),
            project: a.project.clone(),
            max_tokens: a.max_tokens,
            max_cost: a.max_cost,
            close_active,
            repository: logbook::ops::work_session::repository_from(p, &ctx.cwd),
        },
    )?;
    let st = ctx.style();
    let human = format!(
        "Started session {} {}\nClient: {}  Project: {}\nToken budget: {}\nFile: {}\n",
        st.bold(&s.session_id),
        indicator_text(st, s.indicator()),
        s.client,
        s.project,
        thousands(s.tokens.max),
        ws::locate(p, Some(&s.session_id))?.1.display()
    );
    session_output(&s, human)
}

pub(crate) fn resume(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let p = &ctx.project;
    if a.id.is_none() && ws::active(p)?.is_none() && ws::paused(p)?.is_empty() {
        if ask("No active session. Start new?")? == Some(true) {
            return start(
                ctx,
                &StartArgs {
                    prefix: None,
                    client: None,
                    project: None,
                    max_tokens: None,
                    max_cost: None,
                    yes: false,
                },
            );
        }
        return Err(logbook::Error::NoActiveSession.into());
    }
    let s = ws::resume(p, a.id.as_deref())?;
    // The work session is resumed whatever happens here: an agent session
    // that cannot be looked up is a warning, not a failed resume.
    let agent = logbook::ops::agent::agent_resume(p, &ctx.cwd).unwrap_or_else(|e| {
        ctx.printer
            .warn(&format!("cannot tell which agent session to resume: {e}"));
        None
    });
    let mut human = format!(
        "Resuming Session: {}\nStatus: {}\nStarted: {}\nMilestones: {}\nArtifacts: {}\nToken Usage: {}/{}\n\nLast Context:\n{}\n",
        ctx.style().bold(&s.session_id),
        s.status.as_str(),
        clock::display(&s.created),
        s.milestones.len(),
        s.artifacts.len(),
        thousands(s.tokens.current),
        thousands(s.tokens.max),
        if s.context_summary.trim().is_empty() {
            "(none yet)"
        } else {
            s.context_summary.trim_end()
        }
    );
    let _ = writeln!(
        human,
        "\n{}",
        logbook::ops::agent::resume_line(agent.as_ref())
    );
    let mut out = session_output(&s, human)?;
    if let serde_json::Value::Object(o) = &mut out.json {
        o.insert(
            "agent_resume".into(),
            logbook::ops::agent::resume_json(agent.as_ref())?,
        );
    }
    Ok(out)
}

pub(crate) fn status(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let s = ws::get(&ctx.project, a.id.as_deref())?;
    let (json, cost) = super::budget::with_cost(ctx, &s)?;
    let ind = super::budget::indicator(&s, &cost);
    let mut human = render_status(ctx.style(), &s, ind, ctx.project.clock.now());
    human.push_str(&super::budget::cost_lines(ctx.style(), &s, &cost));
    Ok(Output::new(json, human))
}

fn render_status(
    st: Style,
    s: &WorkSession,
    ind: Indicator,
    now: logbook::clock::Timestamp,
) -> String {
    let mut out = String::new();
    let pct = s.percentage();
    let _ = writeln!(
        out,
        "Session: {} {}",
        st.bold(&s.session_id),
        indicator_text(st, ind)
    );
    let _ = writeln!(out, "Status: {}", s.status.as_str());
    if let Some(duration) = s.duration(now) {
        let _ = writeln!(out, "Duration: {duration}");
    }
    let _ = writeln!(
        out,
        "Tokens: {}/{} ({})",
        thousands(s.tokens.current),
        thousands(s.tokens.max),
        percent(pct)
    );
    let _ = writeln!(out, "Progress Bar: {} {}", bar(pct), percent(pct));
    if !s.milestones.is_empty() {
        let _ = writeln!(out, "\nMilestones:");
        for m in &s.milestones {
            let mark = if m.completed.is_some() { "x" } else { " " };
            let _ = writeln!(out, "- [{mark}] {}", cell(&m.name));
        }
    }
    if !s.artifacts.is_empty() {
        let _ = writeln!(out, "\nRecent Artifacts:");
        let mut recent: Vec<_> = s
            .artifacts
            .iter()
            .map(|a| match &a.modified {
                Some(m) => (m.as_str(), "modified", a),
                None => (a.created.as_deref().unwrap_or(""), "created", a),
            })
            .collect();
        recent.sort_by(|x, y| y.0.cmp(x.0));
        for (when, verb, a) in recent.into_iter().take(5) {
            match clock::parse(when) {
                Some(t) => {
                    let _ = writeln!(
                        out,
                        "- {} ({verb} {} ago)",
                        cell(&a.path),
                        clock::age(t, now)
                    );
                }
                None => {
                    let _ = writeln!(out, "- {}", cell(&a.path));
                }
            }
        }
    }
    let _ = writeln!(
        out,
        "\nAgents Spawned This Session: {}",
        s.agents_spawned.len()
    );
    let _ = writeln!(
        out,
        "Token Savings from Isolation: {}",
        thousands(s.tokens.saved)
    );
    out
}

pub(crate) fn close(ctx: &Context, a: &CloseArgs) -> Result<Output> {
    let s = ws::close(&ctx.project, a.id.as_deref(), a.summary.clone())?;
    let st = ctx.style();
    let done = s
        .milestones
        .iter()
        .filter(|m| m.completed.is_some())
        .count();
    let duration = s.duration(ctx.project.clock.now()).unwrap_or_default();
    let human = format!(
        "Closed session {} {}\nDuration: {duration}\nMilestones: {done}/{} done\nArtifacts: {}\nAgents spawned: {}\nTokens: {}/{} main, {} saved by isolation\nArchived to: {}\n\nContext Summary:\n{}\n",
        st.bold(&s.session_id),
        Indicator::Closed.emoji(),
        s.milestones.len(),
        s.artifacts.len(),
        s.agents_spawned.len(),
        thousands(s.tokens.current),
        thousands(s.tokens.max),
        thousands(s.tokens.saved),
        ws::locate(&ctx.project, Some(&s.session_id))?.1.display(),
        s.context_summary.trim_end()
    );
    let (json, cost) = super::budget::with_cost(ctx, &s)?;
    let human = human + &super::budget::cost_lines(ctx.style(), &s, &cost);
    Ok(Output::new(json, human))
}

pub(crate) fn list(ctx: &Context, a: &ListArgs) -> Result<Output> {
    let listing = ws::list(&ctx.project)?;
    ctx.warn_skipped(&listing.corrupt);
    let st = ctx.style();
    let now = ctx.project.clock.now();
    let mut out = String::new();
    let show_live = !a.archived;
    let show_archived = !a.active;
    if show_live {
        let _ = writeln!(out, "Active Sessions:");
        if listing.sessions.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for s in &listing.sessions {
            let age = clock::parse(&s.created)
                .map(|c| clock::age(c, now))
                .unwrap_or_default();
            let marker = if listing.active.as_deref() == Some(s.session_id.as_str()) {
                " (active)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {} {} ({age}){}",
                s.session_id,
                indicator_text(st, s.indicator()),
                st.dim(marker)
            );
        }
    }
    if show_archived {
        if show_live {
            out.push('\n');
        }
        let _ = writeln!(out, "Archived Sessions:");
        if listing.archived.is_empty() {
            let _ = writeln!(out, "  (none)");
        }
        for s in &listing.archived {
            let date = clock::display_date(&s.last_updated);
            let _ = writeln!(
                out,
                "  {} {} (closed {date})",
                s.session_id,
                Indicator::Closed.emoji()
            );
        }
    }
    let json = ws::listing_json(&listing, show_live, show_archived)?;
    Ok(Output::new(json, out))
}

pub(crate) fn tokens(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let s = ws::get(&ctx.project, a.id.as_deref())?;
    let r = s.token_report();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Token Usage Report: {}\n",
        ctx.style().bold(&r.session_id)
    );
    let _ = writeln!(out, "Main Session:");
    let _ = writeln!(
        out,
        "  Used: {} / {} ({})",
        thousands(r.current),
        thousands(r.max),
        percent(r.percentage)
    );
    let _ = writeln!(out, "  Remaining: {}", thousands(r.remaining));
    let _ = writeln!(out, "  Peak: {}\n", thousands(r.peak));
    let _ = writeln!(out, "Subprocess Agents:");
    if r.agents.is_empty() {
        let _ = writeln!(out, "  (none)");
    }
    for ag in &r.agents {
        let _ = writeln!(
            out,
            "  {}: {} tokens (isolated)",
            if ag.agent_type.is_empty() {
                &ag.id
            } else {
                &ag.agent_type
            },
            thousands(ag.tokens_used)
        );
    }
    let _ = writeln!(
        out,
        "\nTotal Consumed (if no isolation): {}",
        thousands(r.total_without_isolation)
    );
    let _ = writeln!(out, "Actual Main Session: {}", thousands(r.current));
    let _ = writeln!(
        out,
        "Tokens Saved: {} ({} savings)",
        thousands(r.saved),
        percent(r.savings_percentage)
    );
    let cost = logbook::ops::spend::session_cost(&ctx.project, &s)?;
    out.push_str(&super::budget::cost_lines(ctx.style(), &s, &cost));
    let json = logbook::ops::spend::token_report_json(&ctx.project, &s)?;
    Ok(Output::new(json, out))
}

pub(crate) fn savings(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let s = ws::get(&ctx.project, a.id.as_deref())?;
    let r = s.token_report();
    let st = ctx.style();
    let mut out = String::new();
    let _ = writeln!(out, "Token Isolation Savings\n");
    let _ = writeln!(out, "Without Isolation:");
    let _ = writeln!(
        out,
        "  All agent work in main context: {} tokens",
        thousands(r.total_without_isolation)
    );
    if r.exceeds_limit_by > 0 {
        let _ = writeln!(
            out,
            "  Would exceed limit by: {} tokens",
            thousands(r.exceeds_limit_by)
        );
    } else {
        let _ = writeln!(
            out,
            "  Within limit, {} tokens to spare",
            thousands(r.max - r.total_without_isolation)
        );
    }
    let _ = writeln!(out, "\nWith Isolation:");
    let _ = writeln!(out, "  Main session: {} tokens", thousands(r.current));
    let _ = writeln!(
        out,
        "  Agents in subprocesses: {} tokens (not counted)",
        thousands(r.saved)
    );
    let _ = writeln!(
        out,
        "\nSavings: {} tokens ({})",
        thousands(r.saved),
        percent(r.savings_percentage)
    );
    let status = if r.current > r.max {
        format!("{} Over budget", st.red(Indicator::Critical.emoji()))
    } else {
        match r.indicator {
            Indicator::Critical => format!("{} Critical: over 95% of budget", st.red("🔴")),
            Indicator::Warning => format!("{} At risk: over 80% of budget", st.yellow("🟡")),
            _ => format!("{} Within budget", st.green("🟢")),
        }
    };
    let _ = writeln!(out, "Status: {status}");
    Ok(Output::new(serde_json::to_value(&r)?, out))
}

/// Switches and restores the context of the session switched to (the
/// seed's step 3): what it recorded, decided and left to do.
pub(crate) fn switch(ctx: &Context, a: &SwitchArgs) -> Result<Output> {
    let s = ws::switch(&ctx.project, &a.id)?;
    let context = ws::context(&ctx.project, &s)?;
    let mut human = format!(
        "Switched to {} {}\nTokens: {}/{} ({})\n\nContext:\n{}",
        ctx.style().bold(&s.session_id),
        indicator_text(ctx.style(), s.indicator()),
        thousands(s.tokens.current),
        thousands(s.tokens.max),
        percent(s.percentage()),
        context
    );
    if !s.context_summary.trim().is_empty() {
        let _ = write!(human, "\nLast Context:\n{}\n", s.context_summary.trim_end());
    }
    Ok(Output::new(ws::switched_json(&s, &context)?, human))
}

pub(crate) fn pause(ctx: &Context, a: &IdArgs) -> Result<Output> {
    let s = ws::pause(&ctx.project, a.id.as_deref())?;
    let human = format!("Paused {} {}\n", s.session_id, Indicator::Paused.emoji());
    session_output(&s, human)
}

pub(crate) fn usage(ctx: &Context, a: &UsageArgs) -> Result<Output> {
    let session = a.session.session.as_deref();
    let (s, measured) = match (a.current, a.add, &a.from_transcript) {
        (Some(n), _, _) => (
            ws::record_usage(&ctx.project, session, Usage::Current(n))?,
            None,
        ),
        (None, Some(n), _) => (
            ws::record_usage(&ctx.project, session, Usage::Add(n))?,
            None,
        ),
        (None, None, Some(t)) => {
            let (s, m) = ws::record_measured_usage(&ctx.project, session, t)?;
            (s, Some(m))
        }
        (None, None, None) => bail!(
            "{}",
            worded(
                Next::say("give ")
                    .option("current")
                    .text(" N, ")
                    .option("add")
                    .text(" N or ")
                    .option("from_transcript")
                    .text(" ID")
            )
        ),
    };
    let from = measured
        .as_ref()
        .map(|m| format!("Measured in transcript {}\n", m.id))
        .unwrap_or_default();
    let human = format!(
        "{from}{}: {}/{} tokens ({}), peak {} {}\n",
        s.session_id,
        thousands(s.tokens.current),
        thousands(s.tokens.max),
        percent(s.percentage()),
        thousands(s.tokens.peak),
        indicator_text(ctx.style(), s.indicator())
    );
    session_output(&s, human)
}

pub(crate) fn milestone(ctx: &Context, c: &MilestoneCommand) -> Result<Output> {
    let (s, human) = match c {
        MilestoneCommand::Add { name, session } => (
            ws::add_milestone(&ctx.project, session.session.as_deref(), name)?,
            format!("- [ ] {}\n", cell(name)),
        ),
        MilestoneCommand::Done { name, session } => (
            ws::complete_milestone(&ctx.project, session.session.as_deref(), name)?,
            format!("- [x] {}\n", cell(name)),
        ),
    };
    session_output(&s, human)
}

pub(crate) fn artifact(ctx: &Context, c: &ArtifactCommand) -> Result<Output> {
    let ArtifactCommand::Add {
        path,
        agent,
        session,
    } = c;
    let s = ws::add_artifact(
        &ctx.project,
        session.session.as_deref(),
        path,
        agent.as_deref(),
    )?;
    session_output(&s, format!("Recorded artifact {path}\n"))
}

pub(crate) fn note(ctx: &Context, a: &NoteArgs) -> Result<Output> {
    let s = ws::add_note(&ctx.project, a.session.session.as_deref(), &a.text)?;
    session_output(&s, format!("Noted in {}\n", s.session_id))
}

pub(crate) fn agent(ctx: &Context, c: &AgentCommand) -> Result<Output> {
    match c {
        AgentCommand::Spawn {
            agent_type,
            id,
            output,
            session,
        } => {
            let (_, agent_id) = ws::spawn_agent(
                &ctx.project,
                session.session.as_deref(),
                agent_type,
                id.as_deref(),
                output.as_deref(),
            )?;
            Ok(Output::new(
                // Exactly the shape docs/interface.md promises: scripts compare it whole.
                ws::spawned_json(&agent_id),
                format!("{agent_id}\n"),
            ))
        }
        AgentCommand::Done {
            id,
            tokens,
            transcript,
            output,
            status,
            session,
        } => {
            let outcome = status.clone();
            let (s, tokens, from) = match (tokens, transcript) {
                (Some(n), _) => (
                    ws::finish_agent(
                        &ctx.project,
                        session.session.as_deref(),
                        id,
                        *n,
                        output.as_deref(),
                        outcome,
                    )?,
                    *n,
                    String::new(),
                ),
                (None, Some(t)) => {
                    let (s, m) = ws::finish_agent_measured(
                        &ctx.project,
                        session.session.as_deref(),
                        id,
                        t,
                        output.as_deref(),
                        outcome,
                    )?;
                    (
                        s,
                        m.peak_total_tokens,
                        format!(" (measured in transcript {})", m.id),
                    )
                }
                (None, None) => bail!(
                    "{}",
                    worded(
                        Next::say("give ")
                            .option("tokens")
                            .text(" N or ")
                            .option("transcript")
                            .text(" ID")
                    )
                ),
            };
            let human = format!(
                "Agent {id} done: {} tokens kept out of the main context{from} (session total {})\n",
                thousands(tokens),
                thousands(s.tokens.saved)
            );
            session_output(&s, human)
        }
    }
}

//! `logbook hooks install | uninstall | status`: Logbook's hooks in the
//! settings of Claude Code and Codex (the rules are `logbook::ops::hook::settings`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand, ValueEnum};
use logbook::error::Step;
use logbook::model::hook::settings::{HookAgent, HookScope};
use logbook::ops::hook::settings::{self as ops, HookAction, HookChange, HookStatus};

use super::worded;
use crate::printer::{Output, pad};

#[derive(Debug, Subcommand)]
pub(crate) enum HooksCommand {
    /// Add Logbook's hooks to an agent's settings (by default the project's
    /// personal file: Claude Code's .claude/settings.local.json, Codex's
    /// .codex/hooks.json), keeping everything else in it.
    Install(ChangeArgs),
    /// Remove Logbook's hooks, and only them, from an agent's settings.
    Uninstall(ChangeArgs),
    /// Which settings files hold Logbook's hooks, and whether the `logbook`
    /// they run still exists.
    Status(StatusArgs),
}

/// The agents, as the command line names them.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum AgentArg {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
}

impl From<AgentArg> for HookAgent {
    fn from(a: AgentArg) -> Self {
        match a {
            AgentArg::ClaudeCode => HookAgent::ClaudeCode,
            AgentArg::Codex => HookAgent::Codex,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ChangeArgs {
    /// The agent whose settings to change.
    agent: AgentArg,
    /// The user's settings (~/.claude/settings.json or $CLAUDE_CONFIG_DIR;
    /// ~/.codex/hooks.json or $CODEX_HOME) instead of the project's.
    #[arg(long, conflicts_with = "shared")]
    user: bool,
    /// The project's committed settings (Claude Code's .claude/settings.json);
    /// the command runs `logbook` from PATH and is silent where it is missing.
    #[arg(long)]
    shared: bool,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also set Claude Code's statusLine to `logbook statusline`, when none is set.
    #[arg(long)]
    statusline: bool,
}

impl ChangeArgs {
    fn scope(&self) -> HookScope {
        if self.user {
            HookScope::User
        } else if self.shared {
            HookScope::Shared
        } else {
            HookScope::Local
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Only this agent's settings files.
    agent: Option<AgentArg>,
}

/// Runs a `hooks` command for the project at `root` (see
/// `logbook::store::agent_settings::project_root`).
pub(crate) fn run(root: &Path, cmd: &HooksCommand) -> Result<Output> {
    match cmd {
        HooksCommand::Install(a) => {
            let invoked = std::env::args_os()
                .next()
                .zip(std::env::current_dir().ok())
                .and_then(|(argv0, cwd)| ops::invoked_program(&argv0, &cwd));
            let exe = match invoked {
                Some(exe) => exe,
                None => {
                    std::env::current_exe().context("cannot tell where the running logbook is")?
                }
            };
            let change = ops::install(root, a.agent.into(), a.scope(), &exe, a.dry_run)?;
            let added = ops::install_extras(
                root,
                a.agent.into(),
                a.scope(),
                &exe,
                a.dry_run,
                a.statusline,
            )?;
            let mut out = change_output(&change)?;
            if !added.is_empty() && !a.dry_run {
                out.human
                    .push_str(&format!("Also set: {}\n", added.join(", ")));
            }
            Ok(out)
        }
        HooksCommand::Uninstall(a) => {
            let change = ops::uninstall(root, a.agent.into(), a.scope(), a.dry_run)?;
            change_output(&change)
        }
        HooksCommand::Status(a) => {
            let rows = ops::status(root, a.agent.map(Into::into));
            Ok(Output::new(
                serde_json::to_value(&rows)?,
                status_text(&rows),
            ))
        }
    }
}

fn agent_title(agent: &str) -> &str {
    match agent {
        "claude-code" => "Claude Code",
        "codex" => "Codex",
        other => other,
    }
}

fn change_output(c: &HookChange) -> Result<Output> {
    let file = c.file.display();
    let agent = agent_title(c.agent);
    let diff = c
        .preview
        .as_ref()
        .map(|p| unified_diff(&c.file, &p.before, &p.after));
    let mut out = String::new();
    if let Some(diff) = &diff {
        out.push_str(diff);
    }
    let events = c.events.join(", ");
    let line = match (c.action, c.dry_run) {
        (HookAction::Installed, false) => {
            format!("Installed Logbook's hooks for {agent} in {file} ({events})")
        }
        (HookAction::Installed, true) => {
            format!("Would install Logbook's hooks for {agent} in {file} ({events})")
        }
        (HookAction::Updated, false) => {
            format!("Updated Logbook's hooks for {agent} in {file} ({events})")
        }
        (HookAction::Updated, true) => {
            format!("Would update Logbook's hooks for {agent} in {file} ({events})")
        }
        (HookAction::Removed, false) => {
            format!("Removed Logbook's hooks ({events}) from {file}")
        }
        (HookAction::Removed, true) => {
            format!("Would remove Logbook's hooks ({events}) from {file}")
        }
        (HookAction::AlreadyInstalled, _) => {
            format!("Logbook's hooks for {agent} are already installed in {file}; nothing changed")
        }
        (HookAction::NotInstalled, _) => format!("No Logbook hooks in {file}; nothing changed"),
    };
    let _ = writeln!(out, "{line}");
    if let Some(command) = c.command.as_deref().filter(|_| c.changed) {
        let _ = writeln!(out, "  command: {command}");
    }
    if let Some(backup) = &c.backup {
        let _ = writeln!(out, "  previous file saved as {}", backup.display());
    }
    for other in &c.also_in {
        let _ = writeln!(
            out,
            "  note: {} has Logbook's hooks too, and {agent} runs both; {} with that file's scope removes them",
            other.display(),
            worded(Step::UninstallHooks)
        );
    }
    if c.dry_run {
        let _ = writeln!(out, "(dry run: nothing written)");
    }
    Ok(Output::new(change_json(c, diff)?, out))
}

/// The report as JSON with the diff rendered here (null unless a dry run)
/// under `diff`, just before `also_in`, where the report has always had
/// it: scripts reading `--json` see the same output since the library left
/// the diff to its faces.
fn change_json(c: &HookChange, diff: Option<String>) -> Result<serde_json::Value> {
    let serde_json::Value::Object(fields) = serde_json::to_value(c)? else {
        anyhow::bail!("a hook change did not serialise as an object");
    };
    let mut diff = Some(diff.map_or(serde_json::Value::Null, serde_json::Value::String));
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        if key == "also_in"
            && let Some(d) = diff.take()
        {
            out.insert("diff".to_string(), d);
        }
        out.insert(key, value);
    }
    if let Some(d) = diff {
        out.insert("diff".to_string(), d);
    }
    Ok(serde_json::Value::Object(out))
}

/// `old` → `new` as a unified diff whose headers name `path`; empty when
/// they are equal.
fn unified_diff(path: &Path, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let name = path.display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{name} (before)"), &format!("{name} (after)"))
        .to_string()
}

fn status_text(rows: &[HookStatus]) -> String {
    let mut out = String::new();
    for r in rows {
        let file = r
            .file
            .as_ref()
            .map_or_else(|| "?".to_string(), |f| f.display().to_string());
        let state = if let Some(e) = &r.error {
            format!("error: {e}")
        } else if r.events.is_empty() {
            if r.exists {
                "not installed".to_string()
            } else {
                "not installed (no file)".to_string()
            }
        } else {
            let mut s = if r.installed {
                format!("installed ({})", r.events.join(", "))
            } else {
                format!(
                    "partly installed ({}; missing {})",
                    r.events.join(", "),
                    r.missing_events.join(", ")
                )
            };
            if let Some(program) = &r.program {
                let there = if r.program_exists == Some(true) {
                    "exists".to_string()
                } else {
                    let install = Step::InstallHooks {
                        agent: r.agent.to_string(),
                    };
                    format!("MISSING: run {} again", worded(install))
                };
                let _ = write!(s, " -> {program} ({there})");
            }
            s
        };
        let _ = writeln!(
            out,
            "{} {} {file}\n    {state}",
            pad(agent_title(r.agent), 12),
            pad(r.scope, 8)
        );
    }
    out
}

//! What one coding agent hands the next: the command that resumes an
//! imported agent session in the agent that wrote it ([`AgentResume`]),
//! and a handover composed from that session ([`Handoff`]) for the *other*
//! agent to start from: the goal, files changed, commands run and failed,
//! open milestones, pending handoffs and the last assistant message.
//!
//! Pure: [`Handoff::compose`] reads a transcript's messages (through
//! [`tools::pair`]) and [`Handoff::render`] cuts the text to a byte budget,
//! each section its fair share, so one huge section (a thousand commands)
//! cannot crowd out the goal. `ops::agent` finds the session and the work
//! session's state.

use serde::Serialize;

use crate::agent_log::{Format, Source};
use crate::limits::cut_at;
use crate::terminal::{cd_line, cell, shell_word};
use crate::transcript::card;
use crate::transcript::tools::{self, ToolCall};
use crate::transcript::{Message, Transcript};

impl std::str::FromStr for Format {
    type Err = crate::Error;

    fn from_str(s: &str) -> crate::Result<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "claude-code" | "claude" => Ok(Format::ClaudeCode),
            "codex" => Ok(Format::Codex),
            other => Err(crate::Error::invalid(
                "agent",
                other,
                "expected claude-code or codex",
            )),
        }
    }
}

impl Format {
    /// The other of the two agents: whose session a handoff `--to` this one reads.
    pub fn other(self) -> Format {
        match self {
            Format::ClaudeCode => Format::Codex,
            Format::Codex => Format::ClaudeCode,
        }
    }
}

/// How to resume an agent session in the agent that wrote it: what `resume`
/// and `transcript resume` print, and `agent_resume` over MCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentResume {
    /// `claude-code` or `codex`.
    pub agent: Format,
    /// The agent's own session id (a subagent's is its main session's).
    pub session_id: String,
    /// `claude --resume ID` or `codex resume ID`.
    pub command: String,
    /// The folder to run the command in: the session's workdir.
    pub cwd: String,
    /// The Logbook transcript it was read from.
    pub transcript_id: String,
}

impl AgentResume {
    /// The resume command of transcript `transcript_id`, imported from the
    /// log `source` describes, that ran in `workdir`.
    pub fn of(transcript_id: &str, source: &Source, workdir: &str) -> AgentResume {
        let session_id = source
            .session_id
            .clone()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| transcript_id.to_string());
        AgentResume {
            agent: source.format,
            command: resume_command(source.format, &session_id),
            session_id,
            cwd: workdir.to_string(),
            transcript_id: transcript_id.to_string(),
        }
    }

    /// One shell line that resumes it, safe to paste: `cd <cwd> && <command>`.
    pub fn shell_line(&self) -> String {
        if self.cwd.is_empty() {
            return self.command.clone();
        }
        cd_line(&self.cwd, &self.command)
    }
}

/// The command that resumes `session_id` in `agent`.
pub fn resume_command(agent: Format, session_id: &str) -> String {
    let id = shell_word(session_id);
    match agent {
        Format::ClaudeCode => format!("claude --resume {id}"),
        Format::Codex => format!("codex resume {id}"),
    }
}

/// A shell command the session ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandRun {
    /// The command line.
    pub command: String,
    /// Whether it failed (an error result, or a non-zero exit code).
    pub failed: bool,
    /// Its exit code, when the result says it.
    pub exit_code: Option<i64>,
}

/// A workflow handoff not yet taken up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingHandoff {
    /// Who hands over.
    pub from: String,
    /// Who takes over.
    pub to: String,
    /// Why.
    pub reason: String,
    /// What the next agent needs to know.
    pub context: String,
}

/// The most files a [`Handoff`] lists (the first ones changed).
pub const MAX_FILES: usize = 200;
/// The most commands a [`Handoff`] lists (the last ones run).
pub const MAX_COMMANDS: usize = 100;

/// A handover from one agent's session to the other agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Handoff {
    /// The agent that wrote the session.
    pub from: Format,
    /// The agent it is for.
    pub to: Format,
    /// How to resume the session itself, in the agent that wrote it.
    pub resume: AgentResume,
    /// When the session was last active.
    pub last_active_at: String,
    /// The first thing the user asked.
    pub goal: Option<String>,
    /// Files the session changed, in the order first changed, each once
    /// (relative to its workdir when inside it).
    pub files_changed: Vec<String>,
    /// How many more files changed than are listed.
    pub files_omitted: usize,
    /// The shell commands it ran, in order (the last [`MAX_COMMANDS`]).
    pub commands: Vec<CommandRun>,
    /// How many earlier commands are not listed.
    pub commands_omitted: usize,
    /// The active work session, if any.
    pub work_session: Option<String>,
    /// Its milestones not yet done.
    pub open_milestones: Vec<String>,
    /// Its workflow's handoffs not yet taken up.
    pub pending_handoffs: Vec<PendingHandoff>,
    /// The last thing the agent said.
    pub last_assistant_message: Option<String>,
}

impl Handoff {
    /// The handover to `to` from `t`, the session `resume` resumes; the
    /// work session's part is left empty for the caller to fill.
    pub fn compose(to: Format, resume: AgentResume, t: &Transcript) -> Handoff {
        let pairing = tools::pair(&t.messages);
        let workdir = t.metadata.workdir.as_str();
        let mut files = files_changed(&pairing.calls, workdir);
        let files_omitted = files.len().saturating_sub(MAX_FILES);
        files.truncate(MAX_FILES);
        let mut commands = commands(&pairing.calls);
        let commands_omitted = commands.len().saturating_sub(MAX_COMMANDS);
        commands.drain(..commands_omitted);
        Handoff {
            from: resume.agent,
            to,
            resume,
            last_active_at: t.metadata.last_active_at.clone(),
            goal: goal(&t.messages),
            files_changed: files,
            files_omitted,
            commands,
            commands_omitted,
            work_session: None,
            open_milestones: vec![],
            pending_handoffs: vec![],
            last_assistant_message: last_said(&t.messages, "assistant"),
        }
    }

    /// The handover as text of at most `max_bytes` bytes: a heading that
    /// says whose session it is and how to resume it, then each section
    /// that has anything. When it does not fit, every section gets an equal
    /// share of what is left (a section that needs less gives the rest
    /// back), long items are cut with "…", and a list says how many items
    /// it left out (of commands, the earliest).
    pub fn render(&self, max_bytes: usize) -> String {
        let mut head = format!(
            "# Handoff from {} to {}\nThe latest {} session ({}) in {}, last active {}. It resumes there with: {}\n",
            self.from.as_str(),
            self.to.as_str(),
            self.from.as_str(),
            cell(&self.resume.session_id),
            if self.resume.cwd.is_empty() {
                "?".into()
            } else {
                cell(&self.resume.cwd)
            },
            if self.last_active_at.is_empty() {
                "?"
            } else {
                &self.last_active_at
            },
            self.resume.shell_line(),
        );
        if let Some(ws) = &self.work_session {
            head.push_str(&format!("Work session: {ws}\n"));
        }
        let head = cut(&head, max_bytes);
        let failed: Vec<String> = self
            .commands
            .iter()
            .filter(|c| c.failed)
            .map(command_item)
            .collect();
        let run: Vec<String> = self.commands.iter().map(command_item).collect();
        let handoffs: Vec<String> = self
            .pending_handoffs
            .iter()
            .map(|h| {
                let mut s = format!("{} -> {}: {}", h.from, h.to, h.reason.trim());
                if !h.context.trim().is_empty() {
                    s.push_str(&format!(" (context: {})", h.context.trim()));
                }
                s
            })
            .collect();
        let sections = [
            Section::text("Goal", self.goal.as_deref()),
            Section::list(
                "Files changed",
                &self.files_changed,
                self.files_omitted,
                false,
            ),
            Section::list("Commands that failed", &failed, 0, true),
            Section::list("Commands run", &run, self.commands_omitted, true),
            Section::list("Open milestones", &self.open_milestones, 0, false),
            Section::list("Pending handoffs", &handoffs, 0, false),
            Section::text(
                "Last assistant message",
                self.last_assistant_message.as_deref(),
            ),
        ];
        let sections: Vec<Section> = sections.into_iter().flatten().collect();
        let budget = max_bytes.saturating_sub(head.len());
        let shares = fair_shares(
            &sections.iter().map(Section::full_len).collect::<Vec<_>>(),
            budget,
        );
        let mut out = head;
        for (s, share) in sections.iter().zip(shares) {
            out.push_str(&s.render(share));
        }
        // The shares add up to the budget; this only guards the arithmetic.
        cut_at(&out, max_bytes).to_string()
    }
}

/// The longest one list item is shown, so a long command line or reason
/// leaves room for the others.
const ITEM_MAX: usize = 300;

/// The least of an item worth showing cut: less says nothing.
const MIN_ITEM: usize = 12;

/// One section of a rendered handoff.
struct Section<'a> {
    title: &'a str,
    body: Body<'a>,
}

enum Body<'a> {
    Text(&'a str),
    /// Items, how many were left out before rendering, and whether the
    /// last items matter most (dropped from the front when cut).
    List(Vec<String>, usize, bool),
}

impl<'a> Section<'a> {
    fn text(title: &'a str, text: Option<&'a str>) -> Option<Section<'a>> {
        let text = text.map(str::trim).filter(|t| !t.is_empty())?;
        Some(Section {
            title,
            body: Body::Text(text),
        })
    }

    fn list(
        title: &'a str,
        items: &[String],
        omitted: usize,
        latest_first: bool,
    ) -> Option<Section<'a>> {
        (!items.is_empty()).then(|| Section {
            title,
            body: Body::List(
                // One line each, so no item (a path, a reason) can
                // add an item or a heading of its own.
                items
                    .iter()
                    .map(|i| cut(&cell(i.trim()), ITEM_MAX))
                    .collect(),
                omitted,
                latest_first,
            ),
        })
    }

    fn heading(&self) -> String {
        match &self.body {
            Body::Text(_) => format!("\n## {}\n", self.title),
            Body::List(items, omitted, _) => {
                format!("\n## {} ({})\n", self.title, items.len() + omitted)
            }
        }
    }

    fn full_len(&self) -> usize {
        self.heading().len()
            + match &self.body {
                Body::Text(t) => t.len() + 1,
                Body::List(items, omitted, _) => {
                    items.iter().map(|i| i.len() + 3).sum::<usize>()
                        + if *omitted > 0 {
                            more(*omitted).len()
                        } else {
                            0
                        }
                }
            }
    }

    /// The section in at most `share` bytes; nothing when even its heading
    /// does not fit.
    fn render(&self, share: usize) -> String {
        let heading = self.heading();
        if heading.len() >= share {
            return String::new();
        }
        let room = share - heading.len();
        let mut out = heading;
        match &self.body {
            Body::Text(t) => {
                out.push_str(&cut(t, room.saturating_sub(1)));
                out.push('\n');
            }
            Body::List(items, omitted, latest_first) => {
                let lines: Vec<String> = items.iter().map(|i| format!("- {i}\n")).collect();
                let mut kept: Vec<&str> = vec![];
                let mut used = 0;
                let order: Box<dyn Iterator<Item = &String>> = if *latest_first {
                    Box::new(lines.iter().rev())
                } else {
                    Box::new(lines.iter())
                };
                for (n, line) in order.enumerate() {
                    let left = lines.len() - n - 1 + omitted;
                    let tail = if left > 0 { more(left).len() } else { 0 };
                    if used + line.len() + tail > room {
                        break;
                    }
                    used += line.len();
                    kept.push(line);
                }
                if kept.is_empty() {
                    // Not even one whole item fits: the start of one, when
                    // enough of it to read does (the heading gives the count).
                    let first = if *latest_first {
                        lines.last()
                    } else {
                        lines.first()
                    };
                    let line = cut(first.map_or("", |l| l.trim_end()), room.saturating_sub(1));
                    if line.len() >= MIN_ITEM {
                        out.push_str(&line);
                        out.push('\n');
                    }
                    return out;
                }
                let left = lines.len() - kept.len() + omitted;
                if *latest_first {
                    if left > 0 {
                        out.push_str(&more(left));
                    }
                    kept.reverse();
                    kept.iter().for_each(|l| out.push_str(l));
                } else {
                    kept.iter().for_each(|l| out.push_str(l));
                    if left > 0 {
                        out.push_str(&more(left));
                    }
                }
            }
        }
        out
    }
}

fn more(n: usize) -> String {
    format!("- … {n} more not shown\n")
}

/// Splits `budget` between sections needing `sizes` bytes: each gets an
/// equal share of what is left, and one that needs less than its share
/// gives the rest back to those still waiting.
fn fair_shares(sizes: &[usize], budget: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let mut shares = vec![0; sizes.len()];
    let mut left = budget;
    for (n, &i) in order.iter().enumerate() {
        let share = left / (sizes.len() - n);
        shares[i] = sizes[i].min(share);
        left -= shares[i];
    }
    shares
}

/// `text` in at most `max` bytes, ending with "…" when cut.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let ell = "…";
    if max < ell.len() {
        return String::new();
    }
    format!("{}{ell}", cut_at(text, max - ell.len()))
}

fn command_item(c: &CommandRun) -> String {
    let one_line = c.command.split_whitespace().collect::<Vec<_>>().join(" ");
    match (c.failed, c.exit_code) {
        (true, Some(code)) => format!("`{one_line}` (exit {code})"),
        (true, None) => format!("`{one_line}` (failed)"),
        _ => format!("`{one_line}`"),
    }
}

/// The first user prompt: the first user text that is not what the agent
/// itself put in the user's turn (Codex's `<environment_context>` and
/// AGENTS.md instructions, Claude Code's `<command-name>` lines).
pub fn goal(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .filter(|m| m.role == "user")
        .filter_map(said)
        .find(|t| !t.starts_with('<') && !t.starts_with("# AGENTS.md"))
}

/// The last message of `role` that says something, its text blocks joined.
fn last_said(messages: &[Message], role: &str) -> Option<String> {
    messages
        .iter()
        .rev()
        .filter(|m| m.role == role)
        .find_map(said)
}

/// A message's text blocks, line breaks kept; `None` when it has none.
fn said(m: &Message) -> Option<String> {
    let parts: Vec<&str> = m
        .text_blocks()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// Claude Code's tools that write a file, and the parameter naming it.
const CLAUDE_FILE_TOOLS: &[(&str, &str)] = &[
    ("Edit", "file_path"),
    ("Write", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// The files the calls changed, each once, in the order first changed: a
/// Claude Code edit's path, or the paths of a Codex patch's headers. A call
/// that failed changed nothing.
pub fn files_changed(calls: &[ToolCall], workdir: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut add = |path: &str| {
        let path = path.trim();
        if path.is_empty() {
            return;
        }
        let rel = relative(path, workdir);
        if !out.iter().any(|p| p == rel) {
            out.push(rel.to_string());
        }
    };
    for c in calls.iter().filter(|c| !c.failed()) {
        if let Some((_, key)) = CLAUDE_FILE_TOOLS.iter().find(|(n, _)| *n == c.name) {
            if let Some(p) = c.param(key).or_else(|| c.param("file_path")) {
                add(p);
            }
            continue;
        }
        if let Some(patch) = c.patch() {
            for p in card::patch_paths(patch) {
                add(&p);
            }
        }
    }
    out
}

fn relative<'a>(path: &'a str, workdir: &str) -> &'a str {
    let root = workdir.trim_end_matches('/');
    match path.strip_prefix(root) {
        Some(rest) if !root.is_empty() && rest.starts_with('/') => &rest[1..],
        _ => path,
    }
}

/// The shell commands the calls ran, in order (a Codex shell call that
/// applies a patch is a file change, not a command).
pub fn commands(calls: &[ToolCall]) -> Vec<CommandRun> {
    calls
        .iter()
        .filter(|c| c.is_shell() && c.patch().is_none())
        .filter_map(|c| {
            let command = c.command()?;
            let result = c.result.as_ref();
            Some(CommandRun {
                command,
                failed: c.failed(),
                exit_code: result.and_then(|r| r.exit_code),
            })
        })
        .filter(|c| !c.command.trim().is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn transcript(messages: Value) -> Transcript {
        serde_json::from_value(json!({
            "id": "11111111-2222-4333-8444-555566667777",
            "messages": messages,
            "metadata": {"workdir": "/w", "lastActiveAt": "2026-01-18T10:00:00Z"}
        }))
        .unwrap()
    }

    fn resume(agent: Format) -> AgentResume {
        AgentResume {
            agent,
            session_id: "s-1".into(),
            command: resume_command(agent, "s-1"),
            cwd: "/w".into(),
            transcript_id: "t".into(),
        }
    }

    #[test]
    fn claude_edits_and_failed_commands() {
        let t = transcript(json!([
            {"role": "user", "blocks": [{"type": "text", "content": "<command-name>/clear</command-name>"}]},
            {"role": "user", "blocks": [{"type": "text", "content": "Fix the parser"}]},
            {"role": "assistant", "blocks": [
                {"type": "tool", "id": "1", "name": "Edit", "parameters": "{\"file_path\":\"/w/src/a.rs\"}"},
                {"type": "tool", "id": "2", "name": "Bash", "parameters": "{\"command\":\"cargo test\"}"},
                {"type": "tool", "id": "3", "name": "Write", "parameters": "{\"file_path\":\"/elsewhere/b.rs\"}"},
                {"type": "tool", "id": "4", "name": "Edit", "parameters": "{\"file_path\":\"/w/src/a.rs\"}"},
                {"type": "tool", "id": "5", "name": "Edit", "parameters": "{\"file_path\":\"/w/nope.rs\"}"}
            ]},
            {"role": "user", "blocks": [
                {"type": "tool_result", "toolUseId": "2", "result": "failed", "isError": true},
                {"type": "tool_result", "toolUseId": "5", "result": "no match", "isError": true}
            ]},
            {"role": "assistant", "blocks": [{"type": "text", "content": "Tests fail in a.rs"}]}
        ]));
        let h = Handoff::compose(Format::Codex, resume(Format::ClaudeCode), &t);
        assert_eq!(h.goal.as_deref(), Some("Fix the parser"));
        assert_eq!(h.files_changed, ["src/a.rs", "/elsewhere/b.rs"]);
        assert_eq!(h.commands.len(), 1);
        assert!(h.commands[0].failed);
        assert_eq!(
            h.last_assistant_message.as_deref(),
            Some("Tests fail in a.rs")
        );
        let text = h.render(8192);
        assert!(
            text.contains("## Commands that failed (1)\n- `cargo test` (failed)"),
            "{text}"
        );
        assert!(text.contains("cd /w && claude --resume s-1"), "{text}");
    }

    #[test]
    fn codex_patches_and_exit_codes() {
        let patch = "*** Begin Patch\n*** Add File: new.rs\n+x\n*** Update File: old.rs\n*** Move to: moved.rs\n*** Delete File: gone.rs\n*** End Patch";
        let t = transcript(json!([
            {"role": "user", "blocks": [{"type": "text", "content": "<environment_context>cwd</environment_context>"}]},
            {"role": "user", "blocks": [{"type": "text", "content": "Port it"}]},
            {"role": "assistant", "blocks": [{"type": "tool", "id": "p", "name": "apply_patch", "parameters": patch}]},
            {"role": "assistant", "blocks": [{"type": "tool", "id": "q", "name": "shell", "parameters": json!({"command": ["apply_patch", "*** Update File: via-shell.rs"]}).to_string()}]},
            {"role": "assistant", "blocks": [{"type": "tool", "id": "c", "name": "shell", "parameters": "{\"command\":[\"bash\",\"-lc\",\"cargo build\"]}"}]},
            {"role": "tool", "blocks": [{"type": "tool_result", "toolUseId": "c", "result": "{\"output\":\"e\",\"metadata\":{\"exit_code\":101}}"}]},
            {"role": "assistant", "blocks": [{"type": "tool", "id": "d", "name": "exec_command", "parameters": "{\"cmd\":\"ls\"}"}]},
            {"role": "tool", "blocks": [{"type": "tool_result", "toolUseId": "d", "result": "Exit code: 0\nOutput:\n"}]}
        ]));
        let h = Handoff::compose(Format::ClaudeCode, resume(Format::Codex), &t);
        assert_eq!(h.goal.as_deref(), Some("Port it"));
        assert_eq!(
            h.files_changed,
            ["new.rs", "old.rs", "moved.rs", "gone.rs", "via-shell.rs"]
        );
        let cmds: Vec<_> = h
            .commands
            .iter()
            .map(|c| (c.command.as_str(), c.failed, c.exit_code))
            .collect();
        assert_eq!(
            cmds,
            [("cargo build", true, Some(101)), ("ls", false, Some(0))]
        );
        assert!(h.render(4096).contains("`cargo build` (exit 101)"));
    }

    #[test]
    fn render_is_bounded_and_fair() {
        let many: Vec<Value> = (0..500)
            .map(|i| json!({"type": "tool", "id": format!("{i}"), "name": "Bash", "parameters": json!({"command": format!("echo {i} {}", "x".repeat(i % 700))}).to_string()}))
            .collect();
        let t = transcript(json!([
            {"role": "user", "blocks": [{"type": "text", "content": format!("Goal {}", "g".repeat(20_000))}]},
            {"role": "assistant", "blocks": many},
            {"role": "assistant", "blocks": [{"type": "text", "content": "Done: all green"}]}
        ]));
        let mut h = Handoff::compose(Format::Codex, resume(Format::ClaudeCode), &t);
        h.open_milestones = vec!["ship it".into()];
        for max in [600, 1500, 8192, 50_000] {
            let text = h.render(max);
            assert!(text.len() <= max, "{max}: {}", text.len());
            assert!(text.contains("## Goal\nGoal ggg"), "{max}: {text}");
            assert!(
                text.contains("## Open milestones (1)\n- ship it"),
                "{max}: {text}"
            );
            assert!(text.contains("Done: all green"), "{max}: {text}");
            assert!(text.contains("## Commands run (500)"), "{max}: {text}");
            assert!(!text.contains("\n\n\n"), "{max}: {text}");
            if max >= 1500 {
                assert!(text.contains("more not shown"), "{max}");
            }
        }
        assert!(h.render(8192).contains("echo 499"));
        assert_eq!(h.commands_omitted, 400);
    }

    use proptest::prelude::*;

    fn words() -> impl Strategy<Value = String> {
        prop_oneof![
            ".{0,40}",
            "[é🦀 a-z/*:]{0,400}",
            Just("*** Begin Patch\n*** Add File: é.rs\n*** Move to: ✓\n".to_string()),
        ]
    }

    fn call_message(i: usize, name: &str, text: &str) -> Value {
        let params = match name {
            "apply_patch" => Value::String(text.to_string()),
            "Edit" => Value::String(json!({"file_path": text}).to_string()),
            "exec_command" => Value::String(json!({"cmd": text}).to_string()),
            "shell" => Value::String(json!({"command": ["bash", "-lc", text]}).to_string()),
            _ => Value::String(json!({"command": text}).to_string()),
        };
        json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": i.to_string(), "name": name, "parameters": params}]})
    }

    proptest! {
        /// Whatever the session said and did, composing never panics and
        /// the text never passes its budget, cut between characters.
        #[test]
        fn any_session_renders_within_its_budget(
            calls in prop::collection::vec(
                (
                    prop_oneof![Just("Bash"), Just("Edit"), Just("apply_patch"), Just("shell"), Just("exec_command")],
                    words(),
                    any::<Option<bool>>(),
                ),
                0..40,
            ),
            said in prop::collection::vec(words(), 0..4),
            milestones in prop::collection::vec(words(), 0..5),
            max in 512usize..6000,
        ) {
            let mut messages = vec![];
            for (i, (name, text, err)) in calls.iter().enumerate() {
                messages.push(call_message(i, name, text));
                if let Some(e) = err {
                    messages.push(json!({"role": "user", "blocks": [
                        {"type": "tool_result", "toolUseId": i.to_string(), "result": text, "isError": e}]}));
                }
            }
            for (i, s) in said.iter().enumerate() {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                messages.push(json!({"role": role, "blocks": [{"type": "text", "content": s}]}));
            }
            let t = transcript(Value::Array(messages));
            let mut h = Handoff::compose(Format::Codex, resume(Format::ClaudeCode), &t);
            h.open_milestones = milestones;
            let text = h.render(max);
            prop_assert!(text.len() <= max, "{} > {max}", text.len());
            prop_assert!(text.starts_with("# Handoff from claude-code to codex"));
        }
    }

    #[test]
    fn fair_shares_give_back_what_is_not_needed() {
        assert_eq!(fair_shares(&[10, 1000, 1000], 610), vec![10, 300, 300]);
        assert_eq!(fair_shares(&[10, 20], 1000), vec![10, 20]);
        assert_eq!(fair_shares(&[], 10), Vec::<usize>::new());
    }

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        let r = AgentResume {
            cwd: "/my work/it's".into(),
            ..resume(Format::Codex)
        };
        assert_eq!(r.shell_line(), r"cd '/my work/it'\''s' && codex resume s-1");
        assert_eq!("CODEX".parse::<Format>().unwrap(), Format::Codex);
        assert!("gemini".parse::<Format>().is_err());
    }
}

//! Logbook's entries in the hook settings of Claude Code and Codex: which
//! events they are for, the command they run, how to recognise them among
//! other tools' hooks, and the pure edits that add, update and remove them.
//!
//! Both agents read the same shape (Claude Code's `settings*.json`, Codex's
//! `hooks.json`):
//!
//! ```json
//! {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/usr/bin/logbook hook", "timeout": 10}]}]}}
//! ```
//!
//! A group without `matcher` matches every source and trigger, which is what
//! Logbook wants for each of its events. Both agents read `timeout` in
//! seconds (Codex's `timeout` is its `timeout_sec`).
//!
//! A handler is Logbook's when its command is [`SHARED_COMMAND`], or two
//! shell words of which the first is a program called `logbook` and the
//! second is `hook`. Everything else in the file belongs to someone else and
//! is left as it was, in its order.

use std::path::Path;

use serde_json::{Map, Value};

/// The agents whose hooks Logbook installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookAgent {
    /// Anthropic's Claude Code (`.claude/settings*.json`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`.codex/hooks.json`).
    Codex,
}

impl HookAgent {
    /// Both agents, in the order listings show them.
    pub const ALL: [HookAgent; 2] = [HookAgent::ClaudeCode, HookAgent::Codex];

    /// The name the command line and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "claude-code",
            HookAgent::Codex => "codex",
        }
    }

    /// The events Logbook's hook is installed for. Codex has no SessionEnd
    /// (and, before its compaction hooks, ignores event names it does not
    /// know); its PostCompact is where Claude Code's compaction is followed
    /// by a SessionStart with `source: "compact"`.
    pub fn events(self) -> &'static [&'static str] {
        match self {
            HookAgent::ClaudeCode => &[
                "SessionStart",
                "PreCompact",
                "Stop",
                "SubagentStop",
                "SessionEnd",
            ],
            HookAgent::Codex => &[
                "SessionStart",
                "PreCompact",
                "PostCompact",
                "Stop",
                "SubagentStop",
            ],
        }
    }

    /// What the settings file is called in messages.
    pub fn settings_what(self) -> &'static str {
        match self {
            HookAgent::ClaudeCode => "Claude Code settings file",
            HookAgent::Codex => "Codex hooks file",
        }
    }
}

impl std::str::FromStr for HookAgent {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "claude-code" => Ok(HookAgent::ClaudeCode),
            "codex" => Ok(HookAgent::Codex),
            _ => Err(crate::Error::invalid(
                "agent",
                s,
                "expected claude-code or codex",
            )),
        }
    }
}

/// Which settings file of an agent: the project's own (personal), the
/// project's committed one, or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookScope {
    /// Claude Code's `.claude/settings.local.json`; Codex's `.codex/hooks.json`.
    Local,
    /// Claude Code's `.claude/settings.json`, which teams commit; for Codex
    /// the same `.codex/hooks.json` as [`HookScope::Local`]. The command
    /// tolerates a machine without Logbook.
    Shared,
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR`), `~/.codex/hooks.json`
    /// (or `$CODEX_HOME`).
    User,
}

impl HookScope {
    /// The name the command line and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            HookScope::Local => "local",
            HookScope::Shared => "shared",
            HookScope::User => "user",
        }
    }
}

/// How long an agent lets Logbook's hook run, in seconds. The hook answers
/// within 2 s by design; this is the agent's backstop if it ever does not.
pub const HOOK_TIMEOUT_SECS: u64 = 10;

/// The command of a committed settings file: teammates without Logbook get
/// silence and exit 0, and so does anyone whose Logbook fails, so a shared
/// hook can never stand in an agent's way.
pub const SHARED_COMMAND: &str =
    "sh -c 'command -v logbook >/dev/null 2>&1 || exit 0; logbook hook; exit 0'";

/// The command that runs the `logbook` at `exe` (absolute), quoted for the
/// shell the agent runs it with.
pub fn hook_command(exe: &Path) -> String {
    format!("{} hook", shell_quote(&exe.to_string_lossy()))
}

/// `s` as one shell word: unchanged when it has only characters no shell
/// treats specially, else in single quotes.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The words of a shell command, with quotes and backslashes resolved;
/// `None` for anything this simple reading cannot be sure of (an
/// unterminated quote).
fn shell_words(cmd: &str) -> Option<Vec<String>> {
    let mut words = vec![];
    let mut word: Option<String> = None;
    let mut chars = cmd.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => w.push(chars.next()?),
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// The `logbook` a Logbook hook command runs: the path it names, or
/// `logbook` (found on `PATH`) for [`SHARED_COMMAND`]; `None` when the
/// command is not Logbook's.
pub fn logbook_program(cmd: &str) -> Option<String> {
    if cmd.trim() == SHARED_COMMAND {
        return Some("logbook".into());
    }
    match shell_words(cmd)?.as_slice() {
        [program, hook]
            if hook == "hook"
                && Path::new(program)
                    .file_name()
                    .is_some_and(|n| n == "logbook") =>
        {
            Some(program.clone())
        }
        _ => None,
    }
}

/// Whether a handler object is one Logbook installed.
fn is_logbook_handler(handler: &Value) -> bool {
    handler
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| logbook_program(c).is_some())
}

/// One of Logbook's handlers found in a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundHook {
    /// The event it is listed under.
    pub event: String,
    /// Its command, as written.
    pub command: String,
    /// Whether its group fires for every source of the event (see
    /// [`matches_every_source`]); one behind `"matcher": "compact"` never
    /// runs on startup or resume.
    pub every_source: bool,
}

/// Whether a group of handlers runs for every source or trigger of its
/// event: it has no `matcher`, or one that matches everything (`""`, `"*"`).
pub fn matches_every_source(group: &Value) -> bool {
    match group.get("matcher") {
        None | Some(Value::Null) => true,
        Some(Value::String(m)) => m.is_empty() || m == "*",
        Some(_) => false,
    }
}

/// Why a settings file cannot be edited safely: its top level or its
/// `hooks` is not what both agents read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

/// The JSON type of `v`, in words for an error.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The `hooks` object of a settings file, if it has one of the right shape.
fn hooks_of(settings: &Map<String, Value>) -> Result<Option<&Map<String, Value>>, ShapeError> {
    match settings.get("hooks") {
        None => Ok(None),
        Some(Value::Object(h)) => Ok(Some(h)),
        Some(other) => Err(ShapeError(format!(
            "its \"hooks\" is a JSON {}, not an object",
            json_type(other)
        ))),
    }
}

/// Every Logbook handler in `settings`, in file order.
pub fn find(settings: &Map<String, Value>) -> Result<Vec<FoundHook>, ShapeError> {
    let Some(hooks) = hooks_of(settings)? else {
        return Ok(vec![]);
    };
    let mut found = vec![];
    for (event, groups) in hooks {
        for (every_source, handler) in handlers(groups) {
            if let Some(command) = handler.get("command").and_then(Value::as_str)
                && logbook_program(command).is_some()
            {
                found.push(FoundHook {
                    event: event.clone(),
                    command: command.to_string(),
                    every_source,
                });
            }
        }
    }
    Ok(found)
}

/// The handler objects of an event's list of groups, each with whether its
/// group fires for every source, skipping whatever is not in the shape
/// both agents read (it is not ours to judge).
fn handlers(groups: &Value) -> impl Iterator<Item = (bool, &Value)> {
    groups
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| {
            let list = g.get("hooks").and_then(Value::as_array)?;
            let every = matches_every_source(g);
            Some(list.iter().map(move |h| (every, h)))
        })
        .flatten()
}

/// The handler Logbook writes.
fn handler(command: &str) -> Value {
    serde_json::json!({
        "type": "command",
        "command": command,
        "timeout": HOOK_TIMEOUT_SECS,
    })
}

/// Adds Logbook's handler running `command` to every event of `agent`, or
/// updates the one there in place (another `logbook` path, another
/// timeout); a second copy left by hand is removed. Returns whether
/// anything changed.
pub fn install(
    settings: &mut Map<String, Value>,
    agent: HookAgent,
    command: &str,
) -> Result<bool, ShapeError> {
    let mut changed = false;
    for event in agent.events() {
        changed |= install_event(settings, event, command)?;
    }
    Ok(changed)
}

/// Adds Logbook's handler running `command` to one more `event`: Claude
/// Code's and Codex's `PreToolUse`, installed only under `budget_action:
/// block` (a process per tool call is paid only by who asked for it).
pub fn install_event(
    settings: &mut Map<String, Value>,
    event: &str,
    command: &str,
) -> Result<bool, ShapeError> {
    hooks_of(settings)?;
    let wanted = handler(command);
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(ShapeError("its \"hooks\" is not an object".into()));
    };
    let groups = hooks
        .entry(event.to_string())
        .or_insert_with(|| Value::Array(vec![]));
    let Value::Array(groups) = groups else {
        return Err(ShapeError(format!(
            "its \"hooks\".\"{event}\" is a JSON {}, not an array",
            json_type(groups)
        )));
    };
    Ok(install_in(groups, &wanted))
}

/// Claude Code's status-line command: `logbook statusline`.
pub fn statusline_command(exe: &Path) -> String {
    format!("{} statusline", shell_quote(&exe.to_string_lossy()))
}

/// Sets Claude Code's `statusLine` to run `command`, only when none is set:
/// someone's own status line is never overwritten. Returns whether it was set.
pub fn set_status_line(settings: &mut Map<String, Value>, command: &str) -> bool {
    if settings.get("statusLine").is_some_and(|v| !v.is_null()) {
        return false;
    }
    settings.insert(
        "statusLine".into(),
        serde_json::json!({"type": "command", "command": command}),
    );
    true
}

/// [`install`] for one event's list of groups. Logbook's handler is kept
/// only in a group that fires for every source (see
/// [`matches_every_source`]): one in a group behind a matcher (another
/// tool's `"matcher": "compact"`) would miss the startups and resumes it is
/// there for, so it is moved to a group of Logbook's own, and a group only
/// it emptied goes.
fn install_in(groups: &mut Vec<Value>, wanted: &Value) -> bool {
    let mut changed = false;
    let mut seen = false;
    let mut emptied = vec![];
    for (i, group) in groups.iter_mut().enumerate() {
        let every_source = matches_every_source(group);
        let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
            continue;
        };
        let before = list.len();
        let mut keep = vec![];
        for mut h in std::mem::take(list) {
            if !is_logbook_handler(&h) {
                keep.push(h);
            } else if every_source && !seen {
                seen = true;
                changed |= update_handler(&mut h, wanted);
                keep.push(h);
            }
            // A second Logbook handler for the same event would run the
            // hook twice, and one behind a matcher misses sources: dropped.
        }
        changed |= keep.len() != before;
        if keep.is_empty() && before > 0 {
            emptied.push(i);
        }
        *list = keep;
    }
    for i in emptied.into_iter().rev() {
        groups.remove(i);
    }
    if !seen {
        groups.push(serde_json::json!({ "hooks": [wanted.clone()] }));
        changed = true;
    }
    changed
}

/// Brings an existing Logbook handler to `wanted`, keeping any other key
/// someone added to it.
fn update_handler(h: &mut Value, wanted: &Value) -> bool {
    let (Some(h), Some(wanted)) = (h.as_object_mut(), wanted.as_object()) else {
        return false;
    };
    let mut changed = false;
    for (k, v) in wanted {
        if h.get(k) != Some(v) {
            h.insert(k.clone(), v.clone());
            changed = true;
        }
    }
    changed
}

/// Removes every Logbook handler from `settings`, then the groups, event
/// lists and `hooks` object that removal left empty (a container that was
/// empty before install therefore goes too). Returns whether anything
/// changed.
pub fn uninstall(settings: &mut Map<String, Value>) -> Result<bool, ShapeError> {
    hooks_of(settings)?;
    let Some(Value::Object(hooks)) = settings.get_mut("hooks") else {
        return Ok(false);
    };
    let mut changed = false;
    let mut emptied_events = vec![];
    for (event, groups) in hooks.iter_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        let mut event_changed = false;
        groups.retain_mut(|group| {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let n = list.len();
            list.retain(|h| !is_logbook_handler(h));
            if list.len() == n {
                return true;
            }
            event_changed = true;
            !list.is_empty()
        });
        if event_changed {
            changed = true;
            if groups.is_empty() {
                emptied_events.push(event.clone());
            }
        }
    }
    for event in emptied_events {
        hooks.shift_remove(&event);
    }
    if changed && hooks.is_empty() {
        settings.shift_remove("hooks");
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn recognises_logbook_commands_only() {
        for (cmd, program) in [
            (
                "/usr/local/bin/logbook hook",
                Some("/usr/local/bin/logbook"),
            ),
            ("logbook hook", Some("logbook")),
            (
                "'/home/a b/bin/logbook' hook",
                Some("/home/a b/bin/logbook"),
            ),
            (SHARED_COMMAND, Some("logbook")),
            ("/usr/bin/logbook hooks", None),
            ("/usr/bin/logbook hook --x", None),
            ("/usr/bin/notlogbook hook", None),
            ("echo logbook hook", None),
            ("'unterminated logbook hook", None),
        ] {
            assert_eq!(logbook_program(cmd).as_deref(), program, "{cmd}");
        }
    }

    #[test]
    fn a_quoted_path_reads_back_as_itself() {
        for p in ["/a/logbook", "/it's here/logbook", "/x y/$HOME/logbook"] {
            let cmd = hook_command(Path::new(p));
            assert_eq!(logbook_program(&cmd).as_deref(), Some(p), "{cmd}");
        }
    }

    #[test]
    fn install_adds_updates_in_place_and_is_idempotent() {
        let mut s = obj(json!({
            "model": "x",
            "hooks": {"Stop": [{"matcher": "", "hooks": [
                {"type": "command", "command": "other-tool"},
                {"type": "command", "command": "/old/logbook hook", "timeout": 60, "mine": 1}
            ]}]}
        }));
        assert_eq!(
            install(&mut s, HookAgent::ClaudeCode, "/new/logbook hook"),
            Ok(true)
        );
        let stop = &s["hooks"]["Stop"];
        assert_eq!(stop.as_array().map(Vec::len), Some(1));
        assert_eq!(stop[0]["hooks"][0]["command"], "other-tool");
        assert_eq!(stop[0]["hooks"][1]["command"], "/new/logbook hook");
        assert_eq!(stop[0]["hooks"][1]["timeout"], HOOK_TIMEOUT_SECS);
        assert_eq!(stop[0]["hooks"][1]["mine"], 1);
        let events: Vec<_> = s["hooks"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            events,
            [
                "Stop",
                "SessionStart",
                "PreCompact",
                "SubagentStop",
                "SessionEnd"
            ]
        );
        let before = s.clone();
        assert_eq!(
            install(&mut s, HookAgent::ClaudeCode, "/new/logbook hook"),
            Ok(false)
        );
        assert_eq!(s, before);
    }

    #[test]
    fn a_handler_behind_a_matcher_moves_to_a_group_that_fires_for_every_source() {
        let mut s = obj(json!({"hooks": {"SessionStart": [
            {"matcher": "compact", "hooks": [{"type": "command", "command": "/a/logbook hook"}]},
            {"matcher": "resume", "hooks": [
                {"type": "command", "command": "notify"},
                {"type": "command", "command": "/a/logbook hook"}
            ]}
        ]}}));
        assert_eq!(
            install(&mut s, HookAgent::ClaudeCode, "/a/logbook hook"),
            Ok(true)
        );
        let groups = s["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(groups[0]["matcher"], "resume");
        assert_eq!(groups[0]["hooks"].as_array().map(Vec::len), Some(1));
        assert!(matches_every_source(&groups[1]));
        let found = find(&s).unwrap();
        assert!(found.iter().all(|f| f.every_source), "{found:?}");
    }

    #[test]
    fn uninstall_removes_only_logbook_and_what_it_emptied() {
        let original = obj(
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}, "k": [1]}),
        );
        let mut s = original.clone();
        install(&mut s, HookAgent::Codex, "/b/logbook hook").unwrap();
        assert_eq!(find(&s).unwrap().len(), 5);
        assert_eq!(uninstall(&mut s), Ok(true));
        assert_eq!(s, original);
        assert_eq!(uninstall(&mut s), Ok(false));
    }

    #[test]
    fn shapes_that_cannot_be_edited_are_refused() {
        let mut s = obj(json!({"hooks": []}));
        assert!(install(&mut s, HookAgent::Codex, "logbook hook").is_err());
        assert!(uninstall(&mut s).is_err());
        let mut s = obj(json!({"hooks": {"Stop": {}}}));
        let e = install(&mut s, HookAgent::Codex, "logbook hook").unwrap_err();
        assert!(e.0.contains("\"Stop\""), "{e:?}");
    }
}

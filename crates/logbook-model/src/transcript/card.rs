//! What a reader sees of a tool call: its key input as what it is (a
//! command, a path, a diff, a pattern, a patch) rather than the JSON the
//! agent sent. The viewer lays these out; the rules of which parameter
//! matters for which tool live here, next to the pairing they read.
//!
//! ```
//! use logbook_model::transcript::{Message, card::{self, KeyInput}, tools};
//! let m: Message = serde_json::from_value(serde_json::json!({"role": "assistant", "blocks": [
//!     {"type": "tool", "id": "t", "name": "Bash", "parameters": "{\"command\":\"make\"}"}]})).unwrap();
//! let calls = tools::pair(&[m]).calls;
//! assert!(matches!(card::key_input(&calls[0]), KeyInput::Command { command, .. } if command == "make"));
//! ```

use serde::Serialize;
use serde_json::Value;

use super::tools::ToolCall;

/// A tool call's key input, shaped by what the tool does.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum KeyInput {
    /// A shell command (Bash, Codex `shell`, `exec_command`…), and the
    /// folder it ran in when the call names one.
    Command {
        /// The command line.
        command: String,
        /// The working folder given with it.
        workdir: Option<String>,
        /// What the agent said the command is for (Claude Code's
        /// `description`), if it said.
        description: Option<String>,
    },
    /// A file read (Read): its path and, when asked for, the lines.
    Read {
        /// The file.
        path: String,
        /// `lines 10–30`, when the call read a range.
        range: Option<String>,
    },
    /// A file written whole (Write): its path and content.
    Write {
        /// The file.
        path: String,
        /// What was written.
        content: String,
    },
    /// An edit (Edit, MultiEdit) as a unified diff of old and new.
    Diff {
        /// The file.
        path: String,
        /// The diff's lines, hunk headers included.
        lines: Vec<DiffLine>,
    },
    /// A search (Grep, Glob): the pattern and where it looked.
    Pattern {
        /// The pattern.
        pattern: String,
        /// The folder or glob it was limited to, if any.
        within: Option<String>,
    },
    /// A Codex patch (`apply_patch`), its lines marked as a diff's are.
    Patch {
        /// The files its headers name, in order.
        paths: Vec<String>,
        /// The patch's lines.
        lines: Vec<DiffLine>,
    },
    /// Any other tool: its arguments as pretty JSON (or as given, when they
    /// are not JSON).
    Arguments {
        /// The arguments, pretty-printed.
        text: String,
    },
}

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum LineKind {
    /// A file header (`*** Update File: …`).
    File,
    /// A hunk header (`@@ -1,3 +1,4 @@`).
    Hunk,
    /// Unchanged context.
    Context,
    /// A line taken out.
    Removed,
    /// A line put in.
    Added,
}

/// One line of a diff, its sign (`-`, `+`, ` `) kept at its start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffLine {
    /// What the line is.
    pub kind: LineKind,
    /// The line as a unified diff prints it, without its line break.
    pub text: String,
}

/// The key input of `call`, by its tool's name.
pub fn key_input(call: &ToolCall) -> KeyInput {
    let s = |k: &str| call.param(k).map(str::to_string);
    if let Some(patch) = call.patch() {
        return KeyInput::Patch {
            paths: patch_paths(patch),
            lines: patch_lines(patch),
        };
    }
    if call.is_shell()
        && let Some(command) = call.command()
    {
        return KeyInput::Command {
            command,
            workdir: s("workdir").or_else(|| s("cwd")),
            description: s("description"),
        };
    }
    let path = s("file_path")
        .or_else(|| s("path"))
        .or_else(|| s("notebook_path"));
    match (call.name.as_str(), path) {
        ("Read", Some(path)) => {
            let num = |k: &str| call.input.get(k).and_then(Value::as_u64);
            let range = match (num("offset"), num("limit")) {
                (None, None) => None,
                (from, limit) => {
                    let from = from.unwrap_or(1).max(1);
                    Some(match limit {
                        Some(n) => format!("lines {from}–{}", from + n.saturating_sub(1)),
                        None => format!("from line {from}"),
                    })
                }
            };
            KeyInput::Read { path, range }
        }
        ("Write", Some(path)) => KeyInput::Write {
            path,
            content: s("content").unwrap_or_default(),
        },
        ("Edit", Some(path)) => KeyInput::Diff {
            lines: diff(
                call.param("old_string").unwrap_or(""),
                call.param("new_string").unwrap_or(""),
            ),
            path,
        },
        ("MultiEdit", Some(path)) => {
            let lines = call
                .input
                .get("edits")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|e| {
                    let t = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
                    diff(t("old_string"), t("new_string"))
                })
                .collect();
            KeyInput::Diff { path, lines }
        }
        ("Grep" | "Glob", _) if call.param("pattern").is_some() => KeyInput::Pattern {
            pattern: s("pattern").unwrap_or_default(),
            within: s("path").or_else(|| s("glob")),
        },
        _ => KeyInput::Arguments {
            text: match &call.input {
                Value::String(s) => s.clone(),
                v => serde_json::to_string_pretty(v).unwrap_or_default(),
            },
        },
    }
}

/// `old` → `new` as a unified diff's hunks (3 lines of context); none when
/// they are equal. A text without a final line break diffs as if it had one,
/// so the last line is not shown as changed for that alone.
pub fn diff(old: &str, new: &str) -> Vec<DiffLine> {
    let nl = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}\n")
        }
    };
    let (old, new) = (nl(old), nl(new));
    let d = similar::TextDiff::from_lines(&old, &new);
    let mut out = vec![];
    for hunk in d.unified_diff().context_radius(3).iter_hunks() {
        out.push(DiffLine {
            kind: LineKind::Hunk,
            text: hunk.header().to_string(),
        });
        for change in hunk.iter_changes() {
            let (kind, sign) = match change.tag() {
                similar::ChangeTag::Delete => (LineKind::Removed, '-'),
                similar::ChangeTag::Insert => (LineKind::Added, '+'),
                similar::ChangeTag::Equal => (LineKind::Context, ' '),
            };
            let value = change.value();
            out.push(DiffLine {
                kind,
                text: format!("{sign}{}", value.strip_suffix('\n').unwrap_or(value)),
            });
        }
    }
    out
}

/// The paths a Codex patch's headers name, in order.
pub fn patch_paths(patch: &str) -> Vec<String> {
    patch
        .lines()
        .filter_map(|l| {
            [
                "*** Add File:",
                "*** Update File:",
                "*** Delete File:",
                "*** Move to:",
            ]
            .iter()
            .find_map(|h| l.strip_prefix(h))
        })
        .map(|p| p.trim().to_string())
        .collect()
}

/// A Codex patch's lines, each marked by its first character as a unified
/// diff's would be.
fn patch_lines(patch: &str) -> Vec<DiffLine> {
    patch
        .lines()
        .map(|l| DiffLine {
            kind: if l.starts_with("***") {
                LineKind::File
            } else if l.starts_with("@@") {
                LineKind::Hunk
            } else if l.starts_with('+') {
                LineKind::Added
            } else if l.starts_with('-') {
                LineKind::Removed
            } else {
                LineKind::Context
            },
            text: l.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Message, tools};
    use serde_json::json;

    fn call(name: &str, params: Value) -> ToolCall {
        let params = match params {
            Value::String(s) => s,
            v => v.to_string(),
        };
        let m: Message = serde_json::from_value(json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": "x", "name": name, "parameters": params}]}))
        .unwrap();
        tools::pair(&[m]).calls.remove(0)
    }

    fn texts(lines: &[DiffLine]) -> Vec<&str> {
        lines.iter().map(|l| l.text.as_str()).collect()
    }

    #[test]
    fn each_tool_shows_its_key_input() {
        assert_eq!(
            key_input(&call(
                "shell",
                json!({"command": ["bash", "-lc", "cargo test"], "workdir": "/w"})
            )),
            KeyInput::Command {
                command: "cargo test".into(),
                workdir: Some("/w".into()),
                description: None
            }
        );
        assert_eq!(
            key_input(&call(
                "Bash",
                json!({"command": "ls -la", "description": "List files"})
            )),
            KeyInput::Command {
                command: "ls -la".into(),
                workdir: None,
                description: Some("List files".into())
            }
        );
        assert_eq!(
            key_input(&call(
                "Read",
                json!({"file_path": "/w/a.rs", "offset": 10, "limit": 5})
            )),
            KeyInput::Read {
                path: "/w/a.rs".into(),
                range: Some("lines 10–14".into())
            }
        );
        assert_eq!(
            key_input(&call("Grep", json!({"pattern": "fn main", "path": "src"}))),
            KeyInput::Pattern {
                pattern: "fn main".into(),
                within: Some("src".into())
            }
        );
        let KeyInput::Diff { path, lines } = key_input(&call(
            "Edit",
            json!({"file_path": "/w/a.rs", "old_string": "a\nb\nc", "new_string": "a\nB\nc"}),
        )) else {
            panic!("not a diff")
        };
        assert_eq!(path, "/w/a.rs");
        assert_eq!(texts(&lines), ["@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"]);
        let KeyInput::Diff { lines, .. } = key_input(&call(
            "MultiEdit",
            json!({"file_path": "/w/a.rs", "edits": [
                {"old_string": "x", "new_string": "y"}, {"old_string": "p", "new_string": "q"}]}),
        )) else {
            panic!("not a diff")
        };
        assert_eq!(
            lines.iter().filter(|l| l.kind == LineKind::Added).count(),
            2
        );
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-old\n+new\n*** End Patch";
        let KeyInput::Patch { paths, lines } = key_input(&call("apply_patch", json!(patch))) else {
            panic!("not a patch")
        };
        assert_eq!(paths, ["src/a.rs"]);
        assert_eq!(lines[3].kind, LineKind::Removed);
        assert_eq!(lines[4].kind, LineKind::Added);
        assert_eq!(
            key_input(&call("TodoWrite", json!({"todos": [1]}))),
            KeyInput::Arguments {
                text: "{\n  \"todos\": [\n    1\n  ]\n}".into()
            }
        );
        // A known tool without its key parameter falls back to its arguments.
        assert!(matches!(
            key_input(&call("Edit", json!({"nope": 1}))),
            KeyInput::Arguments { .. }
        ));
    }

    #[test]
    fn equal_texts_make_no_diff_and_a_missing_final_newline_is_no_change() {
        assert!(diff("same\n", "same\n").is_empty());
        assert_eq!(
            texts(&diff("a\nb", "a\nb\nc")),
            ["@@ -1,2 +1,3 @@", " a", " b", "+c"]
        );
        assert_eq!(texts(&diff("", "new")), ["@@ -0,0 +1 @@", "+new"]);
    }
}

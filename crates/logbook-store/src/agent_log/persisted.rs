//! Claude Code's persisted tool outputs read back at import: a tool
//! result that is a `<persisted-output>` stub gets the text of
//! `<session>/tool-results/<name>` (at most
//! [`PERSISTED_AT_MOST`] bytes), so what the preview left out is found and
//! shown. The log's line itself is stored as written (`rawLines`).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use logbook_model::agent_log::{
    PERSISTED_AT_MOST, PERSISTED_CUT_KEY, PERSISTED_FROM_KEY, persisted_name,
};
use logbook_model::transcript::Message;

/// The folder Claude Code keeps the persisted outputs of the session whose
/// log is `log` in: `<session>/tool-results/` beside `<session>.jsonl`. A
/// subagent's log (`<session>/subagents/agent-<id>.jsonl`) shares its
/// session's folder.
pub(super) fn results_dir(log: &Path) -> Option<PathBuf> {
    let parent = log.parent()?;
    if parent.file_name().is_some_and(|n| n == "subagents") {
        return Some(parent.parent()?.join("tool-results"));
    }
    Some(log.with_extension("").join("tool-results"))
}

/// Replaces each stub result of `m` by the text its file holds, when that
/// file is in `dir`; a missing or unreadable file leaves the stub.
pub(super) fn fill(m: &mut Message, dir: &Path) {
    for block in &mut m.blocks {
        let Some(b) = block.as_object_mut() else {
            continue;
        };
        let Some(name) = b
            .get("result")
            .and_then(Value::as_str)
            .and_then(persisted_name)
            .map(str::to_string)
        else {
            continue;
        };
        let Some((text, cut)) = read_bounded(&dir.join(&name)) else {
            continue;
        };
        b.insert("result".into(), Value::String(text));
        b.insert(
            PERSISTED_FROM_KEY.into(),
            Value::String(format!("tool-results/{name}")),
        );
        if cut {
            b.insert(PERSISTED_CUT_KEY.into(), Value::Bool(true));
        }
    }
}

/// The first [`PERSISTED_AT_MOST`] bytes of the regular file at `path` as
/// text (invalid UTF-8 replaced, a cut character dropped), and whether
/// there was more.
fn read_bounded(path: &Path) -> Option<(String, bool)> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(PERSISTED_AT_MOST as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let cut = bytes.len() > PERSISTED_AT_MOST;
    bytes.truncate(PERSISTED_AT_MOST);
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            if cut && bytes.len() - valid < 4 {
                bytes.truncate(valid);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
    };
    Some((text, cut))
}

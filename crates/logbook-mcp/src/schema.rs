//! Output schemas of the tools: the shapes of the CLI's `--json` output,
//! written down for agents. They name the fields an agent relies on and
//! leave the rest open (the files keep fields other tools wrote, and those
//! appear in the output too).

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

fn object(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let mut schema = json!({
        "type": "object",
        "properties": properties,
    });
    if !required.is_empty()
        && let Value::Object(m) = &mut schema
    {
        m.insert("required".into(), json!(required));
    }
    match schema {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

/// `start`, `status`, `resume`, `close`, `usage`, … `--json`: the work
/// session record plus `indicator` and `percentage`.
pub(crate) fn work_session() -> Arc<JsonObject> {
    object(
        json!({
            "session_id": {"type": "string", "description": "e.g. SES202501-ACME-AUDIT"},
            "status": {"type": "string", "description": "active, paused or closed"},
            "client": {"type": "string"},
            "project": {"type": "string"},
            "tokens": {"type": "object", "description": "current, max, peak, saved"},
            "milestones": {"type": "array"},
            "artifacts": {"type": "array"},
            "agents_spawned": {"type": "array"},
            "notes": {"type": "array"},
            "context_summary": {"type": "string"},
            "indicator": {"type": "string", "description": "active, warning, critical, paused or closed"},
            "percentage": {"type": "number", "description": "share of the token budget used"},
            "context": {"type": "string", "description": "session_switch only: the restored context"},
            "agent_resume": {"type": ["object", "null"], "description": "session_resume only: how to resume the latest Claude Code or Codex session (agent, session_id, command, cwd), or null"}
        }),
        &["session_id"],
    )
}

/// `list --json`.
pub(crate) fn session_list() -> Arc<JsonObject> {
    object(
        json!({
            "active": {"type": ["string", "null"], "description": "the active session's id"},
            "sessions": {"type": "array", "description": "active and paused sessions"},
            "archived": {"type": "array", "description": "closed sessions"},
            "corrupt": {"type": "array", "description": "files that could not be read"}
        }),
        &["sessions", "archived"],
    )
}

/// `tokens --json`.
pub(crate) fn token_report() -> Arc<JsonObject> {
    object(
        json!({
            "session_id": {"type": "string"},
            "current": {"type": "integer"},
            "max": {"type": "integer"},
            "remaining": {"type": "integer"},
            "peak": {"type": "integer"},
            "saved": {"type": "integer"},
            "percentage": {"type": "number"},
            "agents": {"type": "array"}
        }),
        &["session_id"],
    )
}

/// `agent spawn --json`.
pub(crate) fn spawned() -> Arc<JsonObject> {
    object(
        json!({"id": {"type": "string", "description": "the agent id to pass to agent_done"}}),
        &["id"],
    )
}

/// `run start --json`.
pub(crate) fn run_started() -> Arc<JsonObject> {
    object(
        json!({
            "session_id": {"type": "string", "description": "the run's UUID"},
            "folder": {"type": "string", "description": "absolute run folder: write the run's files here"},
            "manifest": {"type": "object"},
            "variables": {"type": "object", "description": "session_id, session_folder, manifest_file, default_output_file, …"}
        }),
        &["session_id", "folder", "manifest"],
    )
}

/// A run as `find --json` lists it (also `run show|finish|link`).
pub(crate) fn run_entry() -> Arc<JsonObject> {
    object(run_entry_properties(), &["session_id", "manifest"])
}

fn run_entry_properties() -> Value {
    json!({
        "session_id": {"type": "string", "description": "the run's UUID"},
        "folder": {"type": "string"},
        "display_name": {"type": "string"},
        "label": {"type": "string"},
        "manifest": {"type": "object"},
        "snippet": {"type": "string", "description": "find_runs with text: the matching passage"},
        "origin": {"type": "string", "description": "scope team only: the machine the run came from"}
    })
}

/// `run output --json`.
pub(crate) fn output_registered() -> Arc<JsonObject> {
    object(
        json!({
            "session_id": {"type": "string"},
            "output": {"type": "object", "description": "file, type, description, created_at"},
            "path": {"type": "string", "description": "absolute path of the file"}
        }),
        &["session_id", "output", "path"],
    )
}

/// `find --json` (an array in the CLI) as the `runs` of an object, with
/// the paging the CLI prints on stderr.
pub(crate) fn find() -> Arc<JsonObject> {
    object(
        json!({
            "runs": {"type": "array", "items": {"type": "object", "properties": run_entry_properties()},
                     "description": "exactly `logbook find --json`: newest first"},
            "total": {"type": "integer", "description": "how many runs match in all; with totalExact false, at least this many (a text query is counted only so far)"},
            "totalExact": {"type": "boolean", "description": "whether total is the whole count"},
            "offset": {"type": "integer"},
            "more": {"type": "integer", "description": "how many more match after this page (at least, with totalExact false)"},
            "nextOffset": {"type": "integer", "description": "the offset of the next page; absent on the last page"},
            "archivedMatches": {"type": "integer", "description": "how many archived runs match too, left out (archived: true lists them)"},
            "partial": {"type": "boolean", "description": "only with text: the full-text index is still being built, so matches may be missing (see notice)"},
            "notice": {"type": "string", "description": "with partial: how far the full-text index is"}
        }),
        &["runs", "total", "more"],
    )
}

/// `latest-output --json`.
pub(crate) fn latest_output() -> Arc<JsonObject> {
    object(
        json!({
            "path": {"type": "string"},
            "session_id": {"type": "string"},
            "status": {"type": "string", "description": "the run's execution.status: completed unless the call asked another status"},
            "output": {"type": "object"},
            "missing": {"type": "boolean", "description": "the file was registered but is gone"},
            "unsafe": {"type": ["string", "null"], "enum": ["symlink-outside-run", "hard-link", null], "description": "the file is there but not the run's own (a symlink leading outside the run folder, a hard link); do not use it"},
            "origin": {"type": "string", "description": "scope team only: the machine the run came from (path is a path on it)"},
            "text": {"type": ["string", "null"], "description": "scope team only: the output's text as the team catalog keeps it"},
            "truncated": {"type": "boolean", "description": "scope team only: the catalog kept only the start of the text"}
        }),
        &["path", "session_id", "missing"],
    )
}

/// `lineage --format json`.
pub(crate) fn lineage() -> Arc<JsonObject> {
    object(
        json!({
            "root": {"type": "string"},
            "nodes": {"type": "array"},
            "edges": {"type": "array"},
            "cycles": {"type": "array"},
            "origins": {"type": "object", "description": "scope team only: each run's machine, by run id"}
        }),
        &[],
    )
}

/// `workflow … --json`: the SessionState as stored (seed 004, camelCase).
pub(crate) fn workflow_state() -> Arc<JsonObject> {
    object(
        json!({
            "version": {"type": "integer", "description": "pass as expect_version for compare-and-swap"},
            "currentMode": {"type": "string"},
            "modeHistory": {"type": "array"},
            "orchestratorWorkflow": {"type": ["object", "null"],
                "description": "activeAgent, workflowPhase, agentHistory, decisions, verdicts, pendingHandoffs, compactionHistory"},
            "fullHistory": {"type": "array", "description": "workflow_state with full: every invocation"}
        }),
        &["version"],
    )
}

/// `transcript import --json`.
pub(crate) fn transcript_saved() -> Arc<JsonObject> {
    object(
        json!({
            "id": {"type": "string"},
            "kind": {"type": "string", "description": "main or subagent"},
            "file": {"type": "string"},
            "messages": {"type": "integer"},
            "run": {"type": "string"},
            "name": {"type": "string", "description": "the title given with transcript_name"}
        }),
        &["id", "kind", "file"],
    )
}

/// `transcript show --json`: the stored transcript.
pub(crate) fn transcript() -> Arc<JsonObject> {
    object(
        json!({
            "id": {"type": "string"},
            "messages": {"type": "array"},
            "metadata": {"type": "object"}
        }),
        &["id"],
    )
}

/// `transcript find --json`: matches and errors, each list present when
/// asked for.
pub(crate) fn transcript_found() -> Arc<JsonObject> {
    object(
        json!({
            "matches": {"type": "array", "description": "the messages saying the words, ascending: {message, snippet}"},
            "matchCount": {"type": "integer", "description": "how many messages match after `after`, the listed ones included"},
            "errors": {"type": "array", "description": "indexes of the messages holding a failed tool result, ascending"},
            "errorCount": {"type": "integer"},
            "partial": {"type": "boolean", "description": "only with text: the full-text index is still being built, so matches may be missing (see notice)"},
            "notice": {"type": "string", "description": "with partial: how far the full-text index is"}
        }),
        &[],
    )
}

/// `transcript list --json` (an array in the CLI) as `transcripts`.
pub(crate) fn transcript_list() -> Arc<JsonObject> {
    object(
        json!({
            "transcripts": {"type": "array", "description": "exactly `logbook transcript list --json`: newest lastActiveAt first"}
        }),
        &["transcripts"],
    )
}

/// `resume_context`: the text of `logbook resume-context`.
pub(crate) fn resume() -> Arc<JsonObject> {
    object(
        json!({
            "session_id": {"type": "string"},
            "text": {"type": "string"}
        }),
        &["session_id", "text"],
    )
}

/// `agent_resume`: `resume --json`'s `agent_resume` (the object of
/// `transcript resume --json`, or null).
pub(crate) fn agent_resume() -> Arc<JsonObject> {
    object(
        json!({
            "agent_resume": {
                "type": ["object", "null"],
                "description": "agent (claude-code or codex), session_id, command, cwd, transcript_id; null when no agent session is recorded",
                "properties": {
                    "agent": {"type": "string"},
                    "session_id": {"type": "string"},
                    "command": {"type": "string"},
                    "cwd": {"type": "string"}
                }
            }
        }),
        &["agent_resume"],
    )
}

/// `handoff --json`.
pub(crate) fn agent_handoff() -> Arc<JsonObject> {
    object(
        json!({
            "from": {"type": "string", "description": "the agent whose session it was read from"},
            "to": {"type": "string"},
            "resume": {"type": "object", "description": "how to resume that session: agent, session_id, command, cwd"},
            "goal": {"type": ["string", "null"], "description": "the first user prompt"},
            "files_changed": {"type": "array", "items": {"type": "string"}},
            "commands": {"type": "array", "description": "command, failed, exit_code"},
            "open_milestones": {"type": "array", "items": {"type": "string"}},
            "pending_handoffs": {"type": "array"},
            "last_assistant_message": {"type": ["string", "null"]},
            "text": {"type": "string", "description": "the handover as text, within max_bytes"}
        }),
        &["from", "to", "text"],
    )
}

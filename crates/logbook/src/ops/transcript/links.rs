//! What a transcript page shows beside its messages: the tokens each
//! message is charged with, the subagents its Task calls ran, and, for a
//! run, the transcripts that name it.

use crate::Logbook;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::agent_log::{self, Usage};
use crate::model::ids::RunId;
use crate::model::run::Run;
use crate::model::transcript::{RUN_ID_KEY, Transcript, tools};

/// The tokens each message of `t` is charged with, by the rules of
/// `transcript usage` ([`agent_log::charged_within`]): summed over a whole
/// transcript, they are its own usage. `t` may be a window of it (a page
/// of a long one), holding its messages from index `from` of `total`. A
/// Codex item whose count runs past the window's end, when the window does
/// not reach the transcript's, is left uncharged rather than charged a
/// guess.
pub fn charged_in(t: &Transcript, from: usize, total: usize) -> Vec<Option<Usage>> {
    let reaches_end = from.saturating_add(t.messages.len()) >= total;
    let end = agent_log::usage_of(&t.metadata)
        .map(|b| b.total())
        .filter(|_| reaches_end);
    agent_log::charged_within(&t.messages, from == 0, end)
}

/// The subagents `t`'s Task calls ran, by `agentId`: the subagent's
/// transcript id when the store holds it, `None` when it does not (its
/// log was not imported), so a page never links to a missing page.
pub fn subagents(p: &Logbook, t: &Transcript) -> BTreeMap<String, Option<String>> {
    let session = agent_log::source_of(&t.metadata)
        .and_then(|s| s.session_id)
        .unwrap_or_else(|| t.id.clone());
    let mut out = BTreeMap::new();
    for call in tools::pair(&t.messages).calls {
        let Some(agent) = call.subagent_agent_id(&t.messages) else {
            continue;
        };
        if out.contains_key(&agent) {
            continue;
        }
        let id = agent_log::subagent_id(&session, &agent);
        let stored = head_of(p, &id).is_some().then_some(id);
        out.insert(agent, stored);
    }
    out
}

/// The head of transcript `id` (live or archived), when the store has it:
/// read from its file's start only.
fn head_of(p: &Logbook, id: &str) -> Option<logbook_store::transcript::Head> {
    [
        p.config.transcripts_dir.clone(),
        logbook_store::transcript::archive_dir(p),
    ]
    .iter()
    .flat_map(|dir| logbook_store::transcript::candidates(dir, id))
    .filter_map(|(_, path)| logbook_store::transcript::read_head(&path).ok())
    .find(|h| h.id.eq_ignore_ascii_case(id))
}

/// The transcripts whose `metadata.runId` names `run`, as its manifest
/// records them (a save of such a transcript names it there, see
/// [`crate::ops::run::record_conversation`]); each is checked to still
/// name the run, from its head only, so no transcript is read whole.
pub fn of_run(p: &Logbook, run: &Run) -> Vec<String> {
    let mut out = vec![];
    for id in crate::ops::run::conversations(run) {
        if out.contains(&id) {
            continue;
        }
        let names_run = head_of(p, &id).is_some_and(|h| names(&h.metadata.extra, &run.id));
        if names_run {
            out.push(id);
        }
    }
    out
}

fn names(extra: &serde_json::Map<String, Value>, run: &RunId) -> bool {
    extra
        .get(RUN_ID_KEY)
        .and_then(Value::as_str)
        .is_some_and(|r| r.eq_ignore_ascii_case(run.as_str()))
}

//! Find-in-transcript and "jump to the next error": which messages of one
//! live transcript say some words, and which hold a failed tool result,
//! answered from the index's per-message rows (a transcript of any size
//! costs its matches, not its length). Snippets are cut from the matching
//! messages only, read from the file up to the last of them.

use crate::Logbook;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Next, Result, Step};
use crate::model::transcript::find::said_by;
use crate::ops::params::query_text;
use logbook_index::{Index, Kind as IndexKind, MessageHits, Snippets};

/// The most message indexes one call returns (matches, or errors).
pub const MAX_FOUND: usize = 500;

/// A message that says the words looked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoundMessage {
    /// Its index in the transcript's messages, from 0.
    pub message: usize,
    /// Its words around the first match, matches in `[` `]`; `None` when
    /// snippets were not asked for or the message could not be read again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// A page of messages of one transcript, ascending, after a starting point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found<T> {
    /// The page.
    pub items: Vec<T>,
    /// How many there are after the starting point, the page included.
    pub total: u64,
}

impl<T> Default for Found<T> {
    fn default() -> Found<T> {
        Found {
            items: vec![],
            total: 0,
        }
    }
}

/// How [`find_in`] and [`errors`] page: after message `after` (exclusive)
/// when given, at most `limit` (capped at [`MAX_FOUND`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    /// Only messages after this index.
    pub after: Option<usize>,
    /// At most this many.
    pub limit: usize,
}

impl Default for Page {
    fn default() -> Page {
        Page {
            after: None,
            limit: MAX_FOUND,
        }
    }
}

/// The messages of live transcript `id` (a UUID or a unique part, see
/// [`super::resolve`]) that say every word of `text`, ascending, with the
/// same query rules as `transcript list --text` (words stemmed, FTS syntax
/// searched as typed). With `snippets`, each match's words around it.
pub fn find_in(
    p: &Logbook,
    id: &str,
    text: &str,
    page: Page,
    snippets: bool,
) -> Result<Found<FoundMessage>> {
    let text = query_text("text", text)?;
    let (index, path) = indexed(p, id)?;
    matches(&index, &path, id, &text, page, snippets)
}

/// [`find_in`] on an open index, `text` already checked.
fn matches(
    index: &Index,
    path: &Path,
    id: &str,
    text: &str,
    page: Page,
    snippets: bool,
) -> Result<Found<FoundMessage>> {
    let hits = index
        .read()
        .find_in_transcript(path, text, page.after, page.limit.min(MAX_FOUND))?
        .ok_or_else(|| not_indexed(id))?;
    let mut cut = std::collections::HashMap::new();
    if snippets && !hits.messages.is_empty() {
        let s = Snippets::new(text)?;
        // Gone or unreadable since it was indexed: listed without snippets.
        for (at, m) in
            logbook_store::transcript::read_messages_at(path, &hits.messages).unwrap_or_default()
        {
            if let Some(snippet) = s.of_text(&said_by(&m))? {
                cut.insert(at, snippet);
            }
        }
    }
    Ok(Found {
        items: hits
            .messages
            .into_iter()
            .map(|message| FoundMessage {
                message,
                snippet: cut.remove(&message),
            })
            .collect(),
        total: hits.total,
    })
}

/// The messages of live transcript `id` that hold a failed tool result
/// (what the viewer marks with an error chip), ascending.
pub fn errors(p: &Logbook, id: &str, page: Page) -> Result<Found<usize>> {
    let (index, path) = indexed(p, id)?;
    failed(&index, &path, id, page)
}

/// [`errors`] on an open index.
fn failed(index: &Index, path: &Path, id: &str, page: Page) -> Result<Found<usize>> {
    let MessageHits { messages, total } = index
        .read()
        .transcript_errors(path, page.after, page.limit.min(MAX_FOUND))?
        .ok_or_else(|| not_indexed(id))?;
    Ok(Found {
        items: messages,
        total,
    })
}

/// What a reader of one transcript is shown to move through it: its
/// errors, and the messages that say `text` when words are looked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Navigation {
    /// The first errors, and how many there are.
    pub errors: Found<usize>,
    /// The first error after the message shown.
    pub next_error: Option<usize>,
    /// The first matches (with snippets), when words were given.
    pub matches: Option<Found<FoundMessage>>,
    /// The first match after the message shown.
    pub next_match: Option<usize>,
}

/// [`errors`] and [`find_in`] for a reader at message `shown` (`None`
/// before the first), at most `listed` of each, from one open index.
pub fn navigate(
    p: &Logbook,
    id: &str,
    text: &str,
    shown: Option<usize>,
    listed: usize,
) -> Result<Navigation> {
    let text = query_text("text", text)?;
    let (index, path) = indexed(p, id)?;
    let first = Page {
        after: None,
        limit: listed,
    };
    let next = Page {
        after: shown,
        limit: 1,
    };
    let errors = failed(&index, &path, id, first)?;
    let next_error = failed(&index, &path, id, next)?.items.first().copied();
    let (matches, next_match) = if text.is_empty() {
        (None, None)
    } else {
        let after = matches(&index, &path, id, &text, next, false)?;
        (
            Some(matches(&index, &path, id, &text, first, true)?),
            after.items.first().map(|f| f.message),
        )
    };
    Ok(Navigation {
        errors,
        next_error,
        matches,
        next_match,
    })
}

/// The synced index and the file of live transcript `id`.
fn indexed(p: &Logbook, id: &str) -> Result<(Index, std::path::PathBuf)> {
    let id = super::resolve(p, id)?;
    let index = Index::open_synced_kind(p, IndexKind::Transcript)?;
    let (_, path) = logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str())
        .ok_or_else(|| not_indexed(id.as_str()))?;
    Ok((index, path))
}

fn not_indexed(id: &str) -> Error {
    Error::not_found(
        "transcript",
        id,
        Next::say("only live transcripts are searched (an archived one is not indexed); ")
            .step(Step::list_transcripts(false))
            .text(" shows them"),
    )
}

/// The JSON every face answers a find with: `matches` (each `message` and
/// maybe `snippet`) and `matchCount` when words were looked for, `errors`
/// and `errorCount` when errors were asked for; the counts say how many
/// there are after the starting point, the page included.
pub fn found_json(
    matches: Option<&Found<FoundMessage>>,
    errors: Option<&Found<usize>>,
) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    if let Some(m) = matches {
        out.insert("matches".into(), serde_json::json!(m.items));
        out.insert("matchCount".into(), m.total.into());
    }
    if let Some(e) = errors {
        out.insert("errors".into(), serde_json::json!(e.items));
        out.insert("errorCount".into(), e.total.into());
    }
    serde_json::Value::Object(out)
}

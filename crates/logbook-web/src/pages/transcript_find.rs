//! The transcript page's find form and errors bar: the messages that say
//! `?find=WORDS` and those holding a failed tool result, each a link to
//! `?at=N#mN` (the page holding message N, at its anchor), with "next"
//! links relative to the message shown (`?at=`). The words are kept in
//! every link so that the page of a match keeps the results.

use std::collections::HashMap;

use logbook::ops::transcript::find;

use crate::guard::Refusal;
use crate::view::enc;

/// How many matches and errors the bar lists; the counts say how many
/// there are in all, and the "next" links go on past them.
const LISTED: usize = 50;

/// A link to one message.
pub(crate) struct Jump {
    /// The message's index, from 0.
    pub(crate) message: usize,
    /// `/transcripts/{id}?at=N…#mN`.
    pub(crate) href: String,
    /// The words around the match, or empty.
    pub(crate) snippet: String,
}

/// What the find form and the errors bar show.
pub(crate) struct FindBar {
    /// The words looked for, as typed (the form's value).
    pub(crate) words: String,
    /// The first matches.
    pub(crate) matches: Vec<Jump>,
    /// How many messages match in all.
    pub(crate) match_count: u64,
    /// The first errors.
    pub(crate) errors: Vec<Jump>,
    /// How many messages hold an error in all.
    pub(crate) error_count: u64,
    /// The first match after the message shown, or empty.
    pub(crate) next_match: String,
    /// The first error after the message shown, or empty.
    pub(crate) next_error: String,
}

/// The `?find=` of a transcript page's query string, checked as the API
/// checks a text query.
pub(crate) fn words(q: &HashMap<String, String>) -> Result<String, Refusal> {
    let words = q.get("find").map(|s| s.trim()).unwrap_or_default();
    logbook::ops::params::query_text("find", words).map_err(|e| Refusal::from_query_error(&e))
}

/// The bar of transcript `id` shown at message `at` (its "next" links go
/// past it; `None` before the first), for `words`; `None`
/// for a transcript the index does not hold (an archived one).
pub(crate) fn bar(
    p: &logbook::Logbook,
    id: &str,
    at: Option<usize>,
    words: String,
) -> Result<Option<FindBar>, Refusal> {
    match bar_of(p, id, at, words) {
        Err(logbook::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(Refusal::from_query_error(&e)),
        Ok(bar) => Ok(Some(bar)),
    }
}

fn bar_of(
    p: &logbook::Logbook,
    id: &str,
    at: Option<usize>,
    words: String,
) -> logbook::Result<FindBar> {
    let keep = if words.is_empty() {
        String::new()
    } else {
        format!("&find={}", enc(&words))
    };
    let jump = |message: usize, snippet: Option<String>| Jump {
        message,
        href: format!("/transcripts/{}?at={message}{keep}#m{message}", enc(id)),
        snippet: snippet.unwrap_or_default(),
    };
    let nav = find::navigate(p, id, &words, at, LISTED)?;
    let href = |m: Option<usize>| m.map(|m| jump(m, None).href).unwrap_or_default();
    let found = nav.matches.unwrap_or_default();
    Ok(FindBar {
        match_count: found.total,
        matches: found
            .items
            .into_iter()
            .map(|f| jump(f.message, f.snippet))
            .collect(),
        errors: nav.errors.items.iter().map(|m| jump(*m, None)).collect(),
        error_count: nav.errors.total,
        next_match: href(nav.next_match),
        next_error: href(nav.next_error),
        words,
    })
}

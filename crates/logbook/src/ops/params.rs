//! What a face received, checked once: `find`'s filters, paging counts and
//! query text arrive here as the caller typed them (a command-line option,
//! an MCP argument, a query-string value), so the CLI, the MCP server and
//! the web API refuse the same input with the same error.

use jiff::Timestamp;

use crate::error::{Error, Result};
use crate::model::limits::bounded;
use crate::model::query::{ArchiveScope, RunQuery, parse_since, query_status};
use crate::model::repo::{Repository, normalize_origin};

/// `find`'s filters as a face received them, not yet checked. Every value
/// is optional; blank values are the face's to drop (a web form sends
/// empty fields), and are checked as given here.
#[derive(Debug, Clone, Default)]
pub struct FindParams {
    /// `agent.name`, exactly.
    pub agent: Option<String>,
    /// `workflow.name`, exactly or as a regular expression.
    pub workflow: Option<String>,
    /// One of [`crate::model::run::RunStatus::KNOWN`], or `unknown` (run
    /// folders without a manifest).
    pub status: Option<String>,
    /// `execution.user`, exactly.
    pub user: Option<String>,
    /// A tag.
    pub tag: Option<String>,
    /// A time, a date or an age ([`parse_since`]).
    pub since: Option<String>,
    /// Full-text words.
    pub text: Option<String>,
    /// At most this many runs: a whole number up to [`RunQuery::MAX_PAGING`].
    pub limit: Option<String>,
    /// Skip this many runs first.
    pub offset: Option<String>,
    /// Only this repository's runs ([`repository`]).
    pub repo: Option<String>,
    /// Where `repo` is resolved ([`RepoBase`]).
    pub repo_base: RepoBase,
    /// The archived runs only (`find --archived`), not the live ones.
    pub archived: bool,
}

/// What a `repo` parameter may name besides a remote URL, by face: the CLI
/// names folders of its machine; an MCP or HTTP caller is untrusted and
/// names only the project's own repository (`.`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RepoBase {
    /// Remote URLs only.
    #[default]
    UrlsOnly,
    /// URLs, and `.` for the repository of this folder (a server's project root).
    Here(std::path::PathBuf),
    /// URLs, `.`, and any folder, relative to this one (the CLI's cwd).
    Folders(std::path::PathBuf),
}

/// A `--repo` value as typed: `.` (the repository of the face's folder), a
/// folder (CLI only; identified as it is now), or a remote URL in any
/// spelling git takes (normalized: `git@host:org/x.git` is
/// `https://host/org/x`).
pub fn repository(given: &str, base: &RepoBase) -> Result<Repository> {
    let given = query_text("repo", given)?;
    let given = given.trim();
    let folder = match base {
        RepoBase::UrlsOnly => None,
        RepoBase::Here(here) => (given == ".").then(|| here.clone()),
        RepoBase::Folders(cwd) => {
            let path = logbook_store::absolute(cwd, std::path::Path::new(given));
            (given == "." || logbook_store::fs::is_folder(&path)).then_some(path)
        }
    };
    if let Some(folder) = folder {
        return logbook_store::repo::identify(&folder).ok_or_else(|| {
            Error::invalid(
                "repo",
                given,
                "that folder cannot be read; name another, or a remote URL",
            )
        });
    }
    let looks_remote = given.contains("://")
        || given
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'));
    match normalize_origin(given).filter(|_| looks_remote) {
        Some(origin) => Ok(Repository {
            root_commit: None,
            origin: Some(origin),
            folder: String::new(),
        }),
        None => Err(Error::invalid(
            "repo",
            given,
            match base {
                RepoBase::Folders(_) => {
                    "expected a remote URL (git@host:org/x.git, https://host/org/x), an existing folder, or `.`"
                }
                _ => "expected a remote URL (git@host:org/x.git, https://host/org/x) or `.`",
            },
        )),
    }
}

impl FindParams {
    /// The one check of `find`'s filters: a status Logbook knows, paging
    /// counts SQLite can take, a valid pattern, a time it can read, and
    /// text the full-text engine can search for. `now` is when `since`
    /// ages are counted back from.
    pub fn query(&self, now: Timestamp) -> Result<RunQuery> {
        let text = |field: &'static str, v: &Option<String>| {
            v.as_deref().map(|v| query_text(field, v)).transpose()
        };
        let query = RunQuery {
            agent: text("agent", &self.agent)?,
            workflow: text("workflow", &self.workflow)?,
            status: text("status", &self.status)?
                .map(|s| query_status(&s))
                .transpose()?,
            user: text("user", &self.user)?,
            tag: text("tag", &self.tag)?,
            since: text("since", &self.since)?
                .map(|s| parse_since(&s, now))
                .transpose()?,
            text: text("text", &self.text)?,
            repo: self
                .repo
                .as_deref()
                .map(|r| repository(r, &self.repo_base))
                .transpose()?,
            limit: self
                .limit
                .as_deref()
                .map(|v| paging("limit", v))
                .transpose()?,
            offset: self
                .offset
                .as_deref()
                .map(|v| paging("offset", v))
                .transpose()?
                .unwrap_or(0),
            archive: ArchiveScope::of_flag(self.archived),
        };
        query.matcher()?;
        Ok(query)
    }
}

/// `transcript list`'s filters as a face received them (the CLI's options,
/// the viewer's form), not yet checked: one check, one error sentence.
#[derive(Debug, Clone, Default)]
pub struct TranscriptParams {
    /// `claude-code`, `codex` or `logbook`.
    pub source: Option<String>,
    /// Text a model's name contains.
    pub model: Option<String>,
    /// Active since: a time, a date or an age ([`parse_since`]).
    pub since: Option<String>,
    /// Begun before: a time, a date or an age.
    pub until: Option<String>,
    /// Words its messages say.
    pub text: Option<String>,
}

impl TranscriptParams {
    /// The checked [`Filter`](crate::model::transcript::Filter) (its
    /// workdir left to the face); `now` is when ages are counted back from.
    pub fn filter(&self, now: Timestamp) -> Result<crate::model::transcript::Filter> {
        let text = |field: &'static str, v: &Option<String>| {
            v.as_deref().map(|v| query_text(field, v)).transpose()
        };
        let time = |field: &'static str, v: &Option<String>| {
            text(field, v)?.map(|s| parse_since(&s, now)).transpose()
        };
        Ok(crate::model::transcript::Filter {
            workdir: None,
            source: text("source", &self.source)?
                .map(|s| crate::model::transcript::parse_source(&s))
                .transpose()?,
            model: text("model", &self.model)?,
            since: time("since", &self.since)?,
            until: time("until", &self.until)?,
            text: text("text", &self.text)?
                .map(|t| crate::model::transcript::Filter::words(&t))
                .unwrap_or_default(),
        })
    }
}

/// A paging count as typed: a whole number in digits from 0 to
/// [`RunQuery::MAX_PAGING`] (SQLite's integers are i64, and a larger value
/// must not wrap around to "no limit").
pub fn paging(field: &'static str, given: &str) -> Result<usize> {
    // Digits only: Rust's parse takes a leading `+`, and a value with
    // spaces around it is not the number a link or a script meant.
    Some(given)
        .filter(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|g| g.parse::<u64>().ok())
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n <= RunQuery::MAX_PAGING)
        .ok_or_else(|| {
            Error::invalid(
                field,
                given,
                format!("expected a whole number from 0 to {}", RunQuery::MAX_PAGING),
            )
        })
}

/// [`paging`] for a count a face already holds as a number (an MCP
/// argument, a parsed option): the same check and the same error.
pub fn paging_count(field: &'static str, n: u64) -> Result<usize> {
    paging(field, &n.to_string())
}

/// A `KEY=VALUE` pair as a command line gives one (a run's inputs and
/// metadata): split at its first `=`; `example` is shown when there is none.
pub fn key_value(
    field: &'static str,
    given: &str,
    example: &'static str,
) -> Result<(String, String)> {
    match given.split_once('=') {
        Some((k, v)) => Ok((k.to_string(), v.to_string())),
        None => Err(
            Error::invalid(field, given, "expected KEY=VALUE").with_next(
                crate::error::Next::say("write e.g. ")
                    .option(field)
                    .text(" ")
                    .text(example),
            ),
        ),
    }
}

/// Text a caller searches or filters by: at most
/// [`crate::model::limits::MAX_TEXT_FIELD`] bytes, and no NUL, which the
/// full-text engine reads as the end of the query (its other syntax, quotes,
/// `*`, `:`, `-`, `NEAR(`, is quoted and searched for as typed).
pub fn query_text(field: &'static str, given: &str) -> Result<String> {
    bounded(field, given)?;
    if given.contains('\0') {
        return Err(Error::invalid(
            field,
            given,
            "a query cannot contain a NUL character; remove it",
        ));
    }
    Ok(given.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2025-10-05T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn an_unknown_status_is_refused_and_a_known_one_kept() {
        let p = |s: &str| FindParams {
            status: Some(s.into()),
            ..FindParams::default()
        };
        let err = p("bogus").query(now()).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Invalid);
        assert!(
            err.to_string().starts_with("invalid status \"bogus\""),
            "{err}"
        );
        assert_eq!(
            p("completed").query(now()).unwrap().status.as_deref(),
            Some("completed")
        );
    }

    #[test]
    fn paging_beyond_sqlite_integers_is_refused_the_same_way_from_text_or_number() {
        let big = (RunQuery::MAX_PAGING as u64 + 1).to_string();
        let from_text = paging("limit", &big).unwrap_err().to_string();
        let from_number = paging_count("limit", RunQuery::MAX_PAGING as u64 + 1)
            .unwrap_err()
            .to_string();
        assert_eq!(from_text, from_number);
        assert!(from_text.contains("9223372036854775807"), "{from_text}");
        assert_eq!(
            paging("limit", "9223372036854775807").unwrap(),
            RunQuery::MAX_PAGING
        );
        for bad in ["-1", "abc", "", "1.5"] {
            assert!(paging("offset", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nul_in_text_is_refused_and_operators_pass_to_be_quoted() {
        let err = query_text("text", "a\0b").unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Invalid);
        assert!(err.hint().is_none(), "no rebuild advice: {:?}", err.hint());
        for typed in ["NEAR(a b)", "\"", "a*", "x:y", "-a", "a OR b"] {
            assert_eq!(query_text("text", typed).unwrap(), typed);
        }
        let long = "a".repeat(crate::model::limits::MAX_TEXT_FIELD + 1);
        assert!(matches!(
            query_text("text", &long),
            Err(Error::TextTooLong { field: "text", .. })
        ));
    }
}

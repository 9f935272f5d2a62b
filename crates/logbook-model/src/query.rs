//! Discovery filters. The semantics live in one pure function,
//! [`RunMatcher::matches`], so a scan of the files and the SQLite index can
//! be checked against each other.

use jiff::Timestamp;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock;
use crate::error::{Error, Result};
use crate::repo::Repository;
use crate::run::{Manifest, Run, RunStatus, UNKNOWN_STATUS};

/// `pattern` compiled, from a small cache: an agent asks the same
/// `--workflow` pattern call after call, a page and its count each test it,
/// and compiling it cost more than the indexed query itself.
pub fn workflow_regex(pattern: &str) -> std::result::Result<Regex, regex::Error> {
    use std::collections::HashMap;
    use std::sync::{Mutex, PoisonError};
    /// Patterns kept; past it the cache starts again (a few are in use).
    const KEPT: usize = 64;
    static CACHE: Mutex<Option<HashMap<String, Regex>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(re) = cache.get(pattern) {
        return Ok(re.clone());
    }
    let re = Regex::new(pattern)?;
    if cache.len() >= KEPT {
        cache.clear();
    }
    cache.insert(pattern.to_string(), re.clone());
    Ok(re)
}

/// What `find` (and `GET /api/runs`, and the MCP `find_runs` tool) asks for.
/// Every filter is optional; all given ones must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunQuery {
    /// `agent.name`, exactly.
    pub agent: Option<String>,
    /// `workflow.name`: equal to this, or matched by it as a regular
    /// expression (unanchored, like the seed's `/^deep-dive-/`).
    pub workflow: Option<String>,
    /// `execution.status`, exactly (unknown statuses other tools wrote too).
    pub status: Option<String>,
    /// `execution.user`, exactly.
    pub user: Option<String>,
    /// One of the manifest's `tags`.
    pub tag: Option<String>,
    /// Only runs started at or after this instant.
    pub since: Option<Timestamp>,
    /// Case-insensitive substring of any string value in the manifest.
    pub text: Option<String>,
    /// Only runs of this repository ([`Repository::matches`] on
    /// `metadata.repository`); runs recorded without one always match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<Repository>,
    /// Which runs it sees of the live set and the archive: the live ones
    /// unless asked (`find --archived`: the archived ones only).
    #[serde(default, skip_serializing_if = "ArchiveScope::is_live")]
    pub archive: ArchiveScope,
    /// At most this many results.
    pub limit: Option<usize>,
    /// Skip this many results first (paging).
    #[serde(default)]
    pub offset: usize,
}

/// Which runs a [`RunQuery`] sees: archived runs stay indexed and
/// readable, but a listing leaves them out unless asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveScope {
    /// The live set only (every listing's default).
    #[default]
    Live,
    /// The archived runs only (`find --archived`).
    Archived,
    /// Both: what reaches a run whatever its place (`latest-output`).
    All,
}

impl ArchiveScope {
    /// Whether this is the default, the live set.
    pub fn is_live(&self) -> bool {
        *self == ArchiveScope::Live
    }

    /// The scope of a face's `--archived` flag.
    pub fn of_flag(archived: bool) -> ArchiveScope {
        if archived {
            ArchiveScope::Archived
        } else {
            ArchiveScope::Live
        }
    }
}

/// A [`RunQuery`] with its regular expression compiled once.
#[derive(Debug, Clone)]
pub struct RunMatcher {
    query: RunQuery,
    workflow_re: Option<Regex>,
    text: Option<String>,
}

impl RunQuery {
    /// The largest `limit` or `offset` a query takes: SQLite's integers are
    /// i64, and a larger value must not wrap around to "no limit".
    pub const MAX_PAGING: usize = i64::MAX as usize;

    /// Compiles the query; an invalid `workflow` pattern, or a `limit` or
    /// `offset` beyond [`RunQuery::MAX_PAGING`], is an error naming it.
    pub fn matcher(&self) -> Result<RunMatcher> {
        for (field, value) in [("limit", self.limit), ("offset", Some(self.offset))] {
            if let Some(v) = value.filter(|v| *v > Self::MAX_PAGING) {
                return Err(Error::invalid(
                    field,
                    v.to_string(),
                    format!("expected a whole number from 0 to {}", Self::MAX_PAGING),
                ));
            }
        }
        let workflow_re = match &self.workflow {
            Some(w) => Some(workflow_regex(w).map_err(|e| {
                Error::invalid(
                    "workflow",
                    w.as_str(),
                    format!(
                        "not a regular expression ({}); give the exact workflow name or a valid pattern",
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                )
            })?),
            None => None,
        };
        Ok(RunMatcher {
            query: self.clone(),
            workflow_re,
            text: self.text.as_ref().map(|t| t.to_lowercase()),
        })
    }

    /// Whether `manifest` passes every filter (compiles the pattern each
    /// call; use [`RunQuery::matcher`] for many manifests). An invalid
    /// pattern matches by exact name only.
    pub fn matches(&self, manifest: &Manifest) -> bool {
        match self.matcher() {
            Ok(m) => m.matches(manifest),
            Err(_) => RunQuery {
                workflow: None,
                ..self.clone()
            }
            .matcher()
            .is_ok_and(|m| {
                m.matches(manifest) && self.workflow.as_deref() == Some(&manifest.workflow.name)
            }),
        }
    }

    /// Applies `offset` and `limit` to sorted results.
    pub fn page(&self, runs: Vec<Run>) -> Vec<Run> {
        runs.into_iter()
            .skip(self.offset)
            .take(self.limit.unwrap_or(usize::MAX))
            .collect()
    }
}

/// Keeps the runs matching `query`, newest `started_at` first, paged: the
/// whole of `find` over runs already in memory.
pub fn filter_sorted(runs: Vec<Run>, query: &RunQuery) -> Result<Vec<Run>> {
    let matcher = query.matcher()?;
    let mut runs: Vec<Run> = runs
        .into_iter()
        .filter(|r| matcher.matches(&r.manifest))
        .collect();
    sort_newest_first(&mut runs);
    Ok(query.page(runs))
}

/// Newest start first (see [`crate::run::Manifest::start_order`]),
/// ties broken by id so the order is stable: the index's order exactly.
pub fn sort_newest_first(runs: &mut [Run]) {
    runs.sort_by(|a, b| {
        b.manifest
            .start_order()
            .cmp(&a.manifest.start_order())
            .then_with(|| a.id.cmp(&b.id))
    });
}

impl RunMatcher {
    /// The one definition of "this run matches the query".
    pub fn matches(&self, m: &Manifest) -> bool {
        let q = &self.query;
        if q.agent.as_ref().is_some_and(|a| *a != m.agent.name) {
            return false;
        }
        if let Some(w) = &q.workflow {
            let by_pattern = self
                .workflow_re
                .as_ref()
                .is_some_and(|re| re.is_match(&m.workflow.name));
            if *w != m.workflow.name && !by_pattern {
                return false;
            }
        }
        if q.status
            .as_ref()
            .is_some_and(|s| s != m.execution.status.as_str())
        {
            return false;
        }
        if q.user
            .as_ref()
            .is_some_and(|u| Some(u.as_str()) != m.execution.user.as_deref())
        {
            return false;
        }
        if q.tag.as_ref().is_some_and(|t| !m.tags.contains(t)) {
            return false;
        }
        if q.since.is_some_and(|s| m.started_at() < s) {
            return false;
        }
        if let Some(want) = &q.repo
            && let Some(have) = m.metadata.as_ref().and_then(Repository::in_map)
            && !have.matches(want)
        {
            return false;
        }
        if let Some(text) = &self.text {
            // Until the index answers with FTS: any string value, keys excluded.
            let value = serde_json::to_value(m).unwrap_or(Value::Null);
            if !any_string(&value, &|s| s.to_lowercase().contains(text.as_str())) {
                return false;
            }
        }
        true
    }
}

fn any_string(v: &Value, f: &dyn Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().any(|x| any_string(x, f)),
        Value::Object(o) => o.values().any(|x| any_string(x, f)),
        _ => false,
    }
}

/// A status a query may ask for: one a run can have, or [`UNKNOWN_STATUS`]
/// for run folders without a manifest. A typo is an error naming the words,
/// never an empty listing.
pub fn query_status(s: &str) -> Result<String> {
    if s.trim() == UNKNOWN_STATUS {
        return Ok(UNKNOWN_STATUS.to_string());
    }
    s.parse::<RunStatus>()
        .map(|st| st.to_string())
        .map_err(|_| {
            Error::invalid(
                "status",
                s,
                format!(
                    "expected one of: {}, {UNKNOWN_STATUS}",
                    RunStatus::KNOWN.join(", ")
                ),
            )
        })
}

/// Parses `--since`: an RFC 3339 timestamp, a date (midnight UTC), or an age
/// before `now` such as `30m`, `2h`, `3d`, `1w`.
pub fn parse_since(s: &str, now: Timestamp) -> Result<Timestamp> {
    if let Some(ts) = clock::parse(s) {
        return Ok(ts);
    }
    let age = crate::archive::Age::parse(s).map_err(|why| {
        Error::invalid(
            "since",
            s,
            format!("expected an RFC 3339 time (2025-10-05T23:01:45Z), a date (2025-10-05) or an age such as 30m, 2h, 3d, 1w ({why})"),
        )
    })?;
    Ok(age.before(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(agent: &str, workflow: &str, status: &str, started: &str) -> Manifest {
        serde_json::from_value(serde_json::json!({
            "session_id": "a3f2c9d1-4b5e-6789-01ab-cdef12345678",
            "agent": {"name": agent, "title": "T"},
            "workflow": {"name": workflow, "description": "Deep Requirements"},
            "execution": {"started_at": started, "status": status, "user": "bryan"},
            "tags": ["alpha"],
        }))
        .unwrap()
    }

    #[test]
    fn filters() {
        let m = manifest(
            "casey",
            "deep-dive-app",
            "completed",
            "2025-10-05T10:00:00Z",
        );
        let q = |f: fn(&mut RunQuery)| {
            let mut q = RunQuery::default();
            f(&mut q);
            q.matches(&m)
        };
        assert!(q(|_| {}));
        assert!(q(|q| q.agent = Some("casey".into())));
        assert!(!q(|q| q.agent = Some("cas".into())));
        assert!(q(|q| q.workflow = Some("^deep-dive-".into())));
        assert!(q(|q| q.workflow = Some("deep-dive-app".into())));
        assert!(!q(|q| q.workflow = Some("^intake".into())));
        assert!(q(|q| q.status = Some("completed".into())));
        assert!(!q(|q| q.status = Some("running".into())));
        assert!(q(|q| q.user = Some("bryan".into())));
        assert!(!q(|q| q.user = Some("Bryan".into())));
        assert!(q(|q| q.tag = Some("alpha".into())));
        assert!(!q(|q| q.tag = Some("beta".into())));
        assert!(q(|q| q.since = "2025-10-05T10:00:00Z".parse().ok()));
        assert!(!q(|q| q.since = "2025-10-05T10:00:01Z".parse().ok()));
        assert!(q(|q| q.text = Some("REQUIREMENTS".into())));
        assert!(
            !q(|q| q.text = Some("workflow".into())),
            "keys are not text"
        );
    }

    #[test]
    fn invalid_pattern_is_an_error_and_exact_match_still_works() {
        let m = manifest("casey", "a(b", "completed", "2025-10-05T10:00:00Z");
        let q = RunQuery {
            workflow: Some("a(b".into()),
            ..RunQuery::default()
        };
        assert!(q.matcher().unwrap_err().to_string().contains("a(b"));
        assert!(q.matches(&m));
    }

    #[test]
    fn paging_beyond_sqlite_integers_is_refused() {
        for q in [
            RunQuery {
                offset: RunQuery::MAX_PAGING + 1,
                ..RunQuery::default()
            },
            RunQuery {
                limit: Some(usize::MAX),
                ..RunQuery::default()
            },
        ] {
            let err = q.matcher().unwrap_err();
            assert!(matches!(err, Error::Invalid { .. }), "{err}");
        }
        assert!(
            RunQuery {
                offset: RunQuery::MAX_PAGING,
                limit: Some(RunQuery::MAX_PAGING),
                ..RunQuery::default()
            }
            .matcher()
            .is_ok()
        );
    }

    #[test]
    fn since_forms() {
        let now: Timestamp = "2025-10-05T12:00:00Z".parse().unwrap();
        assert_eq!(
            parse_since("2h", now).unwrap(),
            "2025-10-05T10:00:00Z".parse().unwrap()
        );
        assert_eq!(
            parse_since("3d", now).unwrap(),
            "2025-10-02T12:00:00Z".parse().unwrap()
        );
        assert_eq!(
            parse_since("2025-10-01", now).unwrap(),
            "2025-10-01T00:00:00Z".parse().unwrap()
        );
        assert!(
            parse_since("yesterday", now)
                .unwrap_err()
                .to_string()
                .contains("yesterday")
        );
        assert!(parse_since("5x", now).is_err());
    }
}

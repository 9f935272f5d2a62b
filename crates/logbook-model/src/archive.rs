//! The archive's rules as values: how old a run must be ([`Age`]), which
//! finished runs a policy moves ([`Retention`]), which runs an archive
//! takes ([`archivable`]), and the record a deleted run leaves behind
//! ([`Tombstone`]). The moving itself is `ops::archive`'s, through the store.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::run::{Run, RunStatus};

/// An age as a person writes it (`90d`, `12h`, `2w`, `30m`, `3 days`): how
/// long ago a run must have finished to be archived, and how far back
/// `--since` looks. The one reader of ages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Age {
    /// The length of time.
    pub span: Duration,
    /// A count of `unit`s, as given (for messages).
    pub count: u64,
    /// One of `s`, `m`, `h`, `d`, `w`.
    pub unit: char,
}

impl Age {
    /// Reads a whole number and a unit (`s`, `m`, `h`, `d`, `w`, or the
    /// words `sec`, `min`, `hour`, `day`, `week` and their plurals); the
    /// error says what was wrong and gives the form.
    pub fn parse(given: &str) -> Result<Age, String> {
        let t = given.trim();
        let form = "write a whole number and a unit: m (minutes), h (hours), d (days) or w (weeks), e.g. 90d, 12h, 2w";
        if t.is_empty() {
            return Err(format!("an age is needed; {form}"));
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, word) = t.split_at(split);
        let (unit, seconds) = match word.trim() {
            "s" | "sec" | "secs" => ('s', 1),
            "m" | "min" | "mins" => ('m', 60),
            "h" | "hour" | "hours" => ('h', 3600),
            "d" | "day" | "days" => ('d', 86_400),
            "w" | "week" | "weeks" => ('w', 7 * 86_400),
            "" => return Err(format!("{given:?} has no unit; {form}")),
            other => return Err(format!("{given:?}: {other:?} is not a unit; {form}")),
        };
        let count: u64 = digits
            .parse()
            .map_err(|_| format!("{given:?} is not a whole number of {unit}; {form}"))?;
        if count == 0 {
            return Err(format!("{given:?} is no age at all; {form}"));
        }
        let secs = count
            .checked_mul(seconds)
            .filter(|s| *s <= 100 * 366 * 86_400)
            .ok_or_else(|| format!("{given:?} is longer than a hundred years"))?;
        Ok(Age {
            span: Duration::from_secs(secs),
            count,
            unit,
        })
    }

    /// The instant `self` before `now`: runs finished before it are old enough.
    pub fn before(self, now: Timestamp) -> Timestamp {
        let span = jiff::SignedDuration::from_secs(self.span.as_secs() as i64);
        now.checked_sub(span).unwrap_or(Timestamp::MIN)
    }
}

impl std::fmt::Display for Age {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.count, self.unit)
    }
}

/// Checks that `status` is one a finished run can have: a run still
/// running is never archived, whatever a filter or a policy says.
pub fn archivable_status(status: &str) -> Result<RunStatus, String> {
    match status.trim().parse::<RunStatus>() {
        Ok(s @ (RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled)) => Ok(s),
        _ => Err(format!(
            "{status:?} is not a finished status; use completed, failed or cancelled (running runs are never archived)"
        )),
    }
}

/// The retention policy of `logbook.yaml`
/// (`retention: {archive_after: 90d, statuses: [completed, failed]}`),
/// applied only by `logbook archive --policy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// Runs finished longer ago than this are archived.
    pub archive_after: Age,
    /// Of these statuses ([`Retention::DEFAULT_STATUSES`] when not set).
    pub statuses: Vec<String>,
}

impl Retention {
    /// The statuses a policy without `statuses:` archives: every finished one.
    pub const DEFAULT_STATUSES: &[&str] = &["completed", "failed", "cancelled"];
}

/// Which finished runs an archive takes: finished before `before`, with
/// one of `statuses` (every finished status when empty).
#[derive(Debug, Clone)]
pub struct Selection {
    /// Runs must have finished before this instant.
    pub before: Timestamp,
    /// The statuses taken; empty: every finished status.
    pub statuses: Vec<RunStatus>,
}

/// Whether `run` is taken by `sel`: finished (never running), of a
/// selected status, and finished (else started, for a run that recorded
/// no end) before `sel.before`.
pub fn archivable(run: &Run, sel: &Selection) -> bool {
    let status = &run.manifest.execution.status;
    if !matches!(
        status,
        RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
    ) {
        return false;
    }
    if !sel.statuses.is_empty() && !sel.statuses.contains(status) {
        return false;
    }
    let ended = run
        .manifest
        .execution
        .completed_at
        .as_deref()
        .and_then(crate::clock::parse)
        .or_else(|| crate::clock::parse(&run.manifest.execution.started_at));
    ended.is_some_and(|t| t < sel.before)
}

/// What a deleted run leaves in `{archive_folder}/.tombstones/{id}.json`:
/// enough to say what it was and when it went, and its whole manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tombstone {
    /// The run's id.
    pub id: String,
    /// The folder it was deleted from.
    pub folder: String,
    /// `agent.name`.
    pub agent: String,
    /// `workflow.name`.
    pub workflow: String,
    /// Its status when deleted.
    pub status: String,
    /// `execution.started_at`.
    pub started_at: String,
    /// `execution.completed_at`, if it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// When it was deleted.
    pub deleted_at: String,
    /// Who deleted it (the configured user).
    pub by: String,
    /// Runs that linked to it, deleted anyway with `--force`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linked_from: Vec<String>,
    /// The manifest as it was, unknown keys and all.
    pub manifest: Value,
    /// Keys another tool added to the tombstone; kept on a rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Tombstone {
    /// The tombstone of `run` (its manifest as `raw` JSON), deleted `now` by `by`.
    pub fn of(run: &Run, raw: Value, by: &str, now: &str, linked_from: Vec<String>) -> Tombstone {
        let m = &run.manifest;
        Tombstone {
            id: run.id.to_string(),
            folder: run.folder.to_string_lossy().into_owned(),
            agent: m.agent.name.clone(),
            workflow: m.workflow.name.clone(),
            status: m.execution.status.to_string(),
            started_at: m.execution.started_at.clone(),
            completed_at: m.execution.completed_at.clone(),
            deleted_at: now.to_string(),
            by: by.to_string(),
            linked_from,
            manifest: raw,
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_and_refuse_with_the_form() {
        assert_eq!(Age::parse("90d").unwrap().span.as_secs(), 90 * 86_400);
        assert_eq!(Age::parse("12h").unwrap().span.as_secs(), 12 * 3600);
        assert_eq!(Age::parse("2w").unwrap().span.as_secs(), 14 * 86_400);
        assert_eq!(Age::parse(" 30m ").unwrap().to_string(), "30m");
        for bad in ["", "90", "d", "-3d", "1.5d", "0d", "3y", "99999999999w"] {
            let e = Age::parse(bad).unwrap_err();
            assert!(!e.is_empty(), "{bad}");
        }
        assert!(Age::parse("90").unwrap_err().contains("e.g. 90d"));
    }

    #[test]
    fn only_finished_statuses_are_archivable() {
        assert!(archivable_status("completed").is_ok());
        assert!(archivable_status("failed").is_ok());
        assert!(archivable_status("running").is_err());
        assert!(archivable_status("unknown").is_err());
    }
}

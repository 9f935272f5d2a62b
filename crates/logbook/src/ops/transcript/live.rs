//! Which transcripts are live: an agent is writing them now. The one rule,
//! [`live_at`], that every face asks through [`Liveness`].
//!
//! A session is live from its agent's SessionStart (a hook calls
//! [`began`]; any other hook of a session not seen starting, [`seen`]) or its first import by `transcript import --watch`
//! ([`import_watched`]), until its SessionEnd ([`ended`]), or until
//! [`IDLE`] passes without a change. The signals are what the store
//! already keeps plus one small mark per session
//! (`logbook_store::transcript::live`): the mark says when the session began and
//! whether it ended; the transcript file's modification time says when
//! it last changed, so a growing session costs no extra write. A plain
//! `transcript import` of old logs marks nothing: those sessions are
//! over.
//!
//! A subagent is live while its main session is marked running and its own
//! file changed within [`IDLE`]: a subagent has no SessionStart of its own.

use crate::Logbook;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::clock::{self, Timestamp};
use crate::error::Result;
use crate::model::ids::TranscriptId;
use crate::model::transcript::Summary;
use crate::ops::transcript::{ImportFormat, ImportReport, import_path};
use logbook_store::transcript::live::{self as mark, LiveMark};

/// How long a session stays live without a change: an agent thinking or
/// waiting on a long command writes nothing for minutes, but one whose
/// SessionEnd never came (killed, or Codex, which has none) must not stay
/// live for ever.
pub const IDLE: jiff::SignedDuration = jiff::SignedDuration::from_mins(10);

/// How long an ended session's mark is kept before [`ended`] clears it.
const KEEP_ENDED: jiff::SignedDuration = jiff::SignedDuration::from_hours(24);

/// The rule: live when marked as begun and not ended since, and when it
/// began or last `changed` (the transcript file's time) less than [`IDLE`]
/// before `now`.
pub fn live_at(mark: Option<&LiveMark>, changed: Option<Timestamp>, now: Timestamp) -> bool {
    let Some(m) = mark else { return false };
    let Some(since) = clock::parse(&m.since) else {
        return false;
    };
    if has_ended(m) {
        return false;
    }
    let last = changed.map_or(since, |c| c.max(since));
    now.duration_since(last) < IDLE
}

/// Whether the mark records an end after its start.
fn has_ended(m: &LiveMark) -> bool {
    let since = clock::parse(&m.since);
    m.ended_at
        .as_deref()
        .and_then(clock::parse)
        .is_some_and(|end| since.is_none_or(|s| end >= s))
}

/// Records that session `id`'s agent started (a SessionStart received
/// `at`), or was seen writing: live from now on. An event older than the
/// recorded end (a queued job done late) changes nothing.
pub fn began(p: &Logbook, id: &str, at: &str) -> Result<()> {
    let id = TranscriptId::parse(id)?;
    let old = mark::read(p, id.as_str());
    let at_ts = clock::parse(at);
    if let Some(m) = &old {
        let since = clock::parse(&m.since);
        let end = m.ended_at.as_deref().and_then(clock::parse);
        let newer = |t: Option<Timestamp>| matches!((at_ts, t), (Some(a), Some(t)) if a <= t);
        if newer(end) || (end.is_none() && newer(since)) {
            return Ok(());
        }
    }
    mark::write(
        p,
        id.as_str(),
        &LiveMark {
            since: at.to_string(),
            ended_at: None,
        },
    )
}

/// Records that session `id`'s agent is at work (a Stop, a compaction),
/// for a session whose start no hook saw (hooks installed mid-session):
/// live from now, as a SessionStart would make it. A marked session is
/// left as it is: its transcript's changes keep it live, and an event of
/// an ended one is a late job, not a new start.
pub fn seen(p: &Logbook, id: &str, at: &str) -> Result<()> {
    let id = TranscriptId::parse(id)?;
    if mark::read(p, id.as_str()).is_some() {
        return Ok(());
    }
    began(p, id.as_str(), at)
}

/// Records that session `id` ended `at` (its SessionEnd): no longer live.
/// Marks of sessions that ended more than a day ago are cleared here, the
/// one place that writes an end, so they do not pile up.
pub fn ended(p: &Logbook, id: &str, at: &str) -> Result<()> {
    let id = TranscriptId::parse(id)?;
    let since = mark::read(p, id.as_str()).map_or_else(|| at.to_string(), |m| m.since);
    mark::write(
        p,
        id.as_str(),
        &LiveMark {
            since,
            ended_at: Some(at.to_string()),
        },
    )?;
    let now = p.clock.now();
    for (other, m) in mark::read_all(p) {
        let old = m
            .ended_at
            .as_deref()
            .and_then(clock::parse)
            .is_some_and(|end| now.duration_since(end) > KEEP_ENDED);
        if old {
            mark::remove(p, &other)?;
        }
    }
    Ok(())
}

/// `transcript import --watch`'s import of a file that changed: imports it
/// and marks each transcript it wrote as live (a session seen growing is
/// running).
pub fn import_watched(p: &Logbook, file: &Path, format: ImportFormat) -> Result<ImportReport> {
    let report = import_path(p, file, format, None)?;
    let now = p.clock.now_string();
    for written in report.imported.iter().chain(&report.updated) {
        if written.parent_session_id.is_none() {
            began(p, &written.id, &now)?;
        }
    }
    Ok(report)
}

/// What a viewer following one transcript looks at each second: enough to
/// tell that it changed, and whether it is still live.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Watched {
    /// The stored file's size.
    pub len: u64,
    /// When it last changed.
    pub changed: Option<Timestamp>,
    /// Whether an agent is writing it now.
    pub live: bool,
}

/// [`Watched`] of transcript `id` (as [`super::resolve`] takes it): a stat
/// and a read of the file's head, never its messages; an archived one is
/// over.
pub fn watch(p: &Logbook, id: &str) -> Result<Watched> {
    let id = super::resolve(p, id)?;
    let Some((_, path)) =
        logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str())
    else {
        return Ok(Watched {
            len: 0,
            changed: None,
            live: false,
        });
    };
    let head = logbook_store::transcript::read_head(&path)?;
    let parent = head.metadata.parent_session_id.as_deref();
    Ok(Watched {
        len: logbook_store::fs::size(&path),
        changed: mark::modified(&path),
        live: Liveness::read_for(p, parent.unwrap_or(id.as_str())).of(id.as_str(), &path, parent),
    })
}

/// Which of the sessions `ids` (a work session's agent sessions) are live;
/// ids naming no stored transcript are not.
pub fn live_among<'a>(p: &Logbook, ids: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let liveness = Liveness::read(p);
    ids.into_iter()
        .filter(|id| {
            TranscriptId::parse(id).is_ok_and(|id| {
                logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str())
                    .is_some_and(|(_, path)| liveness.of(id.as_str(), &path, None))
            })
        })
        .map(str::to_string)
        .collect()
}

/// The marks read once, to judge many transcripts at one time.
#[derive(Debug, Clone)]
pub struct Liveness {
    marks: HashMap<String, LiveMark>,
    now: Timestamp,
}

impl Liveness {
    /// Reads the marks; "now" is the library's clock.
    pub fn read(p: &Logbook) -> Liveness {
        Liveness {
            marks: mark::read_all(p).into_iter().collect(),
            now: p.clock.now(),
        }
    }

    /// One session's mark only: what judging one transcript needs.
    fn read_for(p: &Logbook, id: &str) -> Liveness {
        // A parent id read from a file is validated before it names one.
        let marks = TranscriptId::parse(id)
            .ok()
            .and_then(|id| Some((id.to_string(), mark::read(p, id.as_str())?)));
        Liveness {
            marks: marks.into_iter().collect(),
            now: p.clock.now(),
        }
    }

    /// Whether transcript `id`, stored in `file`, is live; a subagent's
    /// (with `parent`) while its main session is marked running.
    pub fn of(&self, id: &str, file: &Path, parent: Option<&str>) -> bool {
        let key = parent.unwrap_or(id).to_ascii_lowercase();
        let Some(m) = self.marks.get(&key) else {
            return false;
        };
        let changed = mark::modified(file);
        match parent {
            None => live_at(Some(m), changed, self.now),
            // The subagent's own change counts, not its main session's start.
            Some(_) => !has_ended(m) && changed.is_some_and(|c| self.now.duration_since(c) < IDLE),
        }
    }

    /// The ids of `rows` that are live.
    pub fn of_rows(&self, rows: &[Summary]) -> BTreeSet<String> {
        rows.iter()
            .filter(|t| self.of(&t.id, &t.file, t.parent_session_id.as_deref()))
            .map(|t| t.id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn m(since: &str, ended: Option<&str>) -> LiveMark {
        LiveMark {
            since: since.into(),
            ended_at: ended.map(Into::into),
        }
    }

    #[test]
    fn live_from_its_start_until_its_end_or_ten_idle_minutes() {
        let start = "2026-01-18T10:00:00Z";
        let now = |s: &str| ts(s);
        assert!(!live_at(None, None, now("2026-01-18T10:01:00Z")));
        let begun = m(start, None);
        assert!(live_at(Some(&begun), None, now("2026-01-18T10:09:59Z")));
        assert!(!live_at(Some(&begun), None, now("2026-01-18T10:10:00Z")));
        // A change keeps it live ten minutes more.
        let changed = Some(ts("2026-01-18T10:30:00Z"));
        assert!(live_at(Some(&begun), changed, now("2026-01-18T10:39:00Z")));
        assert!(!live_at(Some(&begun), changed, now("2026-01-18T10:41:00Z")));
        // Ended: not live, however fresh the change.
        let over = m(start, Some("2026-01-18T10:05:00Z"));
        assert!(!live_at(Some(&over), changed, now("2026-01-18T10:31:00Z")));
        // Started again after its end (a resume): live again.
        let resumed = m("2026-01-18T10:06:00Z", Some("2026-01-18T10:05:00Z"));
        assert!(live_at(Some(&resumed), None, now("2026-01-18T10:07:00Z")));
    }
}

//! Export cursors: what `logbook export` has already handed to each
//! receiver, so that a second export sends nothing new.
//!
//! A cursor is a high-water mark per endpoint,
//! `{state dir}/export-cursors/<hash of the endpoint>.mark.json`
//! ([`ExportMark`]): per kind of record and selection, a *floor* — every
//! record it selects whose file last changed at or before that instant was
//! delivered as it is — and, for the records changed after the floor, the
//! hash of each one's key and of the fingerprint it was sent with. The
//! change time is the file's ctime ([`changed_ns`]): it moves whenever the
//! file is written, copied, checked out or extracted, whatever times the
//! record itself carries, and an index rebuild leaves it alone, so the
//! mark survives one. The mark's size does not grow with the history: the
//! records after the floor are those changed in the last
//! [`SLACK_NS`], at most [`RECENT_CAP`] per kind kept past a failure.
//!
//! Like an import checkpoint it is a cache, never a record: a missing or
//! unreadable cursor costs a full export with the same ids, never a wrong
//! one. The cursor of earlier versions (`<hash>.json`, a map of every
//! record key to its fingerprint) is read once, streamed into the mark's
//! recent records, and removed once the mark is saved.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use logbook_model::agent_log::{FNV_OFFSET, fnv1a64};
use logbook_model::error::{Error, Result};

/// Bumped when the mark's shape or the fingerprints change meaning: an
/// older mark is then ignored (everything is sent again, same ids).
pub const MARK_VERSION: u64 = 2;

/// The version of the map-of-every-record cursor, read for migration only.
const LEGACY_VERSION: u64 = 1;

/// How long before an export's listing a file must have changed for the
/// floor to cover it: longer than any write takes between a file's change
/// time and its record showing in a listing, so no record changed just
/// before the listing is passed over unseen.
pub const SLACK_NS: i64 = 60_000_000_000;

/// How many records changed after its floor a kind keeps: past a failed
/// export (whose floor does not move) the oldest of the rest are
/// forgotten, and at worst sent again, with the same ids.
pub const RECENT_CAP: usize = 20_000;

/// Hashes of a record key and its fingerprint, and its change time (ns).
type Recent = HashMap<u64, (u64, i64)>;

/// What one endpoint has been sent: floors and the records past them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportMark {
    /// [`MARK_VERSION`].
    pub version: u64,
    /// The endpoint the cursor is about, as shown: without user info or
    /// query (for a person reading the folder; the file name is its hash).
    pub endpoint: String,
    /// Per selection (a kind, alone for all of its records or with the
    /// filters that chose them): every record of it whose file changed at
    /// or before this instant (ns since the epoch) was delivered as it is.
    pub floors: BTreeMap<String, i64>,
    /// Per kind: records delivered that no floor covers yet, by the hash of
    /// their key: the hash of their fingerprint and their change time.
    pub recent: BTreeMap<String, Recent>,
    /// Whether it was read from a file (then a change is worth saving
    /// even when an export delivered nothing).
    #[serde(skip)]
    pub stored: bool,
}

/// One record as an export weighs it against the mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its kind (`run`, `transcript`, `work-session`).
    pub kind: &'static str,
    /// Its key, `<kind>:<id>`.
    pub key: String,
    /// When its file last changed ([`changed_ns`]); `None` when it cannot
    /// be asked (then only its fingerprint decides).
    pub changed: Option<i64>,
    /// What its spans depend on: a change sends it again.
    pub fingerprint: String,
}

impl ExportMark {
    /// An empty mark for `endpoint`.
    pub fn new(endpoint: &str) -> ExportMark {
        ExportMark {
            version: MARK_VERSION,
            endpoint: endpoint.to_string(),
            ..ExportMark::default()
        }
    }

    /// Whether `rec`, as it is now, was delivered: under the floor of its
    /// `selection` or of all its kind's records, or remembered with the
    /// same fingerprint.
    pub fn has(&self, selection: &str, rec: &Record) -> bool {
        let floor = [selection, rec.kind]
            .iter()
            .filter_map(|s| self.floors.get(*s))
            .max();
        if let (Some(floor), Some(changed)) = (floor, rec.changed)
            && changed <= *floor
        {
            return true;
        }
        self.recent
            .get(rec.kind)
            .and_then(|r| r.get(&hash(&rec.key)))
            .is_some_and(|(fp, _)| *fp == hash(&rec.fingerprint))
    }

    /// Notes when `rec`, found delivered as it is, last changed, so that
    /// its entry goes once a floor covers that time (an earlier cursor's
    /// entries come without one).
    pub fn seen(&mut self, rec: &Record) {
        if let Some(entry) = self
            .recent
            .get_mut(rec.kind)
            .and_then(|r| r.get_mut(&hash(&rec.key)))
            .filter(|(fp, _)| *fp == hash(&rec.fingerprint))
        {
            entry.1 = rec.changed.unwrap_or(i64::MAX);
        }
    }

    /// Remembers that `rec` was delivered.
    pub fn remember(&mut self, rec: &Record) {
        let recent = self.recent.entry(rec.kind.to_string()).or_default();
        recent.insert(
            hash(&rec.key),
            (hash(&rec.fingerprint), rec.changed.unwrap_or(i64::MAX)),
        );
        cap(recent);
    }

    /// Raises the floor of `selection` (of kind `kind`) to `to` once every
    /// record it selects that changed by then was delivered, and forgets
    /// the records it now covers.
    pub fn raise_floor(&mut self, selection: &str, kind: &str, to: i64) {
        let floor = self.floors.entry(selection.to_string()).or_insert(to);
        *floor = (*floor).max(to);
        let floor = *floor;
        if let Some(recent) = self.recent.get_mut(kind) {
            recent.retain(|_, (_, changed)| *changed > floor);
        }
    }
}

/// Keeps at most [`RECENT_CAP`] records, the most recently changed, once
/// twice that many gathered (so the trim is paid once per cap's worth).
fn cap(recent: &mut Recent) {
    if recent.len() <= 2 * RECENT_CAP {
        return;
    }
    let mut times: Vec<i64> = recent.values().map(|(_, t)| *t).collect();
    let cut = times.len() - RECENT_CAP;
    let (_, at, _) = times.select_nth_unstable(cut);
    let at = *at;
    // Ties at the cut (the records of an earlier cursor share one time)
    // are kept only as far as the cap allows.
    let later = recent.values().filter(|(_, t)| *t > at).count();
    let mut ties = RECENT_CAP.saturating_sub(later);
    recent.retain(|_, (_, t)| {
        let keep = *t > at || (*t == at && ties > 0);
        if keep && *t == at {
            ties -= 1;
        }
        keep
    });
}

fn hash(text: &str) -> u64 {
    fnv1a64(text.as_bytes(), FNV_OFFSET)
}

/// When the file at `path` last changed (its ctime, ns since the epoch):
/// what the mark compares, as no program sets it back.
pub fn changed_ns(path: &Path) -> Option<i64> {
    use std::os::unix::fs::MetadataExt as _;
    let m = std::fs::metadata(path).ok()?;
    m.ctime()
        .checked_mul(1_000_000_000)?
        .checked_add(m.ctime_nsec())
}

/// The folder of a project's export cursors, under its state dir.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("export-cursors")
}

/// The mark file of `endpoint` (as shown: never with credentials).
pub(crate) fn path_of(dir: &Path, endpoint: &str) -> PathBuf {
    dir.join(format!("{}.mark.json", endpoint_hash(endpoint)))
}

/// The cursor file of `endpoint` earlier versions wrote.
fn legacy_path_of(dir: &Path, endpoint: &str) -> PathBuf {
    dir.join(format!("{}.json", endpoint_hash(endpoint)))
}

/// The name of the lock an export to `endpoint` holds while it runs, so
/// two exports to one receiver do not both send everything.
pub fn lock_name(endpoint: &str) -> String {
    format!("export-{}", endpoint_hash(endpoint))
}

fn endpoint_hash(endpoint: &str) -> String {
    format!("{:016x}", hash(endpoint))
}

/// The mark of `endpoint`: its file; else one derived from an earlier
/// version's cursor; else an empty one (also when a file is of another
/// version or endpoint, or cannot be read: a cache, the cost is sending
/// again with the same ids).
pub fn load(dir: &Path, endpoint: &str) -> ExportMark {
    let stored = read_json::<ExportMark>(&path_of(dir, endpoint))
        .filter(|m| m.version == MARK_VERSION && m.endpoint == endpoint);
    if let Some(mut mark) = stored {
        mark.stored = true;
        return mark;
    }
    let legacy = read_json::<Legacy>(&legacy_path_of(dir, endpoint))
        .filter(|l| l.version == LEGACY_VERSION && l.endpoint == endpoint);
    match legacy {
        Some(legacy) => ExportMark {
            recent: legacy.sent.0,
            stored: true,
            ..ExportMark::new(endpoint)
        },
        None => ExportMark::new(endpoint),
    }
}

/// The JSON file at `path`, streamed (an earlier version's cursor may be
/// larger than the memory an export has); `None` when it is missing or
/// unreadable.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let file = std::fs::File::open(path).ok()?;
    serde_json::from_reader(std::io::BufReader::new(file)).ok()
}

/// An earlier version's cursor: every record key with its fingerprint.
#[derive(Deserialize)]
struct Legacy {
    version: u64,
    endpoint: String,
    sent: LegacySent,
}

/// Its records, folded into recent records as they are read, the map
/// itself never held: their change times are unknown, so the first floor
/// raised covers them.
struct LegacySent(BTreeMap<String, Recent>);

impl<'de> Deserialize<'de> for LegacySent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Fold;
        impl<'de> serde::de::Visitor<'de> for Fold {
            type Value = LegacySent;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of record keys to fingerprints")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<LegacySent, A::Error> {
                let mut out: BTreeMap<String, Recent> = BTreeMap::new();
                while let Some((key, fingerprint)) = map.next_entry::<String, String>()? {
                    let kind = key.split_once(':').map_or(key.as_str(), |(k, _)| k);
                    let recent = out.entry(kind.to_string()).or_default();
                    recent.insert(hash(&key), (hash(&fingerprint), i64::MIN));
                    cap(recent);
                }
                Ok(LegacySent(out))
            }
        }
        d.deserialize_map(Fold)
    }
}

/// Writes `mark` atomically, readable by its owner only, in a folder
/// only its owner enters (made when missing): what was sent where is
/// nobody else's business. An earlier version's cursor it replaces is
/// removed then.
pub fn save(dir: &Path, mark: &ExportMark) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = path_of(dir, &mark.endpoint);
    let text = serde_json::to_vec(mark).map_err(|e| Error::Corrupt {
        path: path.clone(),
        what: "export cursor",
        reason: e.to_string(),
    })?;
    crate::write_atomic_private(&path, &text)?;
    // A folder an older version made with the default mode is closed too
    // (the private write makes only a missing one owner-only).
    std::fs::set_permissions(
        dir,
        std::fs::Permissions::from_mode(crate::fs::PRIVATE_FOLDER_MODE),
    )
    .map_err(|e| Error::io(dir, e))?;
    let legacy = legacy_path_of(dir, &mark.endpoint);
    match std::fs::remove_file(&legacy) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&legacy, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, changed: Option<i64>, fp: &str) -> Record {
        Record {
            kind: "run",
            key: format!("run:{id}"),
            changed,
            fingerprint: fp.into(),
        }
    }

    #[test]
    fn a_floor_covers_what_changed_before_it_and_recent_records_their_fingerprint() {
        let mut m = ExportMark::new("e");
        let old = rec("a", Some(10), "x");
        let new = rec("b", Some(100), "y");
        assert!(!m.has("run", &old) && !m.has("run", &new));
        m.remember(&old);
        m.remember(&new);
        assert!(m.has("run", &old) && m.has("run", &new));
        assert!(!m.has("run", &rec("b", Some(100), "changed")));
        m.raise_floor("run", "run", 50);
        assert_eq!(m.recent["run"].len(), 1, "the floor covers a");
        assert!(m.has("run", &old) && m.has("run", &new));
        // A selection's own floor, or its kind's, covers it.
        assert!(m.has("run {\"agent\":\"x\"}", &rec("c", Some(40), "z")));
        assert!(!m.has("run {\"agent\":\"x\"}", &rec("c", Some(60), "z")));
        // A record whose change time is unknown is decided by its fingerprint.
        assert!(!m.has("run", &rec("d", None, "z")));
    }

    #[test]
    fn recent_records_stay_within_the_cap_keeping_the_latest() {
        let mut m = ExportMark::new("e");
        for i in 0..(2 * RECENT_CAP + 1) {
            m.remember(&rec(&i.to_string(), Some(i as i64), "f"));
        }
        assert_eq!(m.recent["run"].len(), RECENT_CAP);
        let last = 2 * RECENT_CAP;
        assert!(m.has("run", &rec(&last.to_string(), Some(last as i64), "f")));
        assert!(!m.has("run", &rec("0", Some(0), "f")));
    }

    /// What the property test does between two exports.
    #[derive(Debug, Clone)]
    enum Step {
        /// Record `n` is written (a new fingerprint, changed now).
        Write(usize),
        /// Time passes (seconds).
        Wait(i64),
        /// An export lists every record and delivers the first `k` it sends
        /// (all of them when `k` is past the end; the floor moves only then).
        Export(usize),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (0..6usize).prop_map(Step::Write),
            (0..200i64).prop_map(Step::Wait),
            (0..8usize).prop_map(Step::Export),
        ]
    }

    proptest::proptest! {
        /// Whatever the writes, waits and failed deliveries, the mark never
        /// says a record was delivered as it is when it was not, and an
        /// export right after a complete one sends nothing.
        #[test]
        fn the_mark_never_skips_a_record_that_was_not_delivered_as_it_is(
            steps in proptest::collection::vec(step(), 1..60),
        ) {
            let second = 1_000_000_000i64;
            let mut now = 1_000 * second;
            // Per record: its version and change time, and the versions delivered.
            let mut records: Vec<Option<(u32, i64)>> = vec![None; 6];
            let mut delivered: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); 6];
            let mut m = ExportMark::new("e");
            let as_rec = |n: usize, (v, at): (u32, i64)| rec(&n.to_string(), Some(at), &v.to_string());
            for s in steps {
                match s {
                    Step::Write(n) => {
                        now += 1;
                        let v = records[n].map_or(0, |(v, _)| v + 1);
                        records[n] = Some((v, now));
                    }
                    Step::Wait(secs) => now += secs * second,
                    Step::Export(k) => {
                        let floor = now - SLACK_NS;
                        let mut sent = 0;
                        let mut complete = true;
                        for (n, r) in records.iter().enumerate() {
                            let Some(r) = *r else { continue };
                            let rec = as_rec(n, r);
                            if m.has("run", &rec) {
                                proptest::prop_assert!(delivered[n].contains(&r.0), "{n} skipped undelivered");
                                m.seen(&rec);
                                continue;
                            }
                            if sent == k {
                                complete = false;
                                break;
                            }
                            sent += 1;
                            m.remember(&rec);
                            delivered[n].insert(r.0);
                        }
                        if complete {
                            m.raise_floor("run", "run", floor);
                            for (n, r) in records.iter().enumerate() {
                                if let Some(r) = *r {
                                    proptest::prop_assert!(m.has("run", &as_rec(n, r)), "{n} sent again");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn an_earlier_cursor_is_read_into_the_mark_and_removed_once_it_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = legacy_path_of(dir.path(), "http://r/v1/traces");
        std::fs::write(
            &legacy,
            r#"{"version":1,"endpoint":"http://r/v1/traces","sent":{"run:a":"completed|t|1|0","transcript:b":"t|3"}}"#,
        )
        .unwrap();
        let m = load(dir.path(), "http://r/v1/traces");
        assert!(m.stored);
        assert!(m.has("run", &rec("a", Some(5), "completed|t|1|0")));
        assert!(!m.has("run", &rec("a", Some(5), "completed|t|2|0")));
        let t = Record {
            kind: "transcript",
            key: "transcript:b".into(),
            changed: Some(5),
            fingerprint: "t|3".into(),
        };
        assert!(m.has("transcript", &t));
        // Once seen with its change time, a floor under it keeps it.
        let mut m = m;
        m.seen(&rec("a", Some(500), "completed|t|1|0"));
        m.raise_floor("run", "run", 100);
        assert!(m.has("run", &rec("a", Some(500), "completed|t|1|0")));
        save(dir.path(), &m).unwrap();
        assert!(!legacy.exists());
        let again = load(dir.path(), "http://r/v1/traces");
        assert!(again.has("transcript", &t));
        // Another endpoint's file is not this one's.
        assert!(load(dir.path(), "http://other/v1/traces").recent.is_empty());
    }
}

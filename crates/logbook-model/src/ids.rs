//! The ids that become parts of paths and lock names. Each is validated once,
//! when it is made from text, and then owns how it is spelled on disk, so no
//! other code joins an unchecked string onto a folder.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::error::{Error, Next, Result, Step};

/// A run's id: an RFC 4122 UUID in hyphenated form (any version on read;
/// Logbook creates v4). It names the run folder.
///
/// Held in lowercase: `A3F2…` and `a3f2…` are one run, with one lock. The
/// folder on disk may be spelled in either case (another tool made it); the
/// store finds it whatever its case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// Checks `id` before it becomes part of a path.
    pub fn parse(id: &str) -> Result<RunId> {
        if is_hyphenated_uuid(id) {
            Ok(RunId(id.to_ascii_lowercase()))
        } else {
            Err(Error::invalid(
                "run id",
                id,
                "expected a UUID such as 3f2c9d14-4b5e-4789-81ab-cdef12345678",
            )
            .with_next(Next::of(Step::find_runs(), " lists runs")))
        }
    }

    /// A new random (v4) id.
    pub fn new_v4() -> RunId {
        RunId(uuid::Uuid::new_v4().to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The run's folder inside `agent_outputs_folder`, spelled in
    /// lowercase (how Logbook creates it; `store::run::locate` finds an
    /// existing one whatever its case).
    pub fn folder(&self, agent_outputs_folder: &Path) -> PathBuf {
        agent_outputs_folder.join(&self.0)
    }

    /// The name of the lock its writers hold.
    pub fn lock_name(&self) -> String {
        format!("run-{}", self.0)
    }
}

/// A work session's id, `{PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}` with an
/// optional `-N` suffix (DESIGN §8). It names the session's YAML file, its
/// workflow state and their archives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct WorkSessionId(String);

/// The longest work session id, in bytes. The id names files and locks, and
/// the longest name built from it, a temp file beside its workflow state
/// (`.{id}.state.json.{pid}.{uuid}.tmp`), adds 57 bytes; file names stop at
/// 255 bytes on Linux and macOS. A round number well inside that.
pub const MAX_SESSION_ID_LEN: usize = 180;

static SESSION_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Z]{2,5}[0-9]{6}-[A-Z0-9]+-[A-Z0-9]+(-[0-9]+)?$")
        .unwrap_or_else(|_| unreachable!("the pattern is a literal"))
});

impl WorkSessionId {
    /// Checks `id` before it becomes part of a path.
    pub fn parse(id: &str) -> Result<WorkSessionId> {
        if id.len() > MAX_SESSION_ID_LEN {
            return Err(Error::IdTooLong {
                id: id.to_string(),
                max: MAX_SESSION_ID_LEN,
            });
        }
        if SESSION_ID.is_match(id) {
            Ok(WorkSessionId(id.to_string()))
        } else {
            Err(Error::invalid(
                "work session id",
                id,
                "expected {PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}, e.g. SES202501-ACME-AUDIT (capital letters and digits, optional -N suffix)",
            ))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `{dir}/{id}.yaml`.
    pub fn session_file(&self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.yaml", self.0))
    }

    /// `{dir}/{id}.state.json`: the workflow state (seed 004).
    pub fn state_file(&self, dir: &Path) -> PathBuf {
        dir.join(format!("{}.state.json", self.0))
    }

    /// The names of everything that belongs to the session in `sessions_dir`
    /// and moves with it to the archive.
    pub fn companions(&self) -> [String; 3] {
        [
            format!("{}.yaml", self.0),
            format!("{}.state.json", self.0),
            format!("{}.history", self.0),
        ]
    }

    /// The lock its session file's writers hold.
    pub fn lock_name(&self) -> String {
        format!("session-{}", self.0)
    }

    /// The lock its workflow state's writers hold.
    pub fn state_lock_name(&self) -> String {
        format!("state-{}", self.0)
    }
}

/// A transcript's id: a hyphenated UUID, held in lowercase so two spellings
/// of one UUID are one transcript, or an id of the seed's own engine before
/// it used UUIDs (`session_1700000000_abc12345`), kept as written. Its short
/// id names the file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TranscriptId(String);

impl TranscriptId {
    /// Checks `id` before it becomes part of a file name.
    pub fn parse(id: &str) -> Result<TranscriptId> {
        if is_hyphenated_uuid(id) {
            Ok(TranscriptId(id.to_ascii_lowercase()))
        } else if legacy_parts(id).is_some() {
            Ok(TranscriptId(id.to_string()))
        } else {
            Err(Error::invalid(
                "transcript id",
                id,
                "expected a UUID such as 6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f (or a seed-003 id such as session_1700000000_abc12345)",
            ))
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last 8 characters, which name its file.
    pub fn short(&self) -> &str {
        short_id(&self.0)
    }

    /// The lock its writers hold. Ids sharing a short id share the lock, so
    /// deciding which one gets the short file name is serialised.
    pub fn lock_name(&self) -> String {
        format!("transcript-{}", self.short())
    }
}

/// The part of an id that names its file, as seed 003's
/// `getSessionFilePath` takes it: the third `_`-separated part of a legacy
/// id, else the last 8 characters.
pub fn short_id(id: &str) -> &str {
    if let Some((_, _, random)) = legacy_parts(id) {
        return random;
    }
    let start = id.char_indices().rev().nth(7).map_or(0, |(i, _)| i);
    &id[start..]
}

/// The three parts of a legacy transcript id `{word}_{digits}_{alnum}`
/// (the seed engine's `session_{Date.now()}_{random}`), or `None`. Every
/// part is plain ASCII, so the id is safe in a file name.
fn legacy_parts(id: &str) -> Option<(&str, &str, &str)> {
    let mut parts = id.split('_');
    let (word, digits, random) = (parts.next()?, parts.next()?, parts.next()?);
    let ok = parts.next().is_none()
        && (1..=32).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && (1..=20).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (1..=64).contains(&random.len())
        && random.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then_some((word, digits, random))
}

/// Whether `id` is a legacy seed-003 transcript id rather than a UUID.
pub fn is_legacy_transcript_id(id: &str) -> bool {
    legacy_parts(id).is_some()
}

/// The shortest id prefix commands accept in place of a whole UUID (as `git`
/// and `jj` accept a unique prefix of a commit id).
pub const MIN_PREFIX: usize = 8;

/// How a run or transcript id argument names its record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdArg {
    /// A whole id: a UUID, lowercased, or a legacy transcript id as given.
    Full(String),
    /// The start of one (at least [`MIN_PREFIX`] characters), lowercased.
    Prefix(String),
}

impl IdArg {
    /// Reads a whole UUID (any case) or a prefix of at least [`MIN_PREFIX`]
    /// hex digits and hyphens; `what` names the id in the error and `lists`
    /// the step that lists them.
    pub fn parse(what: &'static str, text: &str, lists: impl Into<Next>) -> Result<IdArg> {
        let t = text.trim();
        if is_hyphenated_uuid(t) {
            return Ok(IdArg::Full(t.to_ascii_lowercase()));
        }
        if legacy_parts(t).is_some() {
            return Ok(IdArg::Full(t.to_string()));
        }
        let hexish = t.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        if hexish && t.len() >= MIN_PREFIX && t.len() < 36 && !t.starts_with('-') {
            return Ok(IdArg::Prefix(t.to_ascii_lowercase()));
        }
        Err(Error::invalid(
            what,
            text,
            format!(
                "expected a UUID such as 3f2c9d14-4b5e-4789-81ab-cdef12345678, or its first {MIN_PREFIX} or more characters"
            ),
        )
        .with_next(lists))
    }
}

/// A run named by a face: a whole UUID, or a unique prefix of one. Parsed
/// here once, so the CLI, MCP and the web accept the same spellings; which
/// run a prefix names is for the backend asked (`ops::query`) to say.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunRef {
    /// A whole UUID, lowercased.
    Full(RunId),
    /// The start of one (at least [`MIN_PREFIX`] characters), lowercased.
    Prefix(String),
}

impl RunRef {
    /// Reads a whole UUID (any case) or a prefix of at least
    /// [`MIN_PREFIX`] hex digits and hyphens.
    pub fn parse(text: &str) -> Result<RunRef> {
        match IdArg::parse("run id", text, Next::of(Step::find_runs(), " lists runs"))? {
            IdArg::Full(id) => RunId::parse(&id).map(RunRef::Full),
            IdArg::Prefix(prefix) => Ok(RunRef::Prefix(prefix)),
        }
    }

    /// The id or prefix as given (lowercased), for messages.
    pub fn as_str(&self) -> &str {
        match self {
            RunRef::Full(id) => id.as_str(),
            RunRef::Prefix(p) => p,
        }
    }
}

impl From<RunId> for RunRef {
    fn from(id: RunId) -> RunRef {
        RunRef::Full(id)
    }
}

impl std::fmt::Display for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn is_hyphenated_uuid(id: &str) -> bool {
    id.len() == 36
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && uuid::Uuid::try_parse(id).is_ok()
}

macro_rules! id_traits {
    ($($name:ident),+) => {$(
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                Self::parse(s)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    )+};
}

id_traits!(RunId, WorkSessionId, TranscriptId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids() {
        assert!(RunId::parse("a3f2c9d1-4b5e-6789-01ab-cdef12345678").is_ok());
        assert!(RunId::parse(RunId::new_v4().as_str()).is_ok());
        for bad in [
            "",
            "..",
            "a3f2c9d14b5e678901abcdef12345678",
            "../../etc/passwd",
            "a3f2c9d1-4b5e-6789-01ab-cdef1234567/",
            "{a3f2c9d1-4b5e-6789-01ab-cdef123456}",
        ] {
            assert!(RunId::parse(bad).is_err(), "{bad}");
        }
        let id = RunId::parse("a3f2c9d1-4b5e-6789-01ab-cdef12345678").unwrap();
        assert_eq!(
            id.folder(Path::new("/o")),
            Path::new("/o/a3f2c9d1-4b5e-6789-01ab-cdef12345678")
        );
        assert_eq!(id.lock_name(), "run-a3f2c9d1-4b5e-6789-01ab-cdef12345678");
        assert_eq!(
            RunId::parse("A3F2C9D1-4B5E-6789-01AB-CDEF12345678").unwrap(),
            id,
            "one run whatever the case"
        );
    }

    #[test]
    fn id_arguments() {
        assert_eq!(
            IdArg::parse("run id", " A3F2C9D1-4b5e-6789-01ab-cdef12345678", "").unwrap(),
            IdArg::Full("a3f2c9d1-4b5e-6789-01ab-cdef12345678".into())
        );
        assert_eq!(
            IdArg::parse("run id", "A3F2C9D1", "").unwrap(),
            IdArg::Prefix("a3f2c9d1".into())
        );
        assert_eq!(
            IdArg::parse("run id", "a3f2c9d1-4b", "").unwrap(),
            IdArg::Prefix("a3f2c9d1-4b".into())
        );
        for bad in [
            "a3f2c9d",
            "",
            "../../etc",
            "a3f2c9d1/",
            "zzzzzzzz",
            "-a3f2c9d1",
        ] {
            assert!(IdArg::parse("run id", bad, "").is_err(), "{bad:?}");
        }
    }

    #[test]
    fn run_refs() {
        assert_eq!(
            RunRef::parse(" A3F2C9D1-4b5e-4789-81ab-cdef12345678").unwrap(),
            RunRef::Full(RunId::parse("a3f2c9d1-4b5e-4789-81ab-cdef12345678").unwrap())
        );
        assert_eq!(
            RunRef::parse("A3F2C9D1").unwrap(),
            RunRef::Prefix("a3f2c9d1".into())
        );
        for bad in ["a3f2c9d", "session_1700000000_abc12345", "../../etc", ""] {
            assert!(RunRef::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn work_session_ids() {
        assert!(WorkSessionId::parse("SES202501-ACME-AUDIT").is_ok());
        assert!(WorkSessionId::parse("SES202501-ACME-AUDIT-2").is_ok());
        for bad in [
            "../etc",
            "ses202501-acme-audit",
            "SES2025-ACME-AUDIT",
            "SES202501-ACME",
        ] {
            assert!(WorkSessionId::parse(bad).is_err(), "{bad}");
        }
        let id = WorkSessionId::parse("SES202501-ACME-AUDIT").unwrap();
        assert_eq!(
            id.session_file(Path::new("/s")),
            Path::new("/s/SES202501-ACME-AUDIT.yaml")
        );
        assert_eq!(
            id.state_file(Path::new("/s")),
            Path::new("/s/SES202501-ACME-AUDIT.state.json")
        );
    }

    #[test]
    fn the_longest_session_id_fits_in_every_name_made_from_it() {
        let id = format!("SES202501-{}-B", "A".repeat(MAX_SESSION_ID_LEN - 12));
        let id = WorkSessionId::parse(&id).unwrap();
        assert_eq!(id.as_str().len(), MAX_SESSION_ID_LEN);
        let temp_overhead = ".".len() + ".4194304.".len() + 32 + ".tmp".len();
        let mut names: Vec<String> = id.companions().to_vec();
        names.push(format!("{}.lock", id.lock_name()));
        names.push(format!("{}.lock", id.state_lock_name()));
        for name in names {
            assert!(name.len() + temp_overhead <= 255, "{name}");
        }
        let longer = format!("{}1", id.as_str());
        let err = WorkSessionId::parse(&longer).unwrap_err();
        assert!(matches!(err, Error::IdTooLong { max: 180, .. }), "{err}");
    }

    #[test]
    fn transcript_ids() {
        let id = TranscriptId::parse("6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f").unwrap();
        assert_eq!(id.short(), "3c4d5e6f");
        assert_eq!(id.lock_name(), "transcript-3c4d5e6f");
        assert!(TranscriptId::parse("3c4d5e6f").is_err());
        assert_eq!(
            TranscriptId::parse("6F1C2B9E-3D4A-4C5B-9E8F-1A2B3C4D5E6F").unwrap(),
            id
        );
        assert_eq!(short_id("abc"), "abc");
    }

    #[test]
    fn legacy_transcript_ids() {
        let id = TranscriptId::parse("session_1700000000_abc12345").unwrap();
        assert_eq!(id.as_str(), "session_1700000000_abc12345");
        assert_eq!(id.short(), "abc12345");
        assert_eq!(
            short_id("session_1700000000_xyz"),
            "xyz",
            "the seed's split, not 8 chars"
        );
        assert_eq!(
            IdArg::parse("transcript id", "session_1700000000_abc12345", "").unwrap(),
            IdArg::Full("session_1700000000_abc12345".into())
        );
        for bad in [
            "session_1700000000_abc/345",
            "session_17x_abc12345",
            "session_1700000000_abc_12345",
            "../_1_a",
            "Session_1_a",
            "session__abc",
        ] {
            assert!(TranscriptId::parse(bad).is_err(), "{bad}");
        }
    }
}

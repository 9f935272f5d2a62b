//! Transcripts (seed 003): the message history of a main agent or a
//! subagent, one 2-space JSON file per transcript in `{transcripts_dir}`.
//!
//! The file name carries the kind, the id does not (the seed's decision 4):
//! `session_{short}.json` for a main agent, `subagent_session_{short}.json`
//! for a subagent, where `short` is the last 8 characters of the UUID. When
//! two ids share a short id, the second is stored under its full id
//! (`session_{uuid}.json`) instead of overwriting the first, and loading by
//! id still finds it because the id inside every file is checked.
//!
//! Messages are kept exactly as given: blocks are arbitrary JSON and unknown
//! keys anywhere are written back. Files are read with a streaming parser so a
//! large transcript costs little more memory than its parsed form, and
//! listings read only the id and metadata of each file.
//!
//! The public API is what an MCP server needs: [`save`], [`load`], [`list`],
//! plus [`import`] and [`prune`] for the CLI.
//!
//! ```no_run
//! use logbook::{Project, transcript::{self, Kind, ListOptions}};
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! for t in transcript::list(&project, &ListOptions::default())?.transcripts {
//!     println!("{} {:?} {}", t.id, t.kind, t.last_active_at);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::clock;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::store;
use crate::work_session::CorruptFile;

/// The `version` every transcript Logbook writes carries (the seed's format).
pub const FORMAT_VERSION: &str = "1.0.0";
/// Folder inside `transcripts_dir` that `prune` moves old transcripts to.
pub const ARCHIVE_DIR: &str = "archive";

/// Whose transcript it is; decides the file name prefix only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The main agent's conversation (`session_…`).
    Main,
    /// A subagent's conversation (`subagent_session_…`).
    Subagent,
}

impl Kind {
    /// The file name prefix of this kind, as seed 003 names it.
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Main => "session",
            Kind::Subagent => "subagent_session",
        }
    }

    /// `main` or `subagent`, as listings print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Subagent => "subagent",
        }
    }
}

/// One stored transcript, exactly seed 003's fields plus whatever else the
/// file carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The session's UUID (never prefixed).
    pub id: String,
    /// When the transcript was last saved.
    #[serde(default)]
    pub timestamp: String,
    /// Format version, `1.0.0`.
    #[serde(default = "format_version")]
    pub version: String,
    /// The conversation, oldest first, as the agent gave it.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Where and when the conversation ran.
    #[serde(default)]
    pub metadata: Metadata,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn format_version() -> String {
    FORMAT_VERSION.to_string()
}

/// One message: a role and its blocks, kept as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user`, `assistant`, `system`, `tool`… (not restricted).
    pub role: String,
    /// Text, tool, subagent, compress… blocks: arbitrary JSON.
    #[serde(default)]
    pub blocks: Vec<Value>,
    /// Token usage reported with the message, if any.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<Value>,
    /// Per-message metadata, if any.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Keeps an explicit `null` as `Some(Null)` so it is written back as given.
fn present<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Where and when a conversation ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The agent's working directory; listings filter on it.
    #[serde(default)]
    pub workdir: String,
    /// When the conversation began.
    #[serde(default)]
    pub started_at: String,
    /// When it last had a message; listings sort on it.
    #[serde(default)]
    pub last_active_at: String,
    /// The context size at the last message.
    #[serde(default)]
    pub latest_total_tokens: u64,
    /// The main session a subagent was spawned from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Transcript {
    /// A new, empty transcript for `id` in `workdir`, started now.
    pub fn new(id: impl Into<String>, workdir: impl Into<String>) -> Transcript {
        let now = clock::now_string();
        Transcript {
            id: id.into(),
            timestamp: now.clone(),
            version: FORMAT_VERSION.to_string(),
            messages: vec![],
            metadata: Metadata {
                workdir: workdir.into(),
                started_at: now.clone(),
                last_active_at: now,
                ..Metadata::default()
            },
            extra: Map::new(),
        }
    }

    /// Turns the transcript into JSON by moving, not copying, its messages,
    /// so printing a large transcript does not hold it twice.
    pub fn into_value(self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id));
        m.insert("timestamp".into(), Value::String(self.timestamp));
        m.insert("version".into(), Value::String(self.version));
        m.insert(
            "messages".into(),
            Value::Array(self.messages.into_iter().map(Message::into_value).collect()),
        );
        m.insert(
            "metadata".into(),
            serde_json::to_value(&self.metadata).unwrap_or(Value::Null),
        );
        m.extend(self.extra);
        Value::Object(m)
    }
}

impl Message {
    /// Turns the message into JSON by moving its blocks.
    pub fn into_value(self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), Value::String(self.role));
        m.insert("blocks".into(), Value::Array(self.blocks));
        if let Some(u) = self.usage {
            m.insert("usage".into(), u);
        }
        if let Some(md) = self.metadata {
            m.insert("metadata".into(), md);
        }
        m.extend(self.extra);
        Value::Object(m)
    }
}

/// A transcript read from disk, with where it was found.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The transcript.
    pub transcript: Transcript,
    /// Main or subagent, from the file name.
    pub kind: Kind,
    /// The file it was read from (or written to).
    pub path: PathBuf,
    /// True when found in `{transcripts_dir}/archive/`.
    pub archived: bool,
}

/// What a listing shows of one transcript (read without its messages).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The session UUID.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// The file, absolute.
    pub file: PathBuf,
    /// The agent's working directory.
    pub workdir: String,
    /// When the conversation began.
    pub started_at: String,
    /// When it last had a message.
    pub last_active_at: String,
    /// The context size at the last message.
    pub latest_total_tokens: u64,
    /// The parent main session of a subagent.
    pub parent_session_id: Option<String>,
}

/// Which transcripts [`list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Only transcripts whose workdir is this folder or inside it; `None`
    /// lists every workdir (`--all`).
    pub within: Option<PathBuf>,
    /// Only this kind; `None` lists both.
    pub kind: Option<Kind>,
}

/// The result of [`list`]: readable transcripts newest first, and the files
/// that could not be read (reported, never fatal).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Newest `lastActiveAt` first.
    pub transcripts: Vec<Summary>,
    /// Files named like transcripts that could not be read.
    pub corrupt: Vec<CorruptFile>,
}

/// Checks that a transcript id is a hyphenated UUID before it becomes part of
/// a file name.
pub fn validate_id(id: &str) -> Result<()> {
    if id.len() == 36 && uuid::Uuid::try_parse(id).is_ok() {
        Ok(())
    } else {
        Err(Error::invalid(
            "transcript id",
            id,
            "expected a UUID such as 6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f",
        ))
    }
}

/// The last 8 characters of an id, which name its file.
pub fn short_id(id: &str) -> &str {
    let start = id.char_indices().rev().nth(7).map_or(0, |(i, _)| i);
    &id[start..]
}

/// `{prefix}_{short}.json`, or `{prefix}_{id}.json` when `full`.
pub fn file_name(kind: Kind, id: &str, full: bool) -> String {
    let part = if full { id } else { short_id(id) };
    format!("{}_{part}.json", kind.prefix())
}

/// The kind and name part of a transcript file name, or `None` when the
/// file is not a transcript.
pub fn parse_file_name(name: &str) -> Option<(Kind, &str)> {
    let stem = name.strip_suffix(".json")?;
    // `subagent_session_` first: it does not start with `session_`, but be
    // explicit rather than rely on that.
    if let Some(rest) = stem.strip_prefix("subagent_session_") {
        return (!rest.is_empty()).then_some((Kind::Subagent, rest));
    }
    let rest = stem.strip_prefix("session_")?;
    (!rest.is_empty()).then_some((Kind::Main, rest))
}

fn lock_name(id: &str) -> String {
    // Ids sharing a short id share the lock, so deciding which one gets the
    // short file name is serialised.
    format!("transcript-{}", short_id(id))
}

/// Reads a whole transcript with a streaming parser (memory stays close to
/// the parsed size, whatever the file size).
pub fn read_file(path: &Path) -> Result<Transcript> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_reader(BufReader::with_capacity(1 << 16, file)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason: e.to_string(),
    })
}

#[derive(Deserialize)]
struct Head {
    id: String,
    #[serde(default)]
    metadata: Metadata,
}

/// Reads only `id` and `metadata`; the messages are skipped without being
/// kept, so listing many large transcripts stays cheap.
fn read_head(path: &Path) -> Result<Head> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_reader(BufReader::with_capacity(1 << 16, file)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason: e.to_string(),
    })
}

fn archive_dir(p: &Project) -> PathBuf {
    p.config.transcripts_dir.join(ARCHIVE_DIR)
}

/// Saves a transcript: `timestamp` becomes now, missing metadata is filled
/// (workdir: the project root; times: now), and the file is written
/// atomically. An id that already has a file keeps it; a new id whose short
/// name is taken by another id is stored under its full id. Saving with the
/// other kind renames the file. Returns where it was written.
pub fn save(p: &Project, transcript: &mut Transcript, kind: Kind) -> Result<PathBuf> {
    validate_id(&transcript.id)?;
    if let Some(parent) = &transcript.metadata.parent_session_id {
        validate_id(parent).map_err(|_| {
            Error::invalid(
                "metadata.parentSessionId",
                parent.clone(),
                "expected the parent main session's UUID",
            )
        })?;
    }
    let now = clock::now_string();
    transcript.timestamp = now.clone();
    if transcript.version.trim().is_empty() {
        transcript.version = FORMAT_VERSION.to_string();
    }
    let md = &mut transcript.metadata;
    if md.workdir.is_empty() {
        md.workdir = p.root().to_string_lossy().into_owned();
    }
    if md.started_at.is_empty() {
        md.started_at = now.clone();
    }
    if md.last_active_at.is_empty() {
        md.last_active_at = now;
    }
    if md.latest_total_tokens == 0 {
        md.latest_total_tokens = transcript
            .messages
            .iter()
            .rev()
            .find_map(|m| m.usage.as_ref()?.get("total_tokens")?.as_u64())
            .unwrap_or(0);
    }

    let dir = &p.config.transcripts_dir;
    let id = transcript.id.as_str();
    let _lock = p.locks.exclusive(&lock_name(id))?;
    let existing = find_live(dir, id);
    let target = match &existing {
        Some((k, path)) if *k == kind => path.clone(),
        _ => {
            let short = dir.join(file_name(kind, id, false));
            // A short name that is taken (by another id, or by a file we
            // cannot read) is never overwritten.
            if short.exists() {
                dir.join(file_name(kind, id, true))
            } else {
                short
            }
        }
    };
    let mut bytes = Vec::new();
    serde_json::to_writer_pretty(BufWriter::new(&mut bytes), transcript).map_err(|e| {
        Error::Corrupt {
            path: target.clone(),
            what: "transcript",
            reason: e.to_string(),
        }
    })?;
    bytes.push(b'\n');
    store::write_atomic(&target, &bytes)?;
    if let Some((_, old)) = existing
        && old != target
    {
        std::fs::remove_file(&old).map_err(|e| Error::io(&old, e))?;
        store::sync_dir(dir)?;
    }
    Ok(target)
}

/// The live file holding `id`, if any (either prefix, short or full name).
fn find_live(dir: &Path, id: &str) -> Option<(Kind, PathBuf)> {
    candidates(dir, id)
        .into_iter()
        .find(|(_, path)| read_head(path).is_ok_and(|h| h.id == id))
}

fn candidates(dir: &Path, id: &str) -> Vec<(Kind, PathBuf)> {
    let mut out = vec![];
    for full in [false, true] {
        for kind in [Kind::Main, Kind::Subagent] {
            let path = dir.join(file_name(kind, id, full));
            if path.is_file() {
                out.push((kind, path));
            }
        }
    }
    out
}

/// Loads a transcript by its UUID (or by the 8-character short id of its
/// file), looking at both prefixes, live first, then the archive. The id
/// inside the file must match.
pub fn load(p: &Project, id: &str) -> Result<Stored> {
    let id = id.trim();
    let is_short = id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit());
    if !is_short {
        validate_id(id)?;
    }
    let mut unreadable: Option<Error> = None;
    let mut found: Vec<Stored> = vec![];
    for (dir, archived) in [
        (p.config.transcripts_dir.clone(), false),
        (archive_dir(p), true),
    ] {
        let cands = if is_short {
            [Kind::Main, Kind::Subagent]
                .into_iter()
                .map(|k| (k, dir.join(format!("{}_{id}.json", k.prefix()))))
                .filter(|(_, path)| path.is_file())
                .collect()
        } else {
            candidates(&dir, id)
        };
        for (kind, path) in cands {
            match read_file(&path) {
                Ok(t) if is_short || t.id == id => found.push(Stored {
                    transcript: t,
                    kind,
                    path,
                    archived,
                }),
                Ok(_) => {}
                Err(e) => {
                    unreadable.get_or_insert(e);
                }
            }
            if !is_short && !found.is_empty() {
                break;
            }
        }
        if !found.is_empty() {
            break;
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(unreadable.unwrap_or_else(|| {
            Error::not_found(
                "transcript",
                id,
                "`logbook transcript list --all` shows the transcripts there are",
            )
        })),
        _ => Err(Error::invalid(
            "transcript id",
            id,
            format!(
                "short id is ambiguous ({}); give the full UUID",
                found
                    .iter()
                    .map(|s| s.transcript.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The transcript files in `dir` (both prefixes, not temp files).
pub fn transcript_files(dir: &Path) -> Result<Vec<(Kind, PathBuf)>> {
    Ok(store::entries(dir, store::EntryKind::File)?
        .into_iter()
        .filter_map(|(name, path)| parse_file_name(&name).map(|(kind, _)| (kind, path)))
        .collect())
}

/// Whether a transcript's `workdir` is `root` or inside it (listings filter on it).
pub fn is_within(workdir: &str, root: &Path) -> bool {
    let w = Path::new(workdir);
    if w.starts_with(root) {
        return true;
    }
    match (w.canonicalize(), root.canonicalize()) {
        (Ok(w), Ok(r)) => w.starts_with(r),
        (Err(_), Ok(r)) => w.starts_with(r),
        _ => false,
    }
}

fn newest_first(a: &str, b: &str) -> std::cmp::Ordering {
    match (clock::parse(a), clock::parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.cmp(a),
    }
}

/// Lists live transcripts of both prefixes, newest `lastActiveAt` first;
/// files that cannot be read are returned in [`Listing::corrupt`].
pub fn list(p: &Project, opts: &ListOptions) -> Result<Listing> {
    let mut listing = Listing::default();
    for (kind, path) in transcript_files(&p.config.transcripts_dir)? {
        if opts.kind.is_some_and(|k| k != kind) {
            continue;
        }
        let head = match read_head(&path) {
            Ok(h) => h,
            Err(e) => {
                listing.corrupt.push(CorruptFile {
                    path,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        if let Some(root) = &opts.within
            && !is_within(&head.metadata.workdir, root)
        {
            continue;
        }
        listing.transcripts.push(Summary {
            id: head.id,
            kind,
            file: path,
            workdir: head.metadata.workdir,
            started_at: head.metadata.started_at,
            last_active_at: head.metadata.last_active_at,
            latest_total_tokens: head.metadata.latest_total_tokens,
            parent_session_id: head.metadata.parent_session_id,
        });
    }
    listing
        .transcripts
        .sort_by(|a, b| newest_first(&a.last_active_at, &b.last_active_at));
    Ok(listing)
}

/// Reads a transcript given as a JSON file (seed 003's format) and saves it.
/// It is a subagent transcript when `subagent` is set, a `parent` is given or
/// the file names one in `metadata.parentSessionId`.
pub fn import(p: &Project, file: &Path, subagent: bool, parent: Option<&str>) -> Result<Stored> {
    let mut t = read_file(file)?;
    if let Some(parent) = parent {
        t.metadata.parent_session_id = Some(parent.to_string());
    }
    let kind = if subagent || t.metadata.parent_session_id.is_some() {
        Kind::Subagent
    } else {
        Kind::Main
    };
    let path = save(p, &mut t, kind)?;
    Ok(Stored {
        transcript: t,
        kind,
        path,
        archived: false,
    })
}

/// One transcript `prune` moved (or would move).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruned {
    /// The session UUID.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// When it was last active.
    pub last_active_at: String,
    /// Where it was.
    pub from: PathBuf,
    /// Where it went (or would go).
    pub to: PathBuf,
}

/// What [`prune`] did.
#[derive(Debug, Clone, Default)]
pub struct PruneReport {
    /// Transcripts moved to the archive (or that would be, on a dry run).
    pub moved: Vec<Pruned>,
    /// Files that could not be read, left where they are.
    pub corrupt: Vec<CorruptFile>,
}

/// Moves transcripts last active more than `days` days ago to
/// `{transcripts_dir}/archive/` (nothing is deleted). With `dry_run`, only
/// reports what would move. Transcripts without a readable `lastActiveAt`
/// stay.
pub fn prune(p: &Project, days: u64, dry_run: bool) -> Result<PruneReport> {
    let now = clock::now();
    let secs = i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX);
    let cutoff = now.as_second().saturating_sub(secs);
    let listing = list(p, &ListOptions::default())?;
    let mut report = PruneReport {
        corrupt: listing.corrupt,
        ..PruneReport::default()
    };
    let archive = archive_dir(p);
    for s in listing.transcripts {
        let Some(ts) = clock::parse(&s.last_active_at) else {
            continue;
        };
        if ts.as_second() >= cutoff {
            continue;
        }
        let _lock = p.locks.exclusive(&lock_name(&s.id))?;
        // Re-check under the lock: a save may have touched it since listing.
        match read_head(&s.file) {
            Ok(h) if h.id == s.id && h.metadata.last_active_at == s.last_active_at => {}
            _ => continue,
        }
        let name = s
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut to = archive.join(&name);
        let mut n = 1;
        while to.exists() {
            n += 1;
            to = if n == 2 {
                archive.join(file_name(s.kind, &s.id, true))
            } else {
                archive.join(format!("{}_{}.{n}.json", s.kind.prefix(), s.id))
            };
        }
        if !dry_run {
            store::move_durably(&s.file, &to)?;
        }
        report.moved.push(Pruned {
            id: s.id,
            kind: s.kind,
            last_active_at: s.last_active_at,
            from: s.file,
            to,
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = include_str!("../../../../shared/fixtures/transcript-main.json");
    const SUB: &str = include_str!("../../../../shared/fixtures/transcript-subagent.json");

    fn project() -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::open(dir.path()).unwrap();
        (dir, p)
    }

    #[test]
    fn fixtures_round_trip_exactly() {
        for text in [MAIN, SUB] {
            let t: Transcript = serde_json::from_str(text).unwrap();
            let back = serde_json::to_value(&t).unwrap();
            let orig: Value = serde_json::from_str(text).unwrap();
            assert_eq!(back, orig);
            assert_eq!(t.clone().into_value(), orig);
        }
    }

    #[test]
    fn unknown_keys_and_nulls_are_kept() {
        let text = r#"{"id":"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f","timestamp":"t","version":"1.0.0","x-tool":{"a":1},
            "messages":[{"role":"user","blocks":[{"type":"weird","deep":[1,{"z":null}]}],"usage":null,"extra":true}],
            "metadata":{"workdir":"/w","startedAt":"s","lastActiveAt":"l","latestTotalTokens":3,"host":"h"}}"#;
        let t: Transcript = serde_json::from_str(text).unwrap();
        let orig: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), orig);
    }

    #[test]
    fn short_ids_and_names() {
        let id = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
        assert_eq!(short_id(id), "3c4d5e6f");
        assert_eq!(
            file_name(Kind::Subagent, id, false),
            "subagent_session_3c4d5e6f.json"
        );
        assert_eq!(
            parse_file_name("subagent_session_3c4d5e6f.json"),
            Some((Kind::Subagent, "3c4d5e6f"))
        );
        assert_eq!(
            parse_file_name("session_3c4d5e6f.json"),
            Some((Kind::Main, "3c4d5e6f"))
        );
        assert_eq!(parse_file_name("sessions.json"), None);
        assert!(validate_id("../etc/passwd-aaaaaaaaaaaaaaaaaaaaaaaaaa").is_err());
    }

    #[test]
    fn save_load_collision_and_kind_change() {
        let (_d, p) = project();
        let a = "11111111-1111-4111-8111-0000aaaabbbb";
        let b = "22222222-2222-4222-8222-0000aaaabbbb";
        let mut ta = Transcript::new(a, "/w");
        let mut tb = Transcript::new(b, "/w");
        let pa = save(&p, &mut ta, Kind::Main).unwrap();
        let pb = save(&p, &mut tb, Kind::Main).unwrap();
        assert!(pa.ends_with("session_aaaabbbb.json"));
        assert!(pb.ends_with(format!("session_{b}.json")));
        assert_eq!(load(&p, a).unwrap().transcript.id, a);
        assert_eq!(load(&p, b).unwrap().transcript.id, b);
        // Saving again keeps each id in its own file.
        assert_eq!(save(&p, &mut tb, Kind::Main).unwrap(), pb);
        assert_eq!(save(&p, &mut ta, Kind::Main).unwrap(), pa);
        // Changing kind renames rather than duplicates.
        let ps = save(&p, &mut ta, Kind::Subagent).unwrap();
        assert!(ps.ends_with("subagent_session_aaaabbbb.json"));
        assert!(!pa.exists());
        let s = load(&p, a).unwrap();
        assert_eq!(s.kind, Kind::Subagent);
        assert_eq!(
            list(&p, &ListOptions::default()).unwrap().transcripts.len(),
            2
        );
    }

    #[test]
    fn load_checks_the_id_inside() {
        let (_d, p) = project();
        let dir = &p.config.transcripts_dir;
        std::fs::create_dir_all(dir).unwrap();
        // A file under the short name of `wanted` that holds another id.
        std::fs::write(
            dir.join("session_3c4d5e6f.json"),
            MAIN.replace("6f1c2b9e", "aaaaaaaa"),
        )
        .unwrap();
        let err = load(&p, "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f").unwrap_err();
        assert!(matches!(err, Error::NotFound { .. }), "{err}");
    }
}

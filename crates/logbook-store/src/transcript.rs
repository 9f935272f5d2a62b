//! Transcript files on disk: `{transcripts_dir}/{prefix}_{short}.json`,
//! read with a streaming parser, and `{transcripts_dir}/archive/` for the
//! ones `prune` moved. The caller holds the id's lock for every write.

use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Project;
use logbook_model::error::{Error, Result};
use logbook_model::text;
use logbook_model::transcript::{
    ARCHIVE_DIR, Kind, Message, Metadata, PROMPT_WITHIN, SaidText, Transcript, file_name,
    find::MessageText, parse_file_name,
};

pub mod live;
mod messages;
mod window;

pub use messages::{each_message_from, read_messages_at};
pub use window::{RawLinesKept, Window, WindowStop, read_window};

/// Reads a whole transcript with a streaming parser (memory stays close to
/// the parsed size, whatever the file size).
pub fn read_file(path: &Path) -> Result<Transcript> {
    read_json(path)
}

/// The largest transcript file `transcript import` reads: generous (a long
/// conversation with tool output runs to tens of MiB), but a bound, so that
/// `/dev/zero` or a runaway file is refused instead of filling memory.
pub const MAX_IMPORT_BYTES: u64 = 512 * 1024 * 1024;

/// Reads a transcript a user gave to import: a regular file (not a FIFO or
/// device) of at most [`MAX_IMPORT_BYTES`].
pub fn read_import(path: &Path) -> Result<(Transcript, Value)> {
    let Some(mut reader) = crate::open_regular(path, "transcript file", MAX_IMPORT_BYTES)? else {
        return Err(Error::not_found(
            "transcript file",
            path.display().to_string(),
            "give the path of a JSON transcript in seed 003's format",
        ));
    };
    let mut text = String::new();
    std::io::Read::read_to_string(&mut reader, &mut text).map_err(|e| Error::io(path, e))?;
    // Not JSON at all: another kind of file, not a transcript with a
    // mistake to fix.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text::strip_bom(&text)) {
        return Err(Error::NotImported {
            path: path.to_path_buf(),
            reason: format!(
                "not a recognised transcript format: not a Claude Code or Codex log, nor a seed 003 transcript (not JSON: {e})"
            ),
        });
    }
    parse_raw(path, &text)
}

/// What a listing needs of a transcript file: its id and metadata.
#[derive(Debug, Clone, Deserialize)]
pub struct Head {
    /// The id inside the file.
    pub id: String,
    /// Its metadata.
    #[serde(default)]
    pub metadata: Metadata,
}

/// Reads only `id` and `metadata`; the messages are skipped without being
/// kept, so listing many large transcripts stays cheap. Reading stops as
/// soon as both are read: an imported agent log's transcript writes its
/// metadata before its messages and raw lines, so its head is read without
/// reading the hundreds of MiB after it.
pub fn read_head(path: &Path) -> Result<Head> {
    read_slot(path, 0, Reading::Head).map(|r| r.head)
}

/// Reads what the index keeps of a transcript: its id and metadata (as
/// [`read_head`]) and what its messages say, up to `cap` bytes of text
/// ([`SaidText`]). Messages are read one at a time and reading stops once
/// the id, the metadata and the text are all had: an imported agent log's
/// transcript (metadata first, then messages, then its raw lines) is never
/// read past its messages, nor past the message that fills the cap.
///
/// Lenient as [`read_head`]: once the id and metadata are read, text that
/// does not parse after them ends the text, not the record.
pub fn read_said(path: &Path, cap: usize) -> Result<(Head, String)> {
    read_indexed(path, cap).map(|r| (r.head, r.said))
}

/// What the index keeps of a transcript file ([`read_indexed`]).
#[derive(Debug, Clone)]
pub struct Indexed {
    /// Its id and metadata.
    pub head: Head,
    /// What its messages say, up to the cap.
    pub said: String,
    /// Its first prompt ([`Transcript::first_prompt`]).
    pub first_prompt: Option<String>,
    /// How many messages were counted; an imported log's are not all read
    /// (its metadata records how many), so the count is then short.
    pub messages: u64,
    /// What each message says, from [`read_for_index`] only.
    pub found: Option<MessageText>,
}

/// [`read_said`] plus what a listing shows of the messages: the first
/// prompt, however far in it is, and how many messages there are. An
/// imported log's transcript is still read no further than its text and
/// first prompt: its metadata, written first, records its message count
/// (see [`logbook_model::transcript::recorded_messages`]).
pub(crate) fn read_indexed(path: &Path, cap: usize) -> Result<Indexed> {
    read_slot(path, cap, Reading::Said)
}

/// [`read_indexed`] plus what each message says and where the failed tool
/// results are ([`MessageText`], in [`Indexed::found`]): every message is
/// read then, still no further than the messages.
pub fn read_for_index(path: &Path, cap: usize) -> Result<Indexed> {
    read_slot(path, cap, Reading::PerMessage)
}

/// How much of a transcript's messages [`read_slot`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// None: the id and metadata alone ([`read_head`]).
    Head,
    /// Their text up to the cap, the first prompt and the count
    /// ([`read_indexed`]).
    Said,
    /// That and what each message says ([`read_for_index`]).
    PerMessage,
}

/// Reads the head of the transcript at `path` and as much of its messages
/// as `reading` asks, stopping as soon as it has all that.
fn read_slot(path: &Path, cap: usize, reading: Reading) -> Result<Indexed> {
    let reader = open_stream(path)?;
    let mut slot = SaidSlot {
        id: None,
        metadata: None,
        said: SaidText::new(cap),
        first_prompt: None,
        messages: 0,
        messages_done: false,
        found: (reading == Reading::PerMessage).then(|| MessageText::new(0)),
        head_only: reading == Reading::Head,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let read = serde::de::DeserializeSeed::deserialize(SaidSeed(&mut slot), &mut de);
    let indexed = |id, metadata| Indexed {
        head: Head { id, metadata },
        said: slot.said.into_string(),
        first_prompt: slot.first_prompt,
        messages: slot.messages,
        found: slot.found,
    };
    match (slot.id, slot.metadata, read) {
        // Stopped early, or read to the end.
        (Some(id), Some(metadata), _) => Ok(indexed(id, metadata)),
        (Some(id), None, Ok(())) => Ok(indexed(id, Metadata::default())),
        (_, _, Err(e)) => Err(corrupt(path, e.to_string())),
        (None, _, Ok(())) => Err(corrupt(path, "missing field `id`".into())),
    }
}

/// A transcript file that does not read as one, and why.
pub(super) fn corrupt(path: &Path, reason: String) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason,
    }
}

/// What [`SaidSeed`] has read so far.
struct SaidSlot {
    id: Option<String>,
    metadata: Option<Metadata>,
    said: SaidText,
    first_prompt: Option<String>,
    messages: u64,
    messages_done: bool,
    found: Option<MessageText>,
    /// The messages are skipped unread: only the id and metadata are
    /// wanted.
    head_only: bool,
}

impl SaidSlot {
    fn complete(&self) -> bool {
        self.id.is_some()
            && self.metadata.is_some()
            && (self.head_only || self.messages_done || self.read_enough())
    }

    /// Whether the messages still to come add nothing: the text is full,
    /// the first prompt found, and the count recorded in the metadata (an
    /// imported log's).
    fn read_enough(&self) -> bool {
        self.found.is_none()
            && self.said.is_full()
            && (self.first_prompt.is_some()
                || usize::try_from(self.messages).is_ok_and(|n| n >= PROMPT_WITHIN))
            && self
                .metadata
                .as_ref()
                .and_then(logbook_model::transcript::recorded_messages)
                .is_some()
    }
}

/// Reads a transcript object's `id`, `metadata` and messages' text into the
/// slot, and stops (with an error the caller ignores once the slot holds
/// the id and metadata) as soon as it has all three.
struct SaidSeed<'a>(&'a mut SaidSlot);

impl<'de> serde::de::DeserializeSeed<'de> for SaidSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for SaidSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a transcript object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<(), A::Error> {
        use serde::de::Error as _;
        let slot = self.0;
        while let Some(key) = a.next_key::<String>()? {
            match key.as_str() {
                "id" if slot.id.is_none() => slot.id = Some(a.next_value()?),
                "metadata" if slot.metadata.is_none() => slot.metadata = Some(a.next_value()?),
                "messages" if !slot.messages_done && !slot.head_only => {
                    a.next_value_seed(SaidMessages(&mut *slot))?;
                    slot.messages_done = true;
                }
                _ => {
                    a.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            if slot.complete() {
                return Err(A::Error::custom(HEAD_READ));
            }
        }
        if slot.head_only && slot.id.is_none() {
            // Said where the object ends, as a head's reader always has.
            return Err(A::Error::missing_field("id"));
        }
        Ok(())
    }
}

/// A transcript's `messages`, each read and added to the text until the cap
/// is reached. A message of another shape says nothing (it does not make
/// the file unreadable).
struct SaidMessages<'a>(&'a mut SaidSlot);

impl<'de> serde::de::DeserializeSeed<'de> for SaidMessages<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for SaidMessages<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<(), A::Error> {
        use serde::de::Error as _;
        let slot = self.0;
        let seeking = |slot: &SaidSlot| {
            slot.first_prompt.is_none()
                && usize::try_from(slot.messages).is_ok_and(|n| n < PROMPT_WITHIN)
        };
        while !slot.said.is_full() || seeking(slot) || slot.found.is_some() {
            let Some(v) = a.next_element::<Value>()? else {
                return Ok(());
            };
            let seek = seeking(slot);
            slot.messages += 1;
            let m = Message::deserialize(v);
            if let Some(found) = &mut slot.found {
                // A message of another shape keeps its place, saying nothing.
                match &m {
                    Ok(m) => found.push(m),
                    Err(_) => found.skip(),
                }
            }
            if let Ok(m) = m {
                if !slot.said.is_full() {
                    slot.said.push(&m);
                }
                if seek {
                    slot.first_prompt = m.prompt_text();
                }
            }
        }
        if slot.id.is_some() && slot.read_enough() {
            return Err(A::Error::custom(HEAD_READ));
        }
        // The metadata is still to come (seed 003 writes it last), or it
        // records no count: the other messages are counted, unparsed.
        while a.next_element::<serde::de::IgnoredAny>()?.is_some() {
            slot.messages += 1;
        }
        Ok(())
    }
}

/// The message of the error that stops [`SaidSeed`] early.
const HEAD_READ: &str = "head read";

/// Reads a transcript file given to `import`, with its raw keys other than
/// `messages` (whose place is kept, as an empty list): what the stored copy keeps
/// every value of. The messages are held once, in the record.
pub fn read_file_raw(path: &Path) -> Result<(Transcript, Value)> {
    let text = std::io::read_to_string(crate::open_record_file(path, "transcript")?)
        .map_err(|e| Error::io(path, e))?;
    parse_raw(path, &text)
}

/// Parses a transcript handed over as JSON text rather than a file (an MCP
/// client's `transcript_save`); errors name `what` as the file.
pub fn parse_text(what: &Path, text: &str) -> Result<(Transcript, Value)> {
    parse_raw(what, text)
}

/// Parses a transcript's text into the typed record and its top-level raw
/// value (what a rewrite keeps of it).
fn parse_raw(path: &Path, text: &str) -> Result<(Transcript, Value)> {
    // The typed record first: its error names the field that does not fit.
    let typed: Transcript = text::parse_json(path, "transcript", text)?;
    let head: RawHead = text::parse_json(path, "transcript", text)?;
    Ok((typed, Value::Object(head.0)))
}

/// A transcript's top-level keys in order, every value but the messages'.
struct RawHead(Map<String, Value>);

impl<'de> Deserialize<'de> for RawHead {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = RawHead;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a transcript object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<RawHead, A::Error> {
                let mut m = Map::new();
                while let Some(key) = a.next_key::<String>()? {
                    if key == "messages" {
                        a.next_value::<serde::de::IgnoredAny>()?;
                        m.insert(key, Value::Array(vec![]));
                    } else {
                        m.insert(key, a.next_value()?);
                    }
                }
                Ok(RawHead(m))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A stored transcript opened for a streamed read, past the byte order
/// mark a Windows editor may have written (it would make the JSON
/// unreadable).
fn open_stream(path: &Path) -> Result<BufReader<std::fs::File>> {
    let file = crate::open_record_file(path, "transcript")?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let starts_with_bom = reader
        .fill_buf()
        .map_err(|e| Error::io(path, e))?
        .starts_with(b"\xEF\xBB\xBF");
    if starts_with_bom {
        reader.consume(3);
    }
    Ok(reader)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let reader = open_stream(path)?;
    // Said again from the whole text only when a value does not fit, to
    // name its field.
    text::read_json(path, "transcript", reader, || {
        std::fs::read_to_string(path).ok()
    })
}

/// `{transcripts_dir}/archive`.
pub fn archive_dir(p: &Project) -> PathBuf {
    p.config.transcripts_dir.join(ARCHIVE_DIR)
}

/// Whether a transcript file name is taken at `path` (by another id, or by
/// a file that cannot be read): such a name is never overwritten.
pub fn name_taken(path: &Path) -> bool {
    path.exists()
}

/// The bytes of a stored transcript file, if it can be read: an import
/// compares them before and after to tell unchanged from updated.
pub fn read_bytes(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// The live file holding `id` (lowercase), if any (either prefix, short or
/// full name, the id inside compared without case).
pub fn find_live(dir: &Path, id: &str) -> Option<(Kind, PathBuf)> {
    candidates(dir, id)
        .into_iter()
        .find(|(_, path)| read_head(path).is_ok_and(|h| h.id.eq_ignore_ascii_case(id)))
}

/// The files in `dir` that may hold `id` (lowercase): both prefixes, short
/// name first. When no file has the lowercase name, names in any case are
/// looked for (another tool may have written `session_3C4D5E6F.json`),
/// which costs one listing of `dir`.
pub fn candidates(dir: &Path, id: &str) -> Vec<(Kind, PathBuf)> {
    let mut out = vec![];
    for full in [false, true] {
        for kind in [Kind::Main, Kind::Subagent] {
            let path = dir.join(file_name(kind, id, full));
            if path.is_file() {
                out.push((kind, path));
            }
        }
    }
    if out.is_empty() {
        for full in [false, true] {
            for (kind, path) in transcript_files(dir).unwrap_or_default() {
                let wanted = file_name(kind, id, full);
                let same = path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(&wanted));
                if same && !out.iter().any(|(_, p)| *p == path) {
                    out.push((kind, path));
                }
            }
        }
    }
    out
}

/// The transcript files in `dir` (both prefixes, not temp files).
pub fn transcript_files(dir: &Path) -> Result<Vec<(Kind, PathBuf)>> {
    Ok(crate::entries(dir, crate::EntryKind::File)?
        .into_iter()
        .filter_map(|(name, path)| parse_file_name(&name).map(|(kind, _)| (kind, path)))
        .collect())
}

/// Writes `transcript` to `target` atomically, and removes `previous` (the
/// file the id had under another name) once the new one is durable. With
/// `original` (the raw JSON the transcript was read from), every value the
/// save did not change is written as it was.
pub fn write(
    target: &Path,
    transcript: &Transcript,
    previous: Option<&Path>,
    original: Option<&Value>,
) -> Result<()> {
    let corrupt = |e: serde_json::Error| corrupt(target, e.to_string());
    let mut bytes = Vec::new();
    match original.and_then(Value::as_object) {
        // Messages come back out of the record exactly as read (blocks are
        // kept as JSON), so only the rest is merged with the file as read;
        // merging the messages too would hold a large transcript in memory
        // several times over.
        Some(raw) => {
            let at = raw.keys().position(|k| k == "messages");
            let raw_head: Map<String, Value> = raw
                .iter()
                .filter(|(k, _)| *k != "messages")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let new_head = serde_json::to_value(transcript.head()).map_err(corrupt)?;
            let head = match text::merge_write::<Transcript>(&Value::Object(raw_head), new_head) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            let out = WithMessages {
                at: at.unwrap_or(head.len()),
                head: &head,
                messages: &transcript.messages,
            };
            serde_json::to_writer_pretty(BufWriter::new(&mut bytes), &out).map_err(corrupt)?;
        }
        None => {
            serde_json::to_writer_pretty(BufWriter::new(&mut bytes), transcript)
                .map_err(corrupt)?;
        }
    }
    bytes.push(b'\n');
    // A transcript holds whatever the agent read, secrets included.
    crate::write_atomic_private(target, &bytes)?;
    if let Some(old) = previous
        && old != target
    {
        std::fs::remove_file(old).map_err(|e| Error::io(old, e))?;
        if let Some(dir) = old.parent() {
            crate::sync_dir(dir)?;
        }
    }
    Ok(())
}

/// A transcript's other keys (`head`, in the file's order) with its
/// messages at position `at`, written without copying the messages.
struct WithMessages<'a> {
    head: &'a Map<String, Value>,
    messages: &'a [Message],
    at: usize,
}

impl Serialize for WithMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.head.len() + 1))?;
        for (i, (k, v)) in self.head.iter().enumerate() {
            if i == self.at {
                map.serialize_entry("messages", self.messages)?;
            }
            map.serialize_entry(k, v)?;
        }
        if self.at >= self.head.len() {
            map.serialize_entry("messages", self.messages)?;
        }
        map.end()
    }
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

/// Whether `workdir` (as a transcript records it) is the folder `folder`
/// itself, spelled either way (a symlink, a trailing `/`).
pub fn is_workdir(workdir: &str, folder: &Path) -> bool {
    let w = Path::new(workdir);
    w == folder
        || matches!(
            (w.canonicalize(), folder.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_reads_the_first_prompt_and_count_as_the_transcript_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session_3c4d5e6f.json");
        let msg = |role: &str, t: &str| {
            format!(r#"{{"role": "{role}", "blocks": [{{"type": "text", "content": "{t}"}}]}}"#)
        };
        // The prompt as the last message looked through (index
        // PROMPT_WITHIN - 1), then one past it.
        for (at, found) in [(PROMPT_WITHIN - 1, true), (PROMPT_WITHIN, false)] {
            let mut messages = vec![msg("user", "<command-name>/clear</command-name>")];
            messages.extend(vec![msg("assistant", "hello"); at - 1]);
            messages.push(msg("user", "Plan the release"));
            let text = format!(
                r#"{{"id": "a", "messages": [{}], "metadata": {{"workdir": "/w"}}}}"#,
                messages.join(",")
            );
            std::fs::write(&path, &text).unwrap();
            let read = read_indexed(&path, 64).unwrap();
            let whole: Transcript = serde_json::from_str(&text).unwrap();
            assert_eq!(read.first_prompt, whole.first_prompt(), "{at}");
            assert_eq!(read.first_prompt.is_some(), found, "{at}");
            assert_eq!(read.messages, whole.messages.len() as u64);
        }
    }

    #[test]
    fn said_reading_stops_at_the_cap_and_skips_odd_messages() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session_3c4d5e6f.json");
        let text = |t: &str| {
            format!(r#"{{"role": "user", "blocks": [{{"type": "text", "content": "{t}"}}]}}"#)
        };
        // Head first (an imported log): nothing after the message that
        // fills the cap is read, here not even JSON.
        std::fs::write(
            &path,
            format!(
                r#"{{"id": "a", "metadata": {{"workdir": "/w"}}, "messages": [{}, {}, oops"#,
                text("first words"),
                text("second words")
            ),
        )
        .unwrap();
        let (head, said) = read_said(&path, 8).unwrap();
        assert_eq!((head.id.as_str(), said.as_str()), ("a", "first wo\n"));
        // Seed 003's order (metadata last): read through, a message of
        // another shape says nothing, the cap still holds.
        std::fs::write(
            &path,
            format!(
                r#"{{"id": "b", "messages": [{}, 42, {}, {}], "metadata": {{"workdir": "/v"}}}}"#,
                text("one"),
                text("two"),
                text("three")
            ),
        )
        .unwrap();
        let (head, said) = read_said(&path, 6).unwrap();
        assert_eq!(head.metadata.workdir, "/v");
        assert_eq!(said, "one\ntw\n");
        let (_, said) = read_said(&path, 1000).unwrap();
        assert_eq!(said, "one\ntwo\nthree\n");
        // No id: unreadable, as for a listing.
        std::fs::write(&path, r#"{"messages": [], "metadata": {}}"#).unwrap();
        assert!(read_said(&path, 10).is_err());
    }

    #[test]
    fn a_file_read_to_its_end_counts_its_own_messages_not_the_recorded_count() {
        // A mangled `messages` key: the whole parse finds no messages, and
        // so does a window read to the end, whatever the metadata records.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session_3c4d5e6f.json");
        std::fs::write(
            &path,
            r#"{"id": "a", "metadata": {"workdir": "/w", "source": {"messages": 4}}, "messa es": [{"role": "user", "blocks": []}]}"#,
        )
        .unwrap();
        assert!(read_file(&path).unwrap().messages.is_empty());
        let w = read_window(&path, 0, 3, WindowStop::AtEnd).unwrap();
        assert_eq!(
            (w.total, w.transcript.messages.len(), w.whole),
            (0, 0, true)
        );
    }

    #[test]
    fn a_window_reads_no_further_than_it_needs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session_3c4d5e6f.json");
        let msg = |i: usize| {
            format!(r#"{{"role": "user", "blocks": [{{"type": "text", "content": "m{i}"}}]}}"#)
        };
        let said = |w: &Window| -> Vec<String> {
            w.transcript.messages.iter().map(Message::text).collect()
        };
        // An imported log's order, its count recorded: nothing after the
        // window is read (here it is not even JSON), unless asked to.
        let five: Vec<String> = (0..5).map(msg).collect();
        std::fs::write(
            &path,
            format!(
                r#"{{"id": "a", "metadata": {{"workdir": "/w", "source": {{"messages": 900}}}}, "messages": [{}, oops"#,
                five.join(",")
            ),
        )
        .unwrap();
        let w = read_window(&path, 1, 2, WindowStop::Early).unwrap();
        assert_eq!(said(&w), ["m1", "m2"]);
        assert_eq!((w.from, w.total, w.whole), (1, 900, false));
        assert!(read_window(&path, 1, 2, WindowStop::AtEnd).is_err());
        // A window reaching past what is there reads to the error.
        assert!(read_window(&path, 3, 5, WindowStop::Early).is_err());
        // Seed 003's order (metadata last): read through, counted; a
        // message of another shape outside the window is only counted,
        // inside it the file is corrupt.
        std::fs::write(
            &path,
            format!(
                r#"{{"messages": [{}, 42, {}], "x": [1], "id": "b", "metadata": {{"workdir": "/v"}}}}"#,
                msg(0),
                msg(2)
            ),
        )
        .unwrap();
        let w = read_window(&path, 2, 10, WindowStop::Early).unwrap();
        assert_eq!(said(&w), ["m2"]);
        assert_eq!((w.total, w.transcript.metadata.workdir.as_str()), (3, "/v"));
        assert_eq!(w.transcript.extra.get("x"), Some(&serde_json::json!([1])));
        assert!(read_window(&path, 2, 1, WindowStop::AtEnd).unwrap().whole);
        assert!(read_window(&path, 1, 1, WindowStop::Early).is_err());
        let past = read_window(&path, 7, 3, WindowStop::AtEnd).unwrap();
        assert!(past.transcript.messages.is_empty());
        assert_eq!((past.from, past.total), (3, 3));
        // Twice the same field, as the whole parse refuses it.
        std::fs::write(&path, r#"{"id": "a", "messages": [], "id": "b"}"#).unwrap();
        assert!(read_window(&path, 0, 1, WindowStop::AtEnd).is_err());
        assert!(read_file(&path).is_err());
    }

    #[test]
    fn head_reading_stops_once_id_and_metadata_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session_3c4d5e6f.json");
        // What follows the metadata is never read: here it is not even JSON.
        std::fs::write(
            &path,
            r#"{"id": "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f", "metadata": {"workdir": "/w"}, "messages": [oops"#,
        )
        .unwrap();
        let head = read_head(&path).unwrap();
        assert_eq!(head.metadata.workdir, "/w");
        // Metadata last (seed 003's order) or missing: read to the end.
        std::fs::write(&path, r#"{"messages": [], "id": "a", "x": 1}"#).unwrap();
        assert_eq!(read_head(&path).unwrap().id, "a");
        std::fs::write(&path, r#"{"messages": [], "metadata": {}}"#).unwrap();
        assert!(read_head(&path).is_err());
        std::fs::write(&path, r#"{"id": "a", "messages": [1,"#).unwrap();
        assert!(read_head(&path).is_err());
    }
}

//! A page of a stored transcript read without the rest of its messages:
//! what the viewer shows of a session of hundreds of MiB.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::transcript::{Message, Transcript};

use super::open_stream;

/// A stretch of a stored transcript's messages, read without the others
/// ([`read_window`]): what a page of a large session needs.
#[derive(Debug, Clone)]
pub struct Window {
    /// The transcript's id, metadata and other keys (those read), with only
    /// the window's messages.
    pub transcript: Transcript,
    /// The index, in the whole transcript, of the first message kept.
    pub from: usize,
    /// How many messages the whole transcript holds.
    pub total: usize,
    /// Whether the file was read to its end; when reading stopped early,
    /// keys after the point it stopped at (an imported log's `rawLines`)
    /// are not in `transcript.extra`.
    pub whole: bool,
}

/// How [`read_window`] may stop short of the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowStop {
    /// Read every key (the head complete, the file checked to its end).
    AtEnd,
    /// Stop once the id, the metadata and the window are read and the
    /// total is known: counted, or recorded in the metadata (an imported
    /// log's, whose metadata comes first), so the first page of a session
    /// of hundreds of MiB reads only its start.
    Early,
}

/// Reads messages `[from, from + count)` of the transcript at `path` and
/// the total count, streaming: the other messages are skipped unparsed, so
/// memory is bounded by the window, not the file. Keys may come in any
/// order; a message inside the window that does not fit the format makes
/// the file corrupt, as [`read_file`] says, one outside it is only counted.
pub fn read_window(path: &Path, from: usize, count: usize, stop: WindowStop) -> Result<Window> {
    let reader = open_stream(path)?;
    let mut slot = WindowSlot {
        from,
        end: from.saturating_add(count),
        stop,
        head: Map::new(),
        recorded: None,
        kept: vec![],
        counted: 0,
        messages_done: false,
        stopped: false,
    };
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let read = serde::de::DeserializeSeed::deserialize(WindowSeed(&mut slot), &mut de);
    match read {
        Ok(()) => de.end().map_err(|e| corrupt(e.to_string()))?,
        Err(_) if slot.stopped => {}
        Err(e) => return Err(corrupt(e.to_string())),
    }
    // The head as the whole file's parse reads it (the same defaults and
    // lenient fields), without its messages; through text, as a value's
    // large numbers do not pass the flattened keys otherwise.
    let head = serde_json::to_string(&slot.head).map_err(|e| corrupt(e.to_string()))?;
    drop(std::mem::take(&mut slot.head));
    let mut transcript: Transcript =
        serde_json::from_str(&head).map_err(|e| corrupt(e.to_string()))?;
    transcript.messages = slot.kept;
    // Read to its end, the file's own count stands (a file whose messages
    // key is missing or misspelt holds none, whatever its metadata says);
    // the recorded count only stands in for the part not read.
    let total = if slot.messages_done || !slot.stopped {
        slot.counted
    } else {
        let recorded = slot.recorded.and_then(|n| usize::try_from(n).ok());
        recorded.unwrap_or(0).max(slot.counted)
    };
    Ok(Window {
        transcript,
        from: from.min(total),
        total,
        whole: !slot.stopped,
    })
}

/// What [`WindowSeed`] has read so far.
struct WindowSlot {
    from: usize,
    end: usize,
    stop: WindowStop,
    /// Every key but `messages`, as read.
    head: Map<String, Value>,
    /// The message count the metadata records (an imported log's).
    recorded: Option<u64>,
    kept: Vec<Message>,
    counted: usize,
    messages_done: bool,
    /// Reading ended early on purpose (the error that ended it is ours).
    stopped: bool,
}

impl WindowSlot {
    fn head_read(&self) -> bool {
        self.head.contains_key("id") && self.head.contains_key("metadata")
    }

    /// Whether the rest of the file adds nothing the caller asked for.
    fn enough(&self) -> bool {
        self.stop == WindowStop::Early
            && self.head_read()
            && (self.messages_done || (self.counted >= self.end && self.recorded.is_some()))
    }
}

/// A transcript object: its keys kept as values, its messages windowed.
struct WindowSeed<'a>(&'a mut WindowSlot);

impl<'de> serde::de::DeserializeSeed<'de> for WindowSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for WindowSeed<'_> {
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
            if key == "messages" {
                if slot.messages_done {
                    return Err(A::Error::duplicate_field("messages"));
                }
                a.next_value_seed(WindowMessages(&mut *slot))?;
                slot.messages_done = true;
            } else {
                let known = matches!(key.as_str(), "id" | "timestamp" | "version" | "metadata");
                if known && slot.head.contains_key(&key) {
                    // As the whole file's parse refuses it.
                    return Err(A::Error::custom(format_args!("duplicate field `{key}`")));
                }
                let v: Value = a.next_value()?;
                if key == "metadata" {
                    slot.recorded = v
                        .get("source")
                        .and_then(|s| s.get("messages"))
                        .and_then(Value::as_u64);
                }
                slot.head.insert(key, v);
            }
            if slot.enough() {
                slot.stopped = true;
                return Err(A::Error::custom(WINDOW_READ));
            }
        }
        Ok(())
    }
}

/// The message of the error that stops [`WindowSeed`] early.
const WINDOW_READ: &str = "window read";

/// A transcript's `messages`: those in the window parsed and kept, the
/// others skipped, all counted.
struct WindowMessages<'a>(&'a mut WindowSlot);

impl<'de> serde::de::DeserializeSeed<'de> for WindowMessages<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for WindowMessages<'_> {
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
        loop {
            if slot.enough() {
                slot.stopped = true;
                return Err(A::Error::custom(WINDOW_READ));
            }
            let inside = (slot.from..slot.end).contains(&slot.counted);
            let more = if inside {
                a.next_element::<Message>()?.map(|m| slot.kept.push(m))
            } else {
                a.next_element::<serde::de::IgnoredAny>()?.map(|_| ())
            };
            if more.is_none() {
                return Ok(());
            }
            slot.counted += 1;
        }
    }
}

//! A page of a stored transcript read without the rest of its messages:
//! what the viewer shows of a session of hundreds of MiB.

use std::path::Path;

use serde_json::{Map, Value};

use logbook_model::error::Result;
use logbook_model::transcript::{Message, Transcript};

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
    /// With [`WindowStop::WindowLines`], what was kept of an imported log's
    /// `rawLines` (only the window's lines are in `transcript.extra`).
    pub raw_lines: Option<RawLinesKept>,
}

/// Which of an imported log's `rawLines` a window kept: those of the log's
/// lines `first..first + count`, of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLinesKept {
    /// The log's line number (from 1) of the first line kept.
    pub first: u64,
    /// How many were kept.
    pub count: u64,
    /// How many the file holds.
    pub total: u64,
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
    /// Read every key as [`WindowStop::AtEnd`] does, but of an imported
    /// log's `rawLines` keep only the window's lines: those from its first
    /// message's log line (line 1 for the first window) up to the line
    /// before the next message's, so an answer for a few messages of a
    /// large session never holds the whole log's lines.
    WindowLines,
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
        first_line: None,
        next_line: None,
        raw: None,
    };
    let corrupt = |reason: String| super::corrupt(path, reason);
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
        raw_lines: slot.raw,
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
    /// With [`WindowStop::WindowLines`]: the log line of the window's
    /// first message, and of the first message after it.
    first_line: Option<u64>,
    /// See `first_line`.
    next_line: Option<u64>,
    /// What was kept of `rawLines`.
    raw: Option<RawLinesKept>,
}

impl WindowSlot {
    /// The log lines (from 1, end excluded) of the window's raw lines; none
    /// when the window is empty or its first message names no line.
    fn raw_range(&self) -> (u64, u64) {
        let end = self.next_line.unwrap_or(u64::MAX);
        if self.from == 0 {
            return (1, end);
        }
        match (self.kept.is_empty(), self.first_line) {
            (false, Some(first)) => (first, end),
            _ => (0, 0),
        }
    }

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
            } else if key == "rawLines" && slot.stop == WindowStop::WindowLines {
                if slot.raw.is_some() {
                    return Err(A::Error::duplicate_field("rawLines"));
                }
                // Before the messages (not as Logbook writes it), which
                // lines are the window's is not known yet: none are kept.
                let range = if slot.messages_done {
                    slot.raw_range()
                } else {
                    (0, 0)
                };
                let mut kept = vec![];
                let total = a.next_value_seed(WindowRawLines {
                    range,
                    kept: &mut kept,
                })?;
                slot.raw = Some(RawLinesKept {
                    first: range.0.max(1),
                    count: kept.len() as u64,
                    total,
                });
                slot.head.insert(key, Value::Array(kept));
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
            let lines = slot.stop == WindowStop::WindowLines;
            let more = if inside {
                a.next_element::<Message>()?.map(|m| {
                    if lines && slot.kept.is_empty() {
                        slot.first_line = line_of(m.metadata.as_ref());
                    }
                    slot.kept.push(m);
                })
            } else if lines && slot.counted == slot.end {
                // Only its line is read: the rest is skipped unheld.
                a.next_element::<LineOnly>()?
                    .map(|m| slot.next_line = m.metadata.and_then(|m| m.line))
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

/// The log line a message came from (`metadata.line`, an imported log's).
fn line_of(metadata: Option<&Value>) -> Option<u64> {
    metadata?.get("line")?.as_u64()
}

/// A message read only for its log line, the rest skipped.
#[derive(serde::Deserialize)]
struct LineOnly {
    #[serde(default)]
    metadata: Option<LineMeta>,
}

/// See [`LineOnly`].
#[derive(serde::Deserialize)]
struct LineMeta {
    #[serde(default)]
    line: Option<u64>,
}

/// An imported log's `rawLines` (item `i` is the log's line `i + 1`): those
/// of the lines in `range` kept, the others skipped unheld, all counted.
struct WindowRawLines<'a> {
    range: (u64, u64),
    kept: &'a mut Vec<Value>,
}

impl<'de> serde::de::DeserializeSeed<'de> for WindowRawLines<'_> {
    type Value = u64;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<u64, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for WindowRawLines<'_> {
    type Value = u64;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of raw lines")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<u64, A::Error> {
        let mut line = 0u64;
        loop {
            let next = line + 1;
            let more = if (self.range.0..self.range.1).contains(&next) {
                a.next_element::<Value>()?.map(|v| self.kept.push(v))
            } else {
                a.next_element::<serde::de::IgnoredAny>()?.map(|_| ())
            };
            if more.is_none() {
                return Ok(line);
            }
            line = next;
        }
    }
}

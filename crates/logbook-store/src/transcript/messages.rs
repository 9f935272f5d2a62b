//! Messages of a stored transcript read one at a time, for the index's
//! per-message text and for the snippets of a find: memory holds one
//! message, not the file.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use logbook_model::error::{Error, Result};
use logbook_model::transcript::Message;

use super::{HEAD_READ, open_stream};

/// Calls `each` with every message of the transcript at `path` from index
/// `from` on, in order, reading the file as a stream (the messages before
/// `from` are skipped unparsed, a message of another shape left out), so
/// that memory holds one message at a time. An error from `each` stops the
/// read and is returned.
pub fn each_message_from(
    path: &Path,
    from: usize,
    each: &mut dyn FnMut(usize, &Message) -> Result<()>,
) -> Result<()> {
    walk(
        path,
        &mut |i| if i < from { Want::Skip } else { Want::Parse },
        &mut |i, m| each(i, &m),
    )
}

/// The messages at `wanted` (indexes, ascending) of the transcript at
/// `path`, each with its index: the file is read as a stream, each other
/// message skipped unparsed, and reading stops after the last one wanted,
/// so a find's snippets cost the messages up to its last match. A message
/// of another shape is left out.
pub fn read_messages_at(path: &Path, wanted: &[usize]) -> Result<Vec<(usize, Message)>> {
    let Some(&last) = wanted.last() else {
        return Ok(vec![]);
    };
    let mut out = vec![];
    walk(
        path,
        &mut |i| match i {
            _ if i > last => Want::Stop,
            _ if wanted.binary_search(&i).is_ok() => Want::Parse,
            _ => Want::Skip,
        },
        &mut |i, m| {
            out.push((i, m));
            Ok(())
        },
    )?;
    Ok(out)
}

/// What a [`walk`] does with the message at an index.
enum Want {
    /// Parse it and hand it over.
    Parse,
    /// Step over it unparsed.
    Skip,
    /// End the read here: nothing after is wanted.
    Stop,
}

/// Reads the transcript at `path` as a stream, asking `want` about each
/// message in turn and handing those it wants parsed to `each`; an error
/// from `each` stops the read and is returned.
fn walk(
    path: &Path,
    want: &mut dyn FnMut(usize) -> Want,
    each: &mut dyn FnMut(usize, Message) -> Result<()>,
) -> Result<()> {
    let reader = open_stream(path)?;
    let mut walk = Walk {
        want,
        each,
        failed: None,
        stopped: false,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let read = serde::de::DeserializeSeed::deserialize(&mut walk, &mut de);
    if let Some(e) = walk.failed {
        return Err(e);
    }
    match read {
        Ok(()) => Ok(()),
        Err(_) if walk.stopped => Ok(()),
        Err(e) => Err(super::corrupt(path, e.to_string())),
    }
}

/// A [`walk`] under way: what it asks and calls, and how it ended.
struct Walk<'f> {
    want: &'f mut dyn FnMut(usize) -> Want,
    each: &'f mut dyn FnMut(usize, Message) -> Result<()>,
    failed: Option<Error>,
    /// Set when the read is stopped on purpose ([`Want::Stop`]).
    stopped: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Walk<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a transcript object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<(), A::Error> {
        while let Some(key) = a.next_key::<String>()? {
            if key == "messages" {
                a.next_value_seed(WalkSeq(&mut *self))?;
                // The keys after the messages (metadata, in the files
                // Logbook writes) must still be read past: returning here
                // left the map open, which the deserializer calls corrupt.
                continue;
            }
            a.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

struct WalkSeq<'a, 'f>(&'a mut Walk<'f>);

impl<'de> serde::de::DeserializeSeed<'de> for WalkSeq<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for WalkSeq<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<(), A::Error> {
        use serde::de::Error as _;
        let walk = self.0;
        let mut i = 0;
        loop {
            match (walk.want)(i) {
                Want::Stop => {
                    walk.stopped = true;
                    return Err(A::Error::custom(HEAD_READ));
                }
                Want::Skip => {
                    if a.next_element::<serde::de::IgnoredAny>()?.is_none() {
                        return Ok(());
                    }
                }
                Want::Parse => {
                    let Some(v) = a.next_element::<Value>()? else {
                        return Ok(());
                    };
                    if let Ok(m) = Message::deserialize(v)
                        && let Err(e) = (walk.each)(i, m)
                    {
                        walk.failed = Some(e);
                        return Err(A::Error::custom("stopped"));
                    }
                }
            }
            i += 1;
        }
    }
}

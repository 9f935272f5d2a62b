//! Messages of a stored transcript read one at a time, for the index's
//! per-message text and for the snippets of a find: memory holds one
//! message, not the file.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::transcript::Message;

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
    let reader = open_stream(path)?;
    let mut walk = EachFrom {
        from,
        each,
        failed: None,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let read = serde::de::DeserializeSeed::deserialize(&mut walk, &mut de);
    if let Some(e) = walk.failed {
        return Err(e);
    }
    read.map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason: e.to_string(),
    })
}

/// What [`each_message_from`] calls, and the error that stopped it.
struct EachFrom<'f> {
    from: usize,
    each: &'f mut dyn FnMut(usize, &Message) -> Result<()>,
    failed: Option<Error>,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut EachFrom<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut EachFrom<'_> {
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
                return a.next_value_seed(EachFromSeq(self));
            }
            a.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

struct EachFromSeq<'a, 'f>(&'a mut EachFrom<'f>);

impl<'de> serde::de::DeserializeSeed<'de> for EachFromSeq<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for EachFromSeq<'_, '_> {
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
            if i < walk.from {
                if a.next_element::<serde::de::IgnoredAny>()?.is_none() {
                    return Ok(());
                }
            } else {
                let Some(v) = a.next_element::<Value>()? else {
                    return Ok(());
                };
                if let Ok(m) = Message::deserialize(v)
                    && let Err(e) = (walk.each)(i, &m)
                {
                    walk.failed = Some(e);
                    return Err(A::Error::custom("stopped"));
                }
            }
            i += 1;
        }
    }
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
    let reader = open_stream(path)?;
    let mut found = MessagesAt {
        wanted,
        last,
        out: vec![],
        done: false,
    };
    let mut de = serde_json::Deserializer::from_reader(reader);
    match serde::de::DeserializeSeed::deserialize(&mut found, &mut de) {
        Ok(()) => Ok(found.out),
        Err(_) if found.done => Ok(found.out),
        Err(e) => Err(Error::Corrupt {
            path: path.to_path_buf(),
            what: "transcript",
            reason: e.to_string(),
        }),
    }
}

/// What [`read_messages_at`] looks for, and has found.
struct MessagesAt<'w> {
    wanted: &'w [usize],
    last: usize,
    out: Vec<(usize, Message)>,
    /// Set when the read is stopped on purpose, after the last one wanted.
    done: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut MessagesAt<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut MessagesAt<'_> {
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
                return a.next_value_seed(MessagesAtSeq(self));
            }
            a.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

struct MessagesAtSeq<'a, 'w>(&'a mut MessagesAt<'w>);

impl<'de> serde::de::DeserializeSeed<'de> for MessagesAtSeq<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MessagesAtSeq<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<(), A::Error> {
        use serde::de::Error as _;
        let at = self.0;
        let mut i = 0;
        loop {
            if at.wanted.binary_search(&i).is_ok() {
                let Some(v) = a.next_element::<Value>()? else {
                    return Ok(());
                };
                if let Ok(m) = Message::deserialize(v) {
                    at.out.push((i, m));
                }
            } else if a.next_element::<serde::de::IgnoredAny>()?.is_none() {
                return Ok(());
            }
            if i >= at.last {
                // Stops the read: nothing after is wanted.
                at.done = true;
                return Err(A::Error::custom(HEAD_READ));
            }
            i += 1;
        }
    }
}

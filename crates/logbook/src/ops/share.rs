//! Sharing a session (`logbook transcript export ID --html | --markdown`):
//! a stored transcript read page by page for a face to render, each
//! message with its secrets redacted ([`crate::model::secrets`]) unless
//! asked otherwise. The file is streamed: memory holds a page and the
//! messages around it, so a session of hundreds of MiB exports in the
//! memory of a small one.

use crate::Logbook;
use crate::error::Result;
use crate::model::agent_log::Usage;
use crate::model::secrets;
use crate::model::transcript::{Kind, Message, Transcript};
use crate::ops::transcript::{self, WindowStop};

/// Messages on one page.
pub const PAGE: usize = 200;

/// Messages kept before and after a page, to pair its tool calls and
/// results across its edges (as the viewer's pages do).
pub const AROUND: usize = 50;

/// The transcript being shared, without its messages.
#[derive(Debug, Clone)]
pub struct Head {
    /// Id and metadata (redacted when asked), no messages.
    pub transcript: Transcript,
    /// Main or subagent.
    pub kind: Kind,
    /// How many messages it holds.
    pub total: usize,
}

/// One page: `messages[shown]` are its own, the others only context, and
/// `messages[0]` is message `first` of the transcript.
#[derive(Debug)]
pub struct Page<'a> {
    /// The page's messages with their context.
    pub messages: &'a [Message],
    /// The index in the transcript of `messages[0]`.
    pub first: usize,
    /// Which of `messages` the page shows.
    pub shown: std::ops::Range<usize>,
    /// The tokens each of `messages` was charged with.
    pub charged: Vec<Option<Usage>>,
    /// Whether a page came before it (its context's results were shown).
    pub continued: bool,
}

/// Redacts every string of a message (its blocks, metadata, usage).
pub fn redact_message(m: &mut Message) {
    for b in &mut m.blocks {
        secrets::redact_value(b);
    }
    if let Some(v) = &mut m.metadata {
        secrets::redact_value(v);
    }
    secrets::redact_string(&mut m.role);
}

/// Reads transcript `id` (as [`transcript::load`] finds it), calls `head`
/// once, then `each` with every page in order.
pub fn each_page(
    p: &Logbook,
    id: &str,
    redact: bool,
    head: &mut dyn FnMut(&Head) -> Result<()>,
    each: &mut dyn FnMut(&Page<'_>) -> Result<()>,
) -> Result<()> {
    let found = transcript::load_window(p, id, 0, 0, WindowStop::Early)?;
    let mut t = found.window.transcript;
    t.messages.clear();
    if redact {
        let m = &mut t.metadata;
        for s in [&mut m.workdir, &mut m.started_at, &mut m.last_active_at] {
            secrets::redact_string(s);
        }
        for v in t.extra.values_mut().chain(m.extra.values_mut()) {
            secrets::redact_value(v);
        }
    }
    let info = Head {
        transcript: t.clone(),
        kind: found.kind,
        total: found.window.total,
    };
    head(&info)?;
    let mut buf: Vec<Message> = vec![];
    let mut buf_first = 0usize;
    let mut next = 0usize;
    let mut emit = |buf: &mut Vec<Message>,
                    buf_first: &mut usize,
                    next: &mut usize,
                    end: bool|
     -> Result<()> {
        while (end && *next < *buf_first + buf.len())
            || (!end && *buf_first + buf.len() >= *next + PAGE + AROUND)
        {
            let at = *next - *buf_first;
            let mut window = t.clone();
            window.messages = std::mem::take(buf);
            let charged = transcript::links::charged_in(&window, *buf_first, info.total);
            *buf = window.messages;
            each(&Page {
                messages: buf,
                first: *buf_first,
                shown: at..(at + PAGE).min(buf.len()),
                charged,
                continued: *next > 0,
            })?;
            *next += PAGE;
            let keep = next.saturating_sub(AROUND).max(*buf_first);
            buf.drain(..(keep - *buf_first).min(buf.len()));
            *buf_first = keep;
        }
        Ok(())
    };
    let path = found.path;
    logbook_store::transcript::each_message_from(&path, 0, &mut |_, m| {
        let mut m = m.clone();
        if redact {
            redact_message(&mut m);
        }
        buf.push(m);
        emit(&mut buf, &mut buf_first, &mut next, false)
    })?;
    emit(&mut buf, &mut buf_first, &mut next, true)
}

/// Writes a shared file to `path` the one safe way: written beside it and
/// renamed over once whole, so a failed export leaves nothing half
/// written under the name asked for.
pub fn write_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<()>,
) -> Result<()> {
    logbook_store::write_atomic_file(path, |w| write(w))
}

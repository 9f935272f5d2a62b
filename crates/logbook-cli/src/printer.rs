//! The one place output is written: human text or exactly one JSON value.
//!
//! Human text holds what other programs wrote (a log's prompt and `cwd`)
//! and what callers chose (a name): everything written for a person goes
//! through [`render`], which shows what a terminal would act on as
//! `\u{…}` escapes. Logbook's own colours are escape sequences too, so
//! [`Style`] writes them as marks only this process can spell, and
//! `render` turns those into colour after escaping everything else.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use anyhow::Result;
use serde_json::Value;

/// What a command produced: the JSON value for `--json` and the text for people.
pub(crate) struct Output {
    pub(crate) json: Value,
    pub(crate) human: String,
    /// Printed as an error after the output, with exit code 1: for commands
    /// whose report is the answer but whose finding is a failure (`doctor`).
    pub(crate) failure: Option<String>,
    /// A line for stderr after the output (e.g. "12 more runs match"), so
    /// it follows the listing it is about and never mixes into `--json`.
    pub(crate) note: Option<String>,
    /// Already written while the command ran (`serve` prints its URL
    /// before serving): nothing more is printed at the end.
    pub(crate) printed: bool,
}

impl Output {
    pub(crate) fn new(json: Value, human: impl Into<String>) -> Self {
        Output {
            json,
            human: human.into(),
            failure: None,
            note: None,
            printed: false,
        }
    }

    /// An output the command has already printed itself.
    pub(crate) fn printed() -> Self {
        Output {
            printed: true,
            ..Output::new(Value::Null, "")
        }
    }

    /// The same output, reported as a failure after it is printed.
    pub(crate) fn failing(mut self, failure: impl Into<String>) -> Self {
        self.failure = Some(failure.into());
        self
    }

    /// The same output with a line for stderr after it.
    pub(crate) fn with_note(mut self, note: Option<String>) -> Self {
        self.note = note;
        self
    }
}

/// Writes outputs in the chosen mode.
pub(crate) struct Printer {
    pub(crate) json: bool,
    pub(crate) style: Style,
}

impl Printer {
    /// Runs `work` with a progress callback drawing a bar on stderr when a
    /// person is watching (a terminal, and not `--json`); `what` names the
    /// work and the bar's counts, as in `"indexing [{bar:30}] {pos}/{len} files"`.
    pub(crate) fn with_progress<T>(
        &self,
        what: &str,
        work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> T,
    ) -> T {
        let bar = (!self.json && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(&format!("{{spinner}} {what}"))
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar
        });
        let progress = |done: u64, total: u64| {
            if let Some(bar) = &bar {
                bar.set_length(total);
                bar.set_position(done);
            }
        };
        let out = work(&progress);
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        out
    }

    pub(crate) fn new(json: bool) -> Self {
        let style = if json {
            Style { color: false }
        } else {
            Style::for_stdout()
        };
        Printer { json, style }
    }

    pub(crate) fn print(&self, out: &Output) -> Result<()> {
        if out.printed {
            if let Some(note) = &out.note {
                let _ = writeln!(std::io::stderr(), "{}", render(note));
            }
            return Ok(());
        }
        if self.json {
            self.write_json(&out.json)?;
        } else if !out.human.is_empty() {
            let mut stdout = std::io::stdout().lock();
            write!(stdout, "{}", render(&out.human))?;
            if !out.human.ends_with('\n') {
                writeln!(stdout)?;
            }
            stdout.flush()?;
        }
        if let Some(note) = &out.note {
            let _ = writeln!(std::io::stderr(), "{}", render(note));
        }
        Ok(())
    }

    /// Writes `value` as the one JSON value on stdout, serialized straight
    /// to it: a large report (a transcript, doctor's findings) is never held
    /// a second time as a `Value` or as text. Converting back to io::Error
    /// lets a closed pipe be seen.
    pub(crate) fn write_json(&self, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        serde_json::to_writer_pretty(&mut w, value).map_err(std::io::Error::from)?;
        writeln!(w)?;
        w.flush()
    }

    /// A listing printed item by item as the command produces it (see
    /// [`Stream`]), for outputs too long to hold: every run `find` matches.
    pub(crate) fn stream(&self) -> Stream {
        Stream {
            json: self.json,
            out: std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
            items: 0,
            failed: None,
        }
    }

    /// A warning on stderr (never on stdout, which `--json` keeps clean).
    pub(crate) fn warn(&self, msg: &str) {
        let style = Style::for_stderr();
        let line = format!("{} {msg}", style.yellow("warning:"));
        let _ = writeln!(std::io::stderr(), "{}", render(&line));
    }
}

/// A listing written as it is produced: with `--json` one array, its
/// elements formatted exactly as [`Printer::print`] formats a whole array,
/// closed by [`Stream::finish`] even when the command fails half way, so
/// stdout always holds one valid JSON value; otherwise each item's text.
/// After a write fails (a closed pipe: `logbook find | head`) items are
/// refused and the error is returned by `finish`.
pub(crate) struct Stream {
    json: bool,
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    items: usize,
    failed: Option<std::io::Error>,
}

impl Stream {
    /// Writes one item: `json` with `--json`, else `human`. `Break` once
    /// stdout is gone: the producer stops.
    pub(crate) fn item(
        &mut self,
        json: &impl serde::Serialize,
        human: &str,
    ) -> std::ops::ControlFlow<()> {
        if self.failed.is_some() {
            return std::ops::ControlFlow::Break(());
        }
        let written = if self.json {
            self.json_item(json)
        } else {
            self.out.write_all(render(human).as_bytes())
        };
        self.items += 1;
        match written {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(e) => {
                self.failed = Some(e);
                std::ops::ControlFlow::Break(())
            }
        }
    }

    fn json_item(&mut self, json: &impl serde::Serialize) -> std::io::Result<()> {
        // Made whole before any of it is written: an item that fails to
        // serialize leaves the array valid.
        let mut item = Vec::new();
        serde_json::to_writer_pretty(logbook::model::text::Nested::new(&mut item, b"  "), json)
            .map_err(std::io::Error::from)?;
        self.out
            .write_all(if self.items == 0 { b"[\n  " } else { b",\n  " })?;
        self.out.write_all(&item)
    }

    /// Ends the listing (`]` with `--json`, or `empty` when nothing was
    /// listed), then `trailer` in human output only (`--json`'s stdout holds
    /// only the array), and flushes; the first write error, if any.
    pub(crate) fn finish(mut self, empty: &str, trailer: &str) -> std::io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let end: Vec<u8> = match (self.json, self.items) {
            (true, 0) => b"[]\n".to_vec(),
            (true, _) => b"\n]\n".to_vec(),
            (false, 0) => render(empty).into_owned().into_bytes(),
            (false, _) => vec![],
        };
        self.out.write_all(&end)?;
        if !self.json {
            self.out.write_all(render(trailer).as_bytes())?;
        }
        self.out.flush()
    }
}

/// ANSI colour, only on a terminal and never with `NO_COLOR`.
#[derive(Clone, Copy)]
pub(crate) struct Style {
    pub(crate) color: bool,
}

impl Style {
    fn allowed() -> bool {
        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }
    pub(crate) fn for_stdout() -> Self {
        Style {
            color: Self::allowed() && std::io::stdout().is_terminal(),
        }
    }
    pub(crate) fn for_stderr() -> Self {
        Style {
            color: Self::allowed() && std::io::stderr().is_terminal(),
        }
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            let mark = mark();
            format!("{mark}{code}{MARK_END}{s}{mark}0{MARK_END}")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub(crate) fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
}

/// Ends a colour mark; a lone one (in text from outside) is left as it is.
const MARK_END: char = '\u{fdd1}';

/// The start of a colour mark: a Unicode noncharacter, then a number
/// drawn at random when the process starts, so no file written before it
/// (nor a caller who cannot see it) can spell a mark and get its colour.
fn mark() -> &'static str {
    static MARK: OnceLock<String> = OnceLock::new();
    MARK.get_or_init(|| {
        use std::hash::BuildHasher;
        let nonce = std::collections::hash_map::RandomState::new().hash_one(std::process::id());
        format!("\u{fdd0}{nonce:016x}")
    })
}

/// `text` made safe for a terminal: what it could act on shown as escapes
/// ([`logbook::model::terminal::shown`]), then this process's colour marks
/// turned into the colours they stand for.
pub(crate) fn render(text: &str) -> Cow<'_, str> {
    let shown = logbook::model::terminal::shown(text);
    let mark = mark();
    if !shown.contains(mark) {
        return shown;
    }
    let mut parts = shown.split(mark);
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        // A mark is always `code MARK_END`, as `Style::paint` writes it.
        let (code, rest) = part.split_once(MARK_END).unwrap_or(("0", part));
        out.push_str(&format!("\x1b[{code}m{rest}"));
    }
    Cow::Owned(out)
}

/// `text` followed by spaces up to `width` characters. Columns are padded
/// with this before they are painted: `format!("{:<9}")` counts the colour
/// codes of a painted string as characters and pads it too little.
pub(crate) fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

pub(crate) use logbook::model::naming::thousands;

#[cfg(test)]
mod tests {
    use super::{MARK_END, Style, mark, pad, render};

    #[test]
    fn columns_are_padded_before_they_are_painted() {
        let colour = Style { color: true };
        let painted = colour.green(&pad("completed", 11));
        assert_eq!(render(&painted), "\x1b[32mcompleted  \x1b[0m");
        assert_eq!(pad("running", 9), "running  ");
        assert_eq!(pad("…", 3), "…  ");
        assert_eq!(pad("cancelled-long", 9), "cancelled-long");
    }

    #[test]
    fn only_our_own_colours_reach_the_terminal() {
        let colour = Style { color: true };
        let foreign =
            format!("\x1b]52;c;QUJD\x07 \u{fdd0}31{MARK_END}x \u{fdd0}0000000000000000{MARK_END}");
        let line = format!("{} {foreign}\n", colour.red("error:"));
        assert_eq!(
            render(&line),
            format!(
                "\x1b[31merror:\x1b[0m \\u{{1b}}]52;c;QUJD\\u{{7}} \u{fdd0}31{MARK_END}x \u{fdd0}0000000000000000{MARK_END}\n"
            )
        );
        assert!(mark().starts_with('\u{fdd0}'));
        assert_eq!(render("plain\ttext\n"), "plain\ttext\n");
    }

    #[test]
    fn thousands() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(190000), "190,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}

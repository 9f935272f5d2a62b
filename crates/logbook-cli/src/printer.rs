//! The one place output is written: human text or exactly one JSON value.

use std::io::{IsTerminal, Write};

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
            return Ok(());
        }
        let mut stdout = std::io::stdout().lock();
        if self.json {
            // Streamed, so a large transcript is not held a second time as
            // text; converting back to io::Error lets a closed pipe be seen.
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut stdout);
            serde_json::to_writer_pretty(&mut w, &out.json).map_err(std::io::Error::from)?;
            writeln!(w)?;
            w.flush()?;
        } else if !out.human.is_empty() {
            write!(stdout, "{}", out.human)?;
            if !out.human.ends_with('\n') {
                writeln!(stdout)?;
            }
        }
        stdout.flush()?;
        if let Some(note) = &out.note {
            let _ = writeln!(std::io::stderr(), "{note}");
        }
        Ok(())
    }

    /// A warning on stderr (never on stdout, which `--json` keeps clean).
    pub(crate) fn warn(&self, msg: &str) {
        let style = Style::for_stderr();
        let _ = writeln!(std::io::stderr(), "{} {msg}", style.yellow("warning:"));
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
            format!("\x1b[{code}m{s}\x1b[0m")
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

/// `text` followed by spaces up to `width` characters. Columns are padded
/// with this before they are painted: `format!("{:<9}")` counts the colour
/// codes of a painted string as characters and pads it too little.
pub(crate) fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// `190000` → `190,000`, as the seed's reports print counts.
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{Style, pad};

    #[test]
    fn columns_are_padded_before_they_are_painted() {
        let colour = Style { color: true };
        let painted = colour.green(&pad("completed", 11));
        assert_eq!(painted, "\x1b[32mcompleted  \x1b[0m");
        assert_eq!(pad("running", 9), "running  ");
        assert_eq!(pad("…", 3), "…  ");
        assert_eq!(pad("cancelled-long", 9), "cancelled-long");
    }

    #[test]
    fn thousands() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(190000), "190,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}

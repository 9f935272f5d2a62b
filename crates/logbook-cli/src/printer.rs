//! The one place output is written: human text or exactly one JSON value.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde_json::Value;

/// What a command produced: the JSON value for `--json` and the text for people.
pub struct Output {
    pub json: Value,
    pub human: String,
}

impl Output {
    pub fn new(json: Value, human: impl Into<String>) -> Self {
        Output {
            json,
            human: human.into(),
        }
    }
}

/// Writes outputs in the chosen mode.
pub struct Printer {
    pub json: bool,
    pub style: Style,
}

impl Printer {
    pub fn new(json: bool) -> Self {
        let style = if json {
            Style { color: false }
        } else {
            Style::for_stdout()
        };
        Printer { json, style }
    }

    pub fn print(&self, out: &Output) -> Result<()> {
        let mut stdout = std::io::stdout().lock();
        if self.json {
            // Serialised first so a closed pipe surfaces as an io::Error.
            let text = serde_json::to_string_pretty(&out.json)?;
            writeln!(stdout, "{text}")?;
        } else if !out.human.is_empty() {
            write!(stdout, "{}", out.human)?;
            if !out.human.ends_with('\n') {
                writeln!(stdout)?;
            }
        }
        stdout.flush()?;
        Ok(())
    }

    /// A warning on stderr (never on stdout, which `--json` keeps clean).
    pub fn warn(&self, msg: &str) {
        let style = Style::for_stderr();
        let _ = writeln!(std::io::stderr(), "{} {msg}", style.yellow("warning:"));
    }
}

/// ANSI colour, only on a terminal and never with `NO_COLOR`.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn allowed() -> bool {
        std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }
    pub fn for_stdout() -> Self {
        Style {
            color: Self::allowed() && std::io::stdout().is_terminal(),
        }
    }
    pub fn for_stderr() -> Self {
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
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
}

/// `190000` → `190,000`, as the seed's reports print counts.
pub fn thousands(n: u64) -> String {
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
    #[test]
    fn thousands() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(190000), "190,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }
}

//! A forgiving reader of the first members of a JSON object, for
//! [`super::Format::detect_start`]: which agent wrote a line too long to
//! parse whole.

/// The top-level members of the JSON object a text begins, read as far as
/// the text goes: for [`super::Format::detect_start`], which must not parse (nor
/// hold) a whole line to know who wrote it.
pub(super) struct Members<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Members<'a> {
    /// `None` unless the text begins an object.
    pub(super) fn new(text: &'a str) -> Option<Members<'a>> {
        let mut m = Members {
            bytes: text.as_bytes(),
            at: 0,
        };
        m.skip_space();
        (m.peek() == Some(b'{')).then(|| {
            m.at += 1;
            m
        })
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    /// Moves past the string starting at the current `"`; `None` when the
    /// text ends inside it.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }

    /// The string starting at the current `"`, decoded; `None` when the
    /// text ends inside it or it is not a valid JSON string.
    fn string(&mut self) -> Option<String> {
        let start = self.at;
        self.skip_string()?;
        let raw = std::str::from_utf8(self.bytes.get(start..self.at)?).ok()?;
        serde_json::from_str(raw).ok()
    }

    /// Skips a value that is not a string (a number, a literal, an object
    /// or array with whatever it nests); `None` when the text ends first.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                // Skipped, not decoded: only where it ends matters.
                b'"' => self.skip_string()?,
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' if depth > 0 => {
                    depth -= 1;
                    self.at += 1;
                }
                b',' | b'}' if depth == 0 => return Some(()),
                _ => self.at += 1,
            }
        }
    }

    /// The next member's key, with its value when that is a string; a key
    /// whose value the text cuts off still counts (its value is `None`).
    /// `None` at the object's end, at the text's end, or at a syntax error.
    pub(super) fn next_member(&mut self) -> Option<(String, Option<String>)> {
        self.skip_space();
        if self.peek() == Some(b',') {
            self.at += 1;
            self.skip_space();
        }
        if self.peek() != Some(b'"') {
            return None;
        }
        let key = self.string()?;
        self.skip_space();
        if self.peek() != Some(b':') {
            return None;
        }
        self.at += 1;
        self.skip_space();
        let value = match self.peek() {
            None => None,
            Some(b'"') => {
                let v = self.string();
                if v.is_none() {
                    // Cut off inside the value: the key was still seen.
                    self.at = self.bytes.len();
                }
                v
            }
            Some(_) => {
                if self.skip_value().is_none() {
                    self.at = self.bytes.len();
                }
                None
            }
        };
        Some((key, value))
    }
}

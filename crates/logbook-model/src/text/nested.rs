//! Pretty JSON nested one level deeper, written as it is made: the one
//! indenter behind a stored transcript's items and the CLI's streamed
//! `--json` listings.

use std::io::Write;

/// A writer that indents every line after the first by `by`, so pretty JSON
/// written into it lands inside an enclosing array or object without being
/// held as text first. JSON strings hold no raw newline, so indenting after
/// each newline is exact.
pub struct Nested<'w> {
    inner: &'w mut dyn Write,
    by: &'static [u8],
}

impl<'w> Nested<'w> {
    /// Indents what is written to `inner` by `by` after each newline.
    pub fn new(inner: &'w mut dyn Write, by: &'static [u8]) -> Nested<'w> {
        Nested { inner, by }
    }
}

impl Write for Nested<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.inner.write_all(&rest[..=i])?;
            self.inner.write_all(self.by)?;
            rest = &rest[i + 1..];
        }
        self.inner.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_written_through_it_is_indented_after_each_newline() {
        let value = serde_json::json!({"a": [1, 2], "b": "x\ny"});
        let mut out = b"[\n  ".to_vec();
        serde_json::to_writer_pretty(Nested::new(&mut out, b"  "), &value).unwrap();
        out.extend_from_slice(b"\n]");
        let whole = serde_json::to_string_pretty(&vec![value]).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), whole);
    }
}

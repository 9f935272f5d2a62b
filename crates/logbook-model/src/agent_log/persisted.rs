//! Claude Code keeps a tool output too large for its log in
//! `<session>/tool-results/<name>.txt` and writes in its place a stub:
//! `<persisted-output>` with `Full output saved to: <path>` and a preview of
//! about 2 KB. The import reads the file back (the store does, see
//! `logbook_store::agent_log`), so the words past the preview are found;
//! the log's own line is kept as written.

/// Most bytes of a persisted output read back into a tool's result: past
/// it the text is cut (at a character), and the block says so.
pub const PERSISTED_AT_MOST: usize = 1 << 20;

/// The block key naming the file a result was read back from
/// (`tool-results/<name>`).
pub const PERSISTED_FROM_KEY: &str = "persistedFrom";

/// The block key set (true) when the file held more than
/// [`PERSISTED_AT_MOST`] bytes and the result is its beginning.
pub const PERSISTED_CUT_KEY: &str = "persistedCut";

/// The file name a `<persisted-output>` stub names, when `result` is one:
/// only its last path component (the stub may give an absolute path, with
/// `/` or `\`), so the file is looked for in the session's own
/// `tool-results/` folder and nowhere else. `None` for any other text, or a
/// name that is empty, `.` or `..`.
pub fn persisted_name(result: &str) -> Option<&str> {
    let body = result.trim_start().strip_prefix("<persisted-output>")?;
    let head = body.get(..body.len().min(4096)).unwrap_or(body);
    let (_, rest) = head
        .split_once("saved to: ")
        .or_else(|| head.split_once("saved to "))?;
    let path = rest.lines().next()?.trim();
    let name = path.rsplit(['/', '\\']).next()?.trim();
    (!name.is_empty() && name != "." && name != "..").then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_names_its_file_and_nothing_else_does() {
        let stub = "<persisted-output>\nOutput too large (36.8KB). Full output saved to: /home/u/.claude/projects/-w/abc/tool-results/toolu_01.txt\n\nPreview (first 2KB):\nline 1\n</persisted-output>";
        assert_eq!(persisted_name(stub), Some("toolu_01.txt"));
        let windows = "<persisted-output>\nOutput too large (6.6MB). Full output saved to: C:\\Users\\u\\.claude\\projects\\H--p\\s\\tool-results\\bej1e99ys.txt\n\nPreview (first 2KB):\n{";
        assert_eq!(persisted_name(windows), Some("bej1e99ys.txt"));
        assert_eq!(persisted_name("plain output"), None);
        assert_eq!(
            persisted_name("<persisted-output>\nFull output saved to: ..\n"),
            None
        );
        assert_eq!(persisted_name("<persisted-output>\nno path"), None);
    }
}

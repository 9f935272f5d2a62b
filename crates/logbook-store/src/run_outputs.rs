//! A run's registered output files as the index sees them: the one reader
//! of their text (for the full text and the team catalog), the stamp that
//! tells a sync they changed, and their names as the index's `files.outs`
//! column keeps them. Each name is checked by [`run_files::stored_rel`].

use std::fs;
use std::io::Read as _;
use std::os::fd::{AsFd as _, BorrowedFd};
use std::path::{Path, PathBuf};

use crate::run_files;
use crate::sys::{self, Errno, Follow, Kind, Meta, Want};

/// The largest output file whose text the full-text index reads.
pub const MAX_TEXT_BYTES: u64 = 1024 * 1024;

/// Where a registered output file is, if its name is a plain relative path
/// inside its run folder (names another tool wrote are not trusted).
fn output_path(folder: &Path, file: &str) -> Option<PathBuf> {
    run_files::stored_rel(file).map(|rel| folder.join(rel))
}

/// The text of a registered output file, if it is a small UTF-8 file inside
/// its run folder (what the full-text index reads).
pub fn output_text(folder: &Path, file: &str) -> Option<String> {
    output_text_upto(folder, file, MAX_TEXT_BYTES as usize, Longer::Skip).map(|(t, _)| t)
}

/// What [`output_text_upto`] does with a file longer than its limit.
pub enum Longer {
    /// No text at all (the full-text index skips such files).
    Skip,
    /// Its first bytes, cut at a character boundary (the team catalog).
    Cut,
}

/// The UTF-8 text of registered output `file` of the run in `folder`, at
/// most `max` bytes of it, and whether it was longer. With
/// [`outputs_stamp_and_text`], the one reader of an output's text, so every
/// one has the same rules: a plain relative name inside the run folder
/// (another tool's manifest may name `../../x`), a regular file (not a
/// symlink out of the folder, nor a FIFO that would block the open), no NUL.
pub fn output_text_upto(
    folder: &Path,
    file: &str,
    max: usize,
    longer: Longer,
) -> Option<(String, bool)> {
    let (file, m) = open_output(&output_path(folder, file)?).ok()?;
    text_of(file, &m, max, longer)
}

/// Opens an output file for reading, with what a stamp takes from it and
/// its type. Its type is asked of the open file, not of the path before
/// opening it: no other tool can swap a FIFO or a symlink in between.
/// Neither flag changes the reading of a regular file.
fn open_output(path: &Path) -> sys::Result<(fs::File, Meta)> {
    let fd = sys::open_read_at(sys::CWD, path, Follow::No)?;
    let m = sys::stat_open(&fd, Want::OUTPUT)?;
    Ok((fs::File::from(fd), m))
}

/// The text of an opened output file `m` describes (see [`output_text_upto`]).
fn text_of(file: fs::File, m: &Meta, max: usize, longer: Longer) -> Option<(String, bool)> {
    let regular = m.kind == Kind::File;
    // A file with another name may be anyone's (a hard link to a secret
    // outside the run): its words must not reach snippets, MCP answers or
    // the team catalog, as its bytes do not reach the viewer.
    let own = m.nlink <= 1;
    if !regular || !own || matches!(longer, Longer::Skip) && m.size > max as u64 {
        return None;
    }
    // As many bytes as its stamp says it has (and one more than `max`, to
    // tell a longer file): one `read`. Text it gained after the stamp was
    // taken moved its mtime, so the next sync reads it again. (From an
    // empty buffer, `read_to_end` probes with 32, 32, 64, 128… bytes: seven
    // reads for a 1 KB output.)
    let want = m.size.min(max as u64 + 1);
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(max));
    file.take(want).read_to_end(&mut bytes).ok()?;
    let cut = bytes.len() > max;
    if cut && matches!(longer, Longer::Skip) {
        return None;
    }
    bytes.truncate(max);
    if bytes.contains(&0) {
        return None;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // Cut inside a character: keep what is whole.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()?
        }
        Err(_) => return None,
    };
    Some((text, cut))
}

/// One number standing for the state of a run's registered output files
/// (each one's size, mtime and ctime in ns, inode, or its absence): stored
/// beside the manifest's stamp, so `index sync` sees text written into an
/// output file after it was registered, a deleted file, and one re-created
/// under the same name (a new inode, even with the old size and mtime).
///
/// Taken before the text is read: a change made while it is read shows as
/// a new stamp next time.
pub fn outputs_stamp<'a>(folder: &Path, files: impl IntoIterator<Item = &'a str>) -> i64 {
    let mut files = files.into_iter().peekable();
    if files.peek().is_none() {
        return outputs_stamp_at(sys::CWD, folder, files, &mut PathBuf::new());
    }
    // Each file is looked up from the open run folder: from the root, a
    // run's twenty outputs walked the folder's whole path twenty times
    // (on every registration, and for every hit a page verifies).
    match sys::open_dir_for_lookups(folder) {
        Ok(dir) => outputs_stamp_at(dir.as_fd(), Path::new(""), files, &mut PathBuf::new()),
        // Missing (its files are then missing too) or unreadable: the same
        // stamp from the whole paths.
        Err(_) => outputs_stamp_at(sys::CWD, folder, files, &mut PathBuf::new()),
    }
}

/// [`outputs_stamp`] with `folder` relative to the open directory `dir`
/// (the scan of every run resolves only `{run}/{file}` per file, not the
/// whole path), each file's path built in `buf` (no allocation per file).
/// The writer and the scan share this one function, so their stamps agree
/// by construction.
pub(crate) fn outputs_stamp_at<'a>(
    dir: BorrowedFd<'_>,
    folder: &Path,
    files: impl IntoIterator<Item = &'a str>,
    buf: &mut PathBuf,
) -> i64 {
    outputs_stamp_seeing(dir, folder, files, buf, |_, _| {})
}

/// [`outputs_stamp_at`] that also hands each file's `lstat` (its type and
/// link count included) to `each`, `Err(INVAL)` for a name that is not a
/// plain path inside the run folder: one `lstat` a file for a pass that
/// checks the files as well as stamping them (`doctor --full`).
pub(crate) fn outputs_stamp_seeing<'a>(
    dir: BorrowedFd<'_>,
    folder: &Path,
    files: impl IntoIterator<Item = &'a str>,
    buf: &mut PathBuf,
    mut each: impl FnMut(&'a str, sys::Result<&Meta>),
) -> i64 {
    let mut stamp = StampHash::default();
    for file in files {
        let found = match run_files::stored_rel(file) {
            Some(rel) => {
                buf.clear();
                buf.push(folder);
                buf.push(rel);
                sys::stat_at(dir, buf, Follow::No, Want::OUTPUT)
            }
            None => Err(Errno::INVAL),
        };
        each(file, found.as_ref().map_err(|e| *e));
        stamp.file(file, found.as_ref().ok());
    }
    stamp.finish()
}

/// A run's [`outputs_stamp`] and its output files' text (each small UTF-8
/// file's, followed by a newline), each file opened once: its part of the
/// stamp comes from the open file, before it is read. What a sync or a
/// rebuild that reads a run needs; a `stat` of each file by name and then
/// its `open` walked to it twice.
///
/// The stamp is the one [`outputs_stamp`] takes from the paths: the same
/// fields of the same inode. A file that does not open as an output (a
/// symlink, a socket, one unreadable or gone) is stamped from its path.
pub fn outputs_stamp_and_text<'a>(
    folder: &Path,
    files: impl IntoIterator<Item = &'a str>,
) -> (i64, String) {
    let mut stamp = StampHash::default();
    let mut text = String::new();
    let mut path = PathBuf::new();
    for file in files {
        let Some(rel) = run_files::stored_rel(file) else {
            stamp.file(file, None);
            continue;
        };
        path.clear();
        path.push(folder);
        path.push(rel);
        match open_output(&path) {
            Ok((opened, m)) => {
                stamp.file(file, Some(&m));
                let max = MAX_TEXT_BYTES as usize;
                if let Some((t, _)) = text_of(opened, &m, max, Longer::Skip) {
                    text.push_str(&t);
                    text.push('\n');
                }
            }
            Err(_) => {
                let m = sys::stat_at(sys::CWD, &path, Follow::No, Want::OUTPUT);
                stamp.file(file, m.ok().as_ref());
            }
        }
    }
    (stamp.finish(), text)
}

/// The hash behind [`outputs_stamp`]: FNV-1a over fixed-width fields,
/// stable across builds and platforms (the index is derived, so a
/// different hash would only cost one re-read).
struct StampHash {
    h: u64,
    any: bool,
}

impl Default for StampHash {
    fn default() -> StampHash {
        StampHash {
            h: 0xcbf2_9ce4_8422_2325,
            any: false,
        }
    }
}

impl StampHash {
    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.h ^= u64::from(*b);
            self.h = self.h.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// One output file: its name, then its `lstat` (`None`: absent, or a
    /// name that leads out of its folder). The bytes are the ones the
    /// `statx` fields gave before `crate::sys` existed, so an index
    /// written then does not see every run as changed.
    fn file(&mut self, name: &str, m: Option<&Meta>) {
        self.any = true;
        self.eat(name.as_bytes());
        self.eat(&[0]);
        match m {
            Some(m) => {
                self.eat(&[1]);
                self.eat(&m.size.to_le_bytes());
                self.eat(&m.mtime.sec.to_le_bytes());
                self.eat(&i64::from(m.mtime.nsec).to_le_bytes());
                self.eat(&m.ctime.sec.to_le_bytes());
                self.eat(&i64::from(m.ctime.nsec).to_le_bytes());
                self.eat(&m.ino.to_le_bytes());
                self.eat(&m.dev_major.to_le_bytes());
                self.eat(&m.dev_minor.to_le_bytes());
            }
            None => self.eat(&[2]),
        }
    }

    /// No outputs: 0, what a record without outputs (or a corrupt one)
    /// stores.
    fn finish(self) -> i64 {
        if self.any { self.h as i64 } else { 0 }
    }
}

/// A run's registered output file names as the `files.outs` column keeps
/// them: each as its length (4 bytes, little-endian) and its bytes, so any
/// name (even one with a NUL or a newline) round-trips exactly.
pub fn encode_outs<'a>(files: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
    let mut out = vec![];
    for f in files {
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    out
}

/// The names [`encode_outs`] wrote, or `None` when `blob` is not one of
/// its encodings (then the run counts as changed and is read again).
pub fn decode_outs(blob: &[u8]) -> Option<Outs<'_>> {
    let mut check = Outs(blob);
    while check.next().is_some() {}
    check.0.is_empty().then_some(Outs(blob))
}

/// The names in a `files.outs` value, read in place (see [`decode_outs`]).
pub struct Outs<'a>(&'a [u8]);

impl<'a> Iterator for Outs<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (len, tail) = self.0.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        let name = std::str::from_utf8(tail.get(..len)?).ok()?;
        self.0 = tail.get(len..)?;
        Some(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outputs_text_is_read_only_from_a_regular_file_inside_its_run_folder() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        fs::create_dir(&run).unwrap();
        fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        fs::write(run.join("a.md"), "héllo wörld").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), run.join("link.md")).unwrap();
        let fifo = run.join("pipe.md");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let read =
            |file: &str, max: usize, longer: Longer| output_text_upto(&run, file, max, longer);
        assert_eq!(
            read("a.md", 100, Longer::Cut),
            Some(("héllo wörld".to_string(), false))
        );
        // Names another tool wrote that lead out, a symlink out, a FIFO
        // (whose open would block): no text, never a hang.
        for name in [
            "../secret.txt",
            "/etc/hostname",
            "link.md",
            "pipe.md",
            "missing.md",
        ] {
            assert_eq!(read(name, 100, Longer::Cut), None, "{name}");
        }
        // Longer than the limit: cut at a whole character, or skipped.
        assert_eq!(read("a.md", 2, Longer::Cut), Some(("h".to_string(), true)));
        assert_eq!(read("a.md", 2, Longer::Skip), None);
        assert_eq!(output_text(&run, "a.md").as_deref(), Some("héllo wörld"));
    }

    #[test]
    fn the_stamp_taken_while_reading_is_the_stamp_taken_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        fs::create_dir_all(run.join("sub")).unwrap();
        fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        fs::write(run.join("a.md"), "alpha").unwrap();
        fs::write(run.join("sub/b.md"), "beta").unwrap();
        fs::write(run.join("bin.dat"), b"x\0y").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), run.join("link.md")).unwrap();
        assert!(
            std::process::Command::new("mkfifo")
                .arg(run.join("pipe.md"))
                .status()
                .unwrap()
                .success()
        );
        let files = [
            "a.md",
            "sub/b.md",
            "sub",
            "bin.dat",
            "link.md",
            "pipe.md",
            "missing.md",
            "../secret.txt",
            "/etc/hostname",
        ];
        let (stamp, text) = outputs_stamp_and_text(&run, files);
        assert_eq!(stamp, outputs_stamp(&run, files));
        assert_ne!(stamp, outputs_stamp(&run, files[..8].iter().copied()));
        // Only the regular UTF-8 files inside the folder, in order.
        assert_eq!(text, "alpha\nbeta\n");
        // Text written into a file after it was read moves the stamp.
        fs::write(run.join("a.md"), "alpha, longer").unwrap();
        assert_ne!(outputs_stamp_and_text(&run, files).0, stamp);
        assert_eq!(outputs_stamp_and_text(&run, []), (0, String::new()));
    }
}

//! Paths inside a run folder: the one module that checks them, for every
//! face (CLI, MCP, web) and for output registration. A path that came from
//! a person, an agent, a manifest or the network touches the disk only
//! through here, so it is strict (the seed's "Security & Access Control"):
//!
//! - a path given is relative, `/`-separated, and each part is a plain
//!   name: no `..`, NUL or control character, not absolute. A viewer's
//!   request ([`parts`]) must be written plainly (no `.`, empty part,
//!   backslash, and not overlong); an agent registering an output
//!   ([`normalize`]) may write `./a//b.md`, which is kept as `a/b.md`; a
//!   name another tool wrote into a manifest ([`stored_rel`]) is only used
//!   when it is plain;
//! - the run folder is resolved (symlinks followed) and must be exactly
//!   `{agent_outputs_folder}/{id}`: a run folder that is itself a symlink
//!   elsewhere is refused;
//! - the file is resolved too and must lie inside that run folder, compared
//!   by whole path components (`agent-outputs-fake` is not inside
//!   `agent-outputs`), so a symlink inside a run pointing outside is
//!   refused ([`lead`], [`confine`]);
//! - the file must be the run's own: a symlink leading out of the run
//!   folder, or a regular file with more than one name (a hard link, whose
//!   other name may be anywhere, `/etc/shadow` included), is refused
//!   ([`Unconfined`], the one rule every face and `doctor` use);
//! - the run's `manifest.json` is not a file of the run's tree: it is
//!   shown as the run itself, never as a file.
//!
//! The trap: checking the path as written and then opening it lets a
//! symlink swapped in between escape. The check is made on the resolved
//! path, and the resolved path is what gets opened.

use std::fs::{File, Metadata};
use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::Project;
use logbook_model::error::{Error, Result};
use logbook_model::ids::RunId;
use logbook_model::run::MANIFEST_FILE;

/// The longest requested path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest part of a requested path accepted, in bytes (`NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;
/// How many entries a tree lists at most; a run with more says so.
pub const MAX_TREE_ENTRIES: usize = 5000;

/// One file or folder in a run's tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeEntry {
    /// Path relative to the run folder, `/`-separated.
    pub path: String,
    /// `file` or `dir`.
    pub kind: &'static str,
    /// Size in bytes (0 for a folder).
    pub size: u64,
    /// How many folders deep it sits (0 at the top).
    pub depth: usize,
}

/// A run's file tree as [`tree`] lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Tree {
    /// The run id.
    pub session_id: String,
    /// Folders first, then files, each by name; `manifest.json` hidden.
    pub entries: Vec<TreeEntry>,
    /// True when the run holds more than [`MAX_TREE_ENTRIES`] entries.
    pub truncated: bool,
}

/// A file of a run opened for reading by [`open`].
#[derive(Debug)]
pub struct RunFile {
    /// The open file (the resolved path, checked before opening).
    pub file: File,
    /// Its size in bytes when opened.
    pub size: u64,
    /// The path as requested, normalised (relative to the run folder).
    pub path: String,
}

/// Why a file in a run folder is not the run's own, though it is there:
/// it is neither served, registered nor answered as a good output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconfined {
    /// A symlink (itself or a folder on its way) leading out of the run
    /// folder.
    SymlinkOutsideRun,
    /// A regular file with more than one name: its other name may be
    /// anywhere on the file system, and it changes with it.
    HardLink,
}

impl Unconfined {
    /// The stable name faces print (`latest-output --json`'s `unsafe`).
    pub fn as_str(self) -> &'static str {
        match self {
            Unconfined::SymlinkOutsideRun => "symlink-outside-run",
            Unconfined::HardLink => "hard-link",
        }
    }

    /// What it is and what to do, for people.
    pub fn explain(self) -> &'static str {
        match self {
            Unconfined::SymlinkOutsideRun => {
                "leads outside the run folder (through a symlink); copy the file into the run folder instead"
            }
            Unconfined::HardLink => {
                "is a hard link (the file has another name, maybe outside the run folder); copy the file (`cp`, not `ln`) into the run folder instead"
            }
        }
    }

    /// The rule for a regular file already resolved inside the run folder,
    /// asked of its metadata (of the open file, where it is opened, so a
    /// link made after the check is seen too).
    pub(crate) fn of_file(meta: &Metadata) -> Option<Unconfined> {
        (meta.is_file() && meta.nlink() > 1).then_some(Unconfined::HardLink)
    }
}

/// What a path inside a run folder leads to, by [`lead`].
#[derive(Debug)]
pub enum Lead {
    /// A regular file of the run's own.
    File {
        /// Its real path relative to the run's real folder, `/`-separated
        /// (symlinks resolved, so every alias of one file gives one name).
        rel: String,
        /// The path to open.
        path: PathBuf,
    },
    /// Nothing there.
    Missing,
    /// There, but not the run's own.
    Unconfined(Unconfined),
    /// Not a regular file (a folder, FIFO, device), in words.
    NotRegular(&'static str),
    /// Its real name is not UTF-8 text.
    NotUtf8,
}

/// Resolves `rel` (a normalised relative path) inside run folder `folder`
/// and says whether it is a file of the run's own. Every face and check
/// that reads or registers an output comes through here.
pub fn lead(folder: &Path, rel: &str) -> std::io::Result<Lead> {
    if let Some(meta) = plain_file(folder, rel) {
        return Ok(match Unconfined::of_file(&meta) {
            Some(u) => Lead::Unconfined(u),
            None => Lead::File {
                rel: rel.to_string(),
                path: rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c)),
            },
        });
    }
    let real_folder = folder.canonicalize()?;
    let target = rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c));
    let real = match target.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lead::Missing),
        Err(e) => return Err(e),
    };
    let inside = match real.strip_prefix(&real_folder) {
        Ok(inside) if !inside.as_os_str().is_empty() => inside,
        _ => return Ok(Lead::Unconfined(Unconfined::SymlinkOutsideRun)),
    };
    let meta = std::fs::metadata(&real)?;
    if !meta.is_file() {
        return Ok(Lead::NotRegular(crate::fs::describe_file_type(
            meta.file_type(),
        )));
    }
    if let Some(u) = Unconfined::of_file(&meta) {
        return Ok(Lead::Unconfined(u));
    }
    let mut parts = vec![];
    for c in inside.components() {
        let Some(part) = c.as_os_str().to_str() else {
            return Ok(Lead::NotUtf8);
        };
        parts.push(part);
    }
    Ok(Lead::File {
        rel: parts.join("/"),
        path: real,
    })
}

/// Why output `rel` of the run in `folder` is not the run's own, if it is
/// not; `None` for a good file and for one that is gone or unreadable
/// (reported as missing where it matters).
pub fn unconfined(folder: &Path, rel: &str) -> Option<Unconfined> {
    match lead(folder, rel) {
        Ok(Lead::Unconfined(u)) => Some(u),
        _ => None,
    }
}

/// The metadata of the file `rel` reaches from `folder` through folders
/// that are not symlinks: then it already is its own real path, and
/// resolving both paths (a `readlink` for every component of each, a dozen
/// system calls on every registration) would only say so again. Anything
/// else, a symlink on the way included, takes the resolving path.
fn plain_file(folder: &Path, rel: &str) -> Option<Metadata> {
    let mut path = folder.to_path_buf();
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        path.push(part);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if parts.peek().is_some() {
            if !meta.is_dir() {
                return None;
            }
        } else {
            return meta.is_file().then_some(meta);
        }
    }
    None
}

fn denied(what: &str, reason: &str) -> Error {
    Error::invalid("file path", what, reason.to_string())
}

fn missing(what: &str) -> Error {
    Error::not_found(
        "file",
        what,
        "the run's tree (`GET /api/runs/{id}/tree`) lists its files",
    )
}

/// Splits a requested path into its plain parts, refusing anything that is
/// not a plain relative name.
pub fn parts(requested: &str) -> Result<Vec<&str>> {
    if requested.is_empty() {
        return Err(denied(requested, "empty path"));
    }
    if requested.len() > MAX_PATH_BYTES {
        return Err(denied("(overlong)", "path too long"));
    }
    if requested.starts_with('/') {
        return Err(denied(requested, "absolute path"));
    }
    if requested.contains('\\') {
        return Err(denied(requested, "backslash in path"));
    }
    if requested.chars().any(char::is_control) {
        return Err(denied(requested, "control character in path"));
    }
    let parts: Vec<&str> = requested.split('/').collect();
    for part in &parts {
        if part.is_empty() || *part == "." || *part == ".." {
            return Err(denied(requested, "not a plain relative path"));
        }
        if part.len() > MAX_NAME_BYTES {
            return Err(denied("(overlong)", "name too long"));
        }
        // A drive letter (`C:`) means an absolute path elsewhere.
        if part.len() == 2 && part.ends_with(':') {
            return Err(denied(requested, "drive letter in path"));
        }
    }
    Ok(parts)
}

/// Checks an output path an agent gave and returns it normalised
/// (`/`-separated, no `.` parts): relative, no `..`, no NUL, not the
/// manifest itself.
pub fn normalize(file: &str) -> Result<String> {
    let refuse = |reason: &str| Err(Error::invalid("output file", file, reason.to_string()));
    if file.contains('\0') {
        return refuse("contains a NUL byte");
    }
    if file.chars().any(char::is_control) {
        return refuse(
            "contains a control character (a newline, tab…); rename the file so its name is one plain line",
        );
    }
    if file.trim().is_empty() {
        return refuse("is empty; give a path relative to the run folder");
    }
    if file.starts_with('/') || file.starts_with('\\') || Path::new(file).is_absolute() {
        return refuse("is absolute; give a path relative to the run folder, e.g. report.md");
    }
    let mut parts = vec![];
    for c in Path::new(file).components() {
        match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy();
                if s.contains('\\') {
                    return refuse("contains a backslash; use / between folders");
                }
                parts.push(s.into_owned());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return refuse("contains `..`; outputs must stay inside the run folder");
            }
            Component::RootDir | Component::Prefix(_) => {
                return refuse("is absolute; give a path relative to the run folder");
            }
        }
    }
    if parts.is_empty() {
        return refuse("names the run folder itself; name a file inside it");
    }
    if parts.len() == 1 && parts[0] == MANIFEST_FILE {
        return refuse("is the manifest itself; register the files the agent wrote");
    }
    Ok(parts.join("/"))
}

/// Whether `file` names the run's manifest itself (`manifest.json`,
/// `./manifest.json`): the run, never one of its files.
pub fn names_manifest(file: &str) -> bool {
    Path::new(file)
        .components()
        .filter(|c| *c != Component::CurDir)
        .eq([Component::Normal(MANIFEST_FILE.as_ref())])
}

/// A registered output's name, as a manifest holds it, as a path relative
/// to its run folder, if it is a plain one (no root, no `..`, no NUL):
/// names another tool wrote are not trusted.
pub(crate) fn stored_rel(file: &str) -> Option<&Path> {
    let rel = Path::new(file);
    if file.is_empty()
        || file.contains('\0')
        || rel.is_absolute()
        || rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    Some(rel)
}

/// Checks that `path` is a plain relative path a run file can have (no
/// `..`, `.`, empty part, backslash, NUL, control character, drive letter,
/// not absolute, not overlong), without touching the disk.
pub fn check_path(path: &str) -> Result<()> {
    parts(path).map(|_| ())
}

/// Where output `given` (`rel` once [`normalize`]d) of the run in `folder`
/// really is: its path relative to the run's real folder with every
/// symlink resolved, so the aliases of one file (`sub/a.md`,
/// `self/sub/a.md`, `up/<id>/sub/a.md`) make one record, and the path to
/// open. Refuses a path that does not exist, is not the run's own
/// ([`Unconfined`]), or is not a regular file (a folder, FIFO, device).
pub fn confine(folder: &Path, rel: &str, given: &str) -> Result<(String, PathBuf)> {
    let target = || rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c));
    let (real, path) = match lead(folder, rel).map_err(|e| Error::io(target(), e))? {
        Lead::File { rel, path } => (rel, path),
        // Not found (exit 4), as a missing run is: the caller names a file
        // that is not there yet.
        Lead::Missing => {
            return Err(Error::not_found(
                "output file",
                target().display().to_string(),
                "write the file into the run folder first, then register it",
            ));
        }
        Lead::Unconfined(u) => return Err(Error::invalid("output file", given, u.explain())),
        Lead::NotRegular(found) => {
            return Err(Error::NotARegularFile {
                what: "output file",
                path: target(),
                found,
            });
        }
        Lead::NotUtf8 => {
            return Err(Error::invalid(
                "output file",
                given,
                "its real name is not UTF-8 text; rename the file",
            ));
        }
    };
    // The real name passes the same rules as the one given (a symlink may
    // lead to `manifest.json`, or to a name with a newline).
    let real = normalize(&real).map_err(|e| match e {
        Error::Invalid { value, reason, .. } if value != given => Error::invalid(
            "output file",
            given,
            format!("leads to {value:?}, which {reason}"),
        ),
        e => e,
    })?;
    Ok((real, path))
}

/// The bytes of a run file [`confine`] found at `path` (`given` as the
/// caller named it), at most `limit` of them; `Ok(None)` when it is gone.
/// The run's-own rule is asked again of the open file, so a link made
/// after the check is seen.
pub fn read_own(path: &Path, given: &str, limit: u64) -> Result<Option<Vec<u8>>> {
    let Some(mut reader) = crate::fs::open_regular(path, "run file", limit)? else {
        return Ok(None);
    };
    if let Some(u) = reader
        .get_ref()
        .metadata()
        .ok()
        .and_then(|m| Unconfined::of_file(&m))
    {
        return Err(Error::invalid("run file", given, u.explain()));
    }
    let mut bytes = vec![];
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    Ok(Some(bytes))
}

/// Writes `bytes` to file `path` in a run folder as an agent does (its
/// folders created, a plain write): `logbook demo` plays the agent.
pub fn write_as_agent(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    std::fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Whether a run file's `path` names a regular file now (symlinks
/// followed): `latest-output` says when the newest output is gone.
pub fn is_present(path: &Path) -> bool {
    path.is_file()
}

/// The run folder resolved, which must be exactly the run's entry in the
/// resolved `agent_outputs_folder`, or for an archived run in the resolved
/// `archive_folder` (not a symlink to elsewhere).
fn run_root(p: &Project, id: &RunId) -> Result<PathBuf> {
    let folder = crate::run::locate(p, id)?;
    let (base, what) = if crate::archive::is_archived(p, &folder) {
        (
            &p.config.archive_folder,
            "run folder outside archive_folder",
        )
    } else {
        (
            &p.config.agent_outputs_folder,
            "run folder outside agent_outputs_folder",
        )
    };
    let outputs = std::fs::canonicalize(base).map_err(|_| missing(id.as_str()))?;
    let resolved = std::fs::canonicalize(&folder).map_err(|_| missing(id.as_str()))?;
    let name = folder.file_name().ok_or_else(|| missing(id.as_str()))?;
    if resolved != outputs.join(name) || !resolved.is_dir() {
        return Err(denied(id.as_str(), what));
    }
    Ok(resolved)
}

/// Opens file `requested` (relative to the run folder) of run `id` for
/// reading, after the checks the module names. An invalid path or one
/// resolving outside the run (or to a file that is not the run's own) is
/// [`logbook_model::ErrorKind::Invalid`]; a path that does not exist, is not a
/// regular file or is the manifest is [`logbook_model::ErrorKind::NotFound`].
pub fn open(p: &Project, id: &RunId, requested: &str) -> Result<RunFile> {
    let parts = parts(requested)?;
    let root = run_root(p, id)?;
    let path = match lead(&root, &parts.join("/")).map_err(|_| missing(requested))? {
        Lead::File { rel, .. } if rel == MANIFEST_FILE => return Err(missing(requested)),
        Lead::File { path, .. } => path,
        Lead::Unconfined(u) => return Err(denied(requested, u.explain())),
        Lead::Missing | Lead::NotRegular(_) | Lead::NotUtf8 => return Err(missing(requested)),
    };
    // Opened without blocking: a FIFO swapped in after the check would
    // otherwise wait for a writer.
    let file = crate::fs::open_regular(&path, "run file", u64::MAX)
        .ok()
        .flatten()
        .ok_or_else(|| missing(requested))?
        .into_inner();
    let meta = file.metadata().map_err(|_| missing(requested))?;
    if let Some(u) = Unconfined::of_file(&meta) {
        return Err(denied(requested, u.explain()));
    }
    Ok(RunFile {
        file,
        size: meta.len(),
        path: parts.join("/"),
    })
}

/// Checks that run `id`'s folder is its own entry in `agent_outputs_folder`
/// or `archive_folder` (not a symlink to elsewhere): `ops::run::show_confined` asks it, so
/// every untrusted face (the run page, `/api/runs/{id}`, MCP `run_show`)
/// answers alike.
pub fn check_root(p: &Project, id: &RunId) -> Result<()> {
    run_root(p, id).map(|_| ())
}

/// The files and folders of run `id`, folders first and by name at each
/// level, `manifest.json` at the top hidden (the seed's `isInternal`).
/// Symlinks are listed only when they resolve inside the run folder; temp
/// files of atomic writes are left out.
pub fn tree(p: &Project, id: &RunId) -> Result<Tree> {
    let root = run_root(p, id)?;
    let mut out = Tree {
        session_id: id.to_string(),
        entries: vec![],
        truncated: false,
    };
    walk(&root, &root, "", 0, &mut out);
    Ok(out)
}

fn walk(root: &Path, dir: &Path, prefix: &str, depth: usize, out: &mut Tree) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut items: Vec<(bool, String, u64, PathBuf)> = vec![];
    for entry in read.flatten() {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if (depth == 0 && name == MANIFEST_FILE) || crate::is_temp_file(&name) {
            continue;
        }
        let path = entry.path();
        let Ok(resolved) = std::fs::canonicalize(&path) else {
            continue;
        };
        if !resolved.starts_with(root) || resolved == root {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&resolved) else {
            continue;
        };
        // FIFOs, sockets and devices are not outputs; a hard link is not
        // the run's own.
        if (!meta.is_file() && !meta.is_dir()) || Unconfined::of_file(&meta).is_some() {
            continue;
        }
        let is_dir = meta.is_dir();
        // A folder reached through a symlink is shown but not entered, so a
        // link loop cannot make the walk endless.
        let enter = is_dir && !entry.file_type().is_ok_and(|t| t.is_symlink());
        items.push((
            is_dir,
            name,
            if is_dir { 0 } else { meta.len() },
            if enter { resolved } else { PathBuf::new() },
        ));
    }
    items.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (is_dir, name, size, sub) in items {
        if out.entries.len() >= MAX_TREE_ENTRIES {
            out.truncated = true;
            return;
        }
        let path = format!("{prefix}{name}");
        out.entries.push(TreeEntry {
            path: path.clone(),
            kind: if is_dir { "dir" } else { "file" },
            size,
            depth,
        });
        if is_dir && !sub.as_os_str().is_empty() {
            walk(root, &sub, &format!("{path}/"), depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{normalize, parts};

    #[test]
    fn only_plain_relative_paths_pass() {
        assert_eq!(parts("a/b.md").unwrap(), vec!["a", "b.md"]);
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a/./b",
            "a//b",
            "a\\b",
            "a\0b",
            "C:/x",
            "a/",
            "..",
            ".",
        ] {
            assert!(parts(bad).is_err(), "{bad:?} passed");
        }
        assert!(parts(&"a/".repeat(3000)).is_err());
        assert!(parts(&"x".repeat(300)).is_err());
    }

    #[test]
    fn output_paths() {
        assert_eq!(normalize("./a//b.md").unwrap(), "a/b.md");
        for bad in [
            "../x",
            "/etc/passwd",
            "a/../../x",
            "a\0b",
            "",
            ".",
            "manifest.json",
            "a/..",
            "a\nb.md",
            "tab\there.md",
            "bell\u{7}.md",
        ] {
            assert!(normalize(bad).is_err(), "{bad:?}");
        }
    }
}

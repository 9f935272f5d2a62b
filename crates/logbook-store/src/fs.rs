//! The one way Logbook changes a file: the caller holds the lock (see
//! [`super::lock`]), then a temp file is written beside the target, fsynced,
//! renamed over it, and the folder fsynced. Readers take no lock and see
//! either the old or the new file, never a torn one.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use logbook_model::error::{Error, Result};

/// Writes `bytes` to `path` so that a reader or a crash sees the old file or
/// the new one, never a mix: temp file in the same folder, fsync, rename,
/// fsync of the folder. The caller holds the lock that serialises writers.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes).map_err(|e| Error::io(path, e)))
}

/// [`write_atomic`] for content too large to hold in memory: `write` streams
/// it into the (buffered) temp file, and the rename happens only if it
/// succeeds. An imported agent log of hundreds of MiB goes through here.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    write_atomic_as(path, None, |w| write(w))
}

/// [`write_atomic_with`] handing `write` the buffered temp file itself, so
/// that `std::io::copy` from another file into it is a kernel copy
/// (`copy_file_range`): an incremental import copies the unchanged part of
/// a large stored transcript that way, without reading it into memory.
pub fn write_atomic_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> Result<()>,
) -> Result<()> {
    write_atomic_as(path, None, write)
}

/// The mode of a file that may hold secrets (a transcript, a settings
/// backup, an export cursor, a queued hook event): its owner's only.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// The mode of a folder made to hold such a file, so that even its names
/// are not listed to others.
pub const PRIVATE_FOLDER_MODE: u32 = 0o700;

/// [`write_atomic`] of a file that may hold secrets: mode
/// [`PRIVATE_FILE_MODE`] from creation, and a missing folder made with
/// [`PRIVATE_FOLDER_MODE`].
pub(crate) fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    write_atomic_with_permissions(path, fs::Permissions::from_mode(PRIVATE_FILE_MODE), bytes)
}

/// [`write_atomic_file`] of a file that may hold secrets (see
/// [`write_atomic_private`]).
pub(crate) fn write_atomic_file_private(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> Result<()>,
) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    write_atomic_as(
        path,
        Some(fs::Permissions::from_mode(PRIVATE_FILE_MODE)),
        write,
    )
}

/// [`write_atomic`] of a file whose permissions are `permissions` from the
/// moment it appears: another tool's file keeps its mode (a settings file
/// of mode 0600 that holds tokens must not become readable by all, even
/// for the moment between the rename and a `chmod`). The temp file is
/// created 0600 and given `permissions` only once written, so what it
/// holds is never readable by others while it is being written; a missing
/// folder is made 0700 when `permissions` give others nothing.
pub(crate) fn write_atomic_with_permissions(
    path: &Path,
    permissions: fs::Permissions,
    bytes: &[u8],
) -> Result<()> {
    write_atomic_as(path, Some(permissions), |w| {
        w.write_all(bytes).map_err(|e| Error::io(path, e))
    })
}

fn write_atomic_as(
    path: &Path,
    permissions: Option<fs::Permissions>,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> Result<()>,
) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
    let private = permissions.as_ref().is_some_and(|p| p.mode() & 0o077 == 0);
    let result = (|| {
        let create = || {
            let mut o = OpenOptions::new();
            o.write(true).create_new(true);
            if permissions.is_some() {
                // Restricted from creation: a `chmod` after the write would
                // leave a moment in which others can open it.
                o.mode(PRIVATE_FILE_MODE);
            }
            o.open(&tmp)
        };
        // The folder is made only when missing: most writes replace a file
        // in a folder that exists, and asking first costs two system calls.
        let f = match create() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut b = fs::DirBuilder::new();
                b.recursive(true);
                if private {
                    b.mode(PRIVATE_FOLDER_MODE);
                }
                b.create(dir).map_err(|e| Error::io(dir, e))?;
                create()
            }
            other => other,
        }
        .map_err(|e| Error::io(&tmp, e))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        #[cfg(feature = "testing")]
        if let Some(e) = crate::testing::write_fault() {
            return Err(Error::io(&tmp, e));
        }
        write(&mut w)?;
        let f = w
            .into_inner()
            .map_err(|e| Error::io(&tmp, e.into_error()))?;
        if let Some(permissions) = permissions {
            f.set_permissions(permissions)
                .map_err(|e| Error::io(&tmp, e))?;
        }
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `p` itself when absolute, else `p` under `base`, without `.`
/// components: the index keeps files by path, so `/x/./docs` and `/x/docs`
/// (what `--root .` and an absolute root give) must be one path.
pub fn absolute(base: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    joined.components().collect()
}

/// Who named a path, which decides how far it may reach: a user at the
/// terminal may name any file, while a caller over MCP or HTTP (an agent
/// that a prompt injection may steer) may name only files inside the
/// project root, lest it read a secrets file back through Logbook.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PathTrust {
    /// The person running Logbook: any path, as the shell would take it.
    #[default]
    User,
    /// A caller over MCP or HTTP: only paths inside the project root, after
    /// resolving `..` and symlinks.
    ProjectOnly,
}

/// `path` (relative to `root`) as the file to read, refused with
/// [`Error::Invalid`] naming `field` when `trust` keeps it inside `root` and
/// it leads out, whether by `..`, by being absolute or through a symlink.
/// A confined path that does not exist is returned with its existing part
/// resolved, so reading it says "not found" without telling what exists
/// outside.
pub(crate) fn resolve_named(
    root: &Path,
    path: &Path,
    trust: PathTrust,
    field: &'static str,
) -> Result<PathBuf> {
    if trust == PathTrust::User {
        return Ok(absolute(root, path));
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let outside = || {
        Error::invalid(
            field,
            path.display().to_string(),
            "over MCP or HTTP a path must stay inside the project root (no absolute path elsewhere, no `..` or symlink leading out); name a file under the project, or use the CLI",
        )
    };
    let mut lexical = PathBuf::new();
    for c in absolute(&root, path).components() {
        match c {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    // The longest part that exists, resolved; what is missing below it is
    // named as given, for the read to say "not found". Only the resolved
    // path is compared with the root, never the spelling: on a
    // case-insensitive file system (macOS's by default) `/Users/me/Proj`
    // and `/users/me/proj` are one folder, as a symlink's two names are
    // everywhere, and `realpath` gives both one spelling.
    for base in lexical.ancestors() {
        if let Ok(resolved) = base.canonicalize() {
            // Path::starts_with compares whole components.
            if !resolved.starts_with(&root) {
                return Err(outside());
            }
            let rest = lexical.strip_prefix(base).unwrap_or(Path::new(""));
            return Ok(if rest.as_os_str().is_empty() {
                resolved
            } else {
                resolved.join(rest)
            });
        }
    }
    Err(outside())
}

/// The folder a user named as a project root, as one path however it was
/// named (relative, through a symlink, with `..`): the physical path, as
/// the working directory a root is found from without `--root` is. Kept
/// lexical when it does not exist yet.
pub fn root_path(cwd: &Path, root: &Path) -> PathBuf {
    let root = absolute(cwd, root);
    root.canonicalize().unwrap_or(root)
}

/// Makes a rename or a new entry in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Moves `from` to `to` durably (a rename, so atomic on one file system),
/// creating `to`'s folder. Used when archiving (work sessions, run
/// folders). Across file systems, where no rename reaches, a folder is
/// copied (modes and symlinks kept), fsynced, verified byte for byte, and
/// only then removed: a crash leaves a whole copy or the original, and
/// the original only goes once the copy is known good.
pub fn move_durably(from: &Path, to: &Path) -> Result<()> {
    move_durably_keyed(from, to, None)
}

/// [`move_durably`] of a folder whose `key` file (a run's manifest) says
/// it is whole: across file systems the source's `key` is removed first,
/// before the rest of it, so that a move killed while removing the source
/// leaves a remainder without `key` beside a whole copy with it, which
/// `doctor` can tell from a run (see [`move_temp_name`] for the copy a
/// move killed earlier leaves).
pub fn move_durably_keyed(from: &Path, to: &Path, key: Option<&str>) -> Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    #[cfg(feature = "testing")]
    if crate::testing::move_by_copy() {
        return move_across(from, to, key);
    }
    match fs::rename(from, to) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(crate::sys::Errno::XDEV.raw_os_error()) => {
            return move_across(from, to, key);
        }
        Err(e) => return Err(Error::io(from, e)),
    }
    sync_dir(dir)?;
    if let Some(src_dir) = from.parent() {
        sync_dir(src_dir)?;
    }
    Ok(())
}

/// The name of the temp copy a move between file systems makes of `name`
/// beside its destination: `.{name}.{pid}.tmp`. A kill before the copy is
/// renamed into place leaves it, the original whole; [`moved_name`] reads
/// the name back.
pub(crate) fn move_temp_name(name: &str) -> String {
    format!(".{name}.{}.tmp", std::process::id())
}

/// The name a [`move_temp_name`] was made from, if `temp` is one.
pub(crate) fn moved_name(temp: &str) -> Option<&str> {
    let inner = temp.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (name, pid) = inner.rsplit_once('.')?;
    (!name.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

/// [`move_durably`] between file systems: copy to a temp name beside `to`,
/// verify, rename into place, then remove `from` (its `key` file first).
fn move_across(from: &Path, to: &Path, key: Option<&str>) -> Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(move_temp_name(&name));
    let copied = copy_tree(from, &temp).and_then(|()| same_tree(from, &temp));
    if let Err(e) = copied {
        let _ = remove_tree(&temp);
        return Err(e);
    }
    #[cfg(feature = "testing")]
    crate::testing::fault("move-copied");
    fs::rename(&temp, to).map_err(|e| Error::io(to, e))?;
    sync_dir(dir)?;
    #[cfg(feature = "testing")]
    crate::testing::fault("move-renamed");
    remove_moved(from, key)?;
    if let Some(src_dir) = from.parent() {
        sync_dir(src_dir)?;
    }
    Ok(())
}

/// Removes the source of a move whose copy is in place: a file at once; a
/// folder's `key` file first (made durable), then the rest.
fn remove_moved(from: &Path, key: Option<&str>) -> Result<()> {
    let is_dir = fs::symlink_metadata(from)
        .map_err(|e| Error::io(from, e))?
        .is_dir();
    if !is_dir {
        return fs::remove_file(from).map_err(|e| Error::io(from, e));
    }
    if let Some(key) = key {
        let first = from.join(key);
        match fs::remove_file(&first) {
            Ok(()) => sync_dir(from)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&first, e)),
        }
        #[cfg(feature = "testing")]
        crate::testing::fault("move-unkeyed");
    }
    for entry in fs::read_dir(from).map_err(|e| Error::io(from, e))? {
        let entry = entry.map_err(|e| Error::io(from, e))?;
        remove_tree(&entry.path())?;
    }
    #[cfg(feature = "testing")]
    crate::testing::fault("move-emptied");
    fs::remove_dir(from).map_err(|e| Error::io(from, e))
}

/// Removes the file, symlink or folder (and all in it) at `path`.
pub(crate) fn remove_tree(path: &Path) -> Result<()> {
    let m = fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    if m.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
    .map_err(|e| Error::io(path, e))
}

/// Copies the file, folder or symlink `from` to `to` (which must not
/// exist), modes kept, every file and folder fsynced.
pub fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let m = fs::symlink_metadata(from).map_err(|e| Error::io(from, e))?;
    let t = m.file_type();
    if t.is_symlink() {
        let target = fs::read_link(from).map_err(|e| Error::io(from, e))?;
        std::os::unix::fs::symlink(&target, to).map_err(|e| Error::io(to, e))?;
    } else if t.is_dir() {
        fs::create_dir(to).map_err(|e| Error::io(to, e))?;
        for entry in fs::read_dir(from).map_err(|e| Error::io(from, e))? {
            let entry = entry.map_err(|e| Error::io(from, e))?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        fs::set_permissions(to, m.permissions()).map_err(|e| Error::io(to, e))?;
        sync_dir(to)?;
    } else if t.is_file() {
        let mut src = File::open(from).map_err(|e| Error::io(from, e))?;
        let mut dst = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(to)
            .map_err(|e| Error::io(to, e))?;
        std::io::copy(&mut src, &mut dst).map_err(|e| Error::io(to, e))?;
        dst.set_permissions(m.permissions())
            .map_err(|e| Error::io(to, e))?;
        dst.sync_all().map_err(|e| Error::io(to, e))?;
        #[cfg(feature = "testing")]
        crate::testing::fault("move-copying");
    }
    // FIFOs, sockets and devices are not a run's files: left behind, and
    // `same_tree` then refuses the move.
    Ok(())
}

/// Checks that `copy` holds what `original` holds: the same names, kinds,
/// modes, symlink targets and bytes.
pub(crate) fn same_tree(original: &Path, copy: &Path) -> Result<()> {
    let differs = |what: &str| {
        Err(Error::io(
            copy,
            std::io::Error::other(format!(
                "the copy of {} differs from it ({what}); the original was kept",
                original.display()
            )),
        ))
    };
    let a = fs::symlink_metadata(original).map_err(|e| Error::io(original, e))?;
    let Ok(b) = fs::symlink_metadata(copy) else {
        return differs("missing");
    };
    if a.file_type() != b.file_type() || a.permissions() != b.permissions() {
        return differs("kind or mode");
    }
    if a.is_symlink() {
        if fs::read_link(original).ok() != fs::read_link(copy).ok() {
            return differs("symlink target");
        }
    } else if a.is_dir() {
        let names = |d: &Path| -> Result<Vec<std::ffi::OsString>> {
            let mut v = fs::read_dir(d)
                .map_err(|e| Error::io(d, e))?
                .map(|e| e.map(|e| e.file_name()).map_err(|e| Error::io(d, e)))
                .collect::<Result<Vec<_>>>()?;
            v.sort();
            Ok(v)
        };
        let (na, nb) = (names(original)?, names(copy)?);
        if na != nb {
            return differs("entries");
        }
        for n in na {
            same_tree(&original.join(&n), &copy.join(&n))?;
        }
    } else if a.is_file() {
        let (mut fa, mut fb) = (
            File::open(original).map_err(|e| Error::io(original, e))?,
            File::open(copy).map_err(|e| Error::io(copy, e))?,
        );
        let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
        loop {
            let n = read_full(&mut fa, &mut ba).map_err(|e| Error::io(original, e))?;
            let m = read_full(&mut fb, &mut bb).map_err(|e| Error::io(copy, e))?;
            if n != m || ba[..n] != bb[..m] {
                return differs("bytes");
            }
            if n == 0 {
                break;
            }
        }
    } else {
        return differs("not a file, folder or symlink");
    }
    Ok(())
}

/// Reads until `buf` is full or the file ends; how many bytes were read.
fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// True for temp files `write_atomic` leaves behind when killed mid-write;
/// listings skip them and `doctor --fix` removes them.
pub(crate) fn is_temp_file(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Whether `path` is a folder now (symlinks followed).
pub fn is_folder(path: &Path) -> bool {
    path.is_dir()
}

/// Whether `path` is a regular file now (symlinks followed).
pub fn is_file(path: &Path) -> bool {
    path.is_file()
}

/// The size of what is at `path` in bytes; 0 when it cannot be asked.
pub fn size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// `path` with every symlink and `..` resolved (the one spelling of a file
/// reached by several paths); an error when it is not there.
pub fn resolved(path: &Path) -> std::io::Result<PathBuf> {
    path.canonicalize()
}

/// Creates folder `dir` and its parents.
pub fn create_folder(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// The temp files a killed `write_atomic` left in `dir`, by name and path,
/// in listing order; a folder that cannot be listed has none.
pub fn temp_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(listing) = fs::read_dir(dir) else {
        return vec![];
    };
    listing
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            is_temp_file(&name).then(|| (name, entry.path()))
        })
        .collect()
}

/// Removes a temp file a killed writer left (`doctor --fix`; the caller
/// has made sure no writer owns it).
pub fn remove_temp_file(path: &Path) -> Result<()> {
    fs::remove_file(path).map_err(|e| Error::io(path, e))
}

/// How long ago the file at `path` last changed; `None` when that cannot
/// be told (gone, or a clock set back).
pub fn age(path: &Path) -> Option<std::time::Duration> {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
}

/// Which directory entries [`entries`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Regular files (not temp files left by a killed writer).
    File,
    /// Folders.
    Dir,
}

/// The names and paths of `dir`'s files or folders, sorted by name; a missing
/// folder is empty, and temp files from interrupted writes are never listed.
/// Every listing of a store folder goes through here so they all skip the
/// same things.
pub fn entries(dir: &Path, kind: EntryKind) -> Result<Vec<(String, PathBuf)>> {
    let iter = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = vec![];
    for entry in iter {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let wanted = entry.file_type().is_ok_and(|t| match kind {
            EntryKind::File => t.is_file() && !is_temp_file(&name),
            EntryKind::Dir => t.is_dir(),
        });
        if wanted {
            out.push((name, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Reads a record's file to a string; `Ok(None)` when it does not exist.
pub fn read_optional(path: &Path, what: &'static str) -> Result<Option<String>> {
    Ok(read_with_metadata(path, what)?.map(|(_, text)| text))
}

/// Reads a record's file (a manifest, a session or a workflow state file)
/// with its metadata, taken from the open file before it is read; `Ok(None)`
/// when it does not exist. Refused unless it is a regular file: another
/// tool's FIFO in a record's place would block a plain open until a writer
/// came, and a device would be read without end.
pub fn read_with_metadata(
    path: &Path,
    what: &'static str,
) -> Result<Option<(fs::Metadata, String)>> {
    let Some((file, m)) = open_record(path, what)? else {
        return Ok(None);
    };
    // Room for the whole of it and the byte that says it ended: two reads.
    let mut text = String::with_capacity(usize::try_from(m.len()).unwrap_or(0) + 1);
    (&file)
        .read_to_string(&mut text)
        .map_err(|e| Error::io(path, e))?;
    Ok(Some((m, text)))
}

/// Opens a record's file for reading, with its metadata: without blocking,
/// and refused unless it is a regular file (see [`read_with_metadata`]);
/// `Ok(None)` when it does not exist.
pub(crate) fn open_record(path: &Path, what: &'static str) -> Result<Option<(File, fs::Metadata)>> {
    let Some(file) = open_nonblocking(path)? else {
        return Ok(None);
    };
    let m = file.metadata().map_err(|e| Error::io(path, e))?;
    if !m.is_file() {
        return Err(Error::NotARegularFile {
            what,
            path: path.to_path_buf(),
            found: describe_file_type(m.file_type()),
        });
    }
    Ok(Some((file, m)))
}

/// [`open_record`] of a file that must be there: a missing one is the
/// `NotFound` error `File::open` gives.
pub(crate) fn open_record_file(path: &Path, what: &'static str) -> Result<File> {
    match open_record(path, what)? {
        Some((file, _)) => Ok(file),
        None => Err(Error::io(path, std::io::ErrorKind::NotFound.into())),
    }
}

/// Opens a file for reading without blocking (a FIFO opens at once);
/// `Ok(None)` when it does not exist. The caller asks the open file what
/// it is: no other tool can swap something else in between.
fn open_nonblocking(path: &Path) -> Result<Option<File>> {
    use crate::sys;
    match sys::open_read_at(sys::CWD, path, sys::Follow::Yes) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(sys::Errno::NOENT) => Ok(None),
        Err(e) => Err(Error::io(path, e.into())),
    }
}

/// What stands where a folder should be, in words, when something other
/// than a folder does (symlinks followed); `None` for a folder or nothing.
/// For `doctor`: a file in place of the transcripts folder makes every
/// write there fail, and must be named rather than fail the check itself.
pub fn in_place_of_folder(path: &Path) -> Option<&'static str> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => None,
        Ok(m) if m.is_file() => Some("a regular file"),
        Ok(m) => Some(describe_file_type(m.file_type())),
        Err(_) => None,
    }
}

/// What a path that is not a regular file is, in words for an error.
pub(crate) fn describe_file_type(t: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Opens a file a user named (a workflow.yaml, a transcript to import…)
/// for reading: only a regular file (symlinks followed) of at most `limit`
/// bytes; `Ok(None)` when it does not exist. `/dev/zero` would otherwise be
/// read until memory runs out, and opening a FIFO blocks until a writer
/// comes. The file is opened without blocking and its type asked of the
/// open handle; the returned reader stops after `limit` bytes even if the
/// file grows.
pub(crate) fn open_regular(
    path: &Path,
    what: &'static str,
    limit: u64,
) -> Result<Option<std::io::Take<File>>> {
    let check = |m: &fs::Metadata| {
        if !m.is_file() {
            return Err(Error::NotARegularFile {
                what,
                path: path.to_path_buf(),
                found: describe_file_type(m.file_type()),
            });
        }
        if m.len() > limit {
            return Err(Error::FileTooLarge {
                what,
                path: path.to_path_buf(),
                limit,
            });
        }
        Ok(())
    };
    let Some(file) = open_nonblocking(path)? else {
        return Ok(None);
    };
    check(&file.metadata().map_err(|e| Error::io(path, e))?)?;
    Ok(Some(file.take(limit)))
}

/// Reads a file a user named as text, with the rules of [`open_regular`];
/// `Ok(None)` when it does not exist.
pub fn read_regular(path: &Path, what: &'static str, limit: u64) -> Result<Option<String>> {
    let Some(mut reader) = open_regular(path, what, limit)? else {
        return Ok(None);
    };
    let mut bytes = vec![];
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    // It grew past the limit between the check and the read.
    if bytes.len() as u64 >= limit && reader.into_inner().read(&mut [0u8]).is_ok_and(|n| n > 0) {
        return Err(Error::FileTooLarge {
            what,
            path: path.to_path_buf(),
            limit,
        });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::Corrupt {
            path: path.to_path_buf(),
            what,
            reason: "not UTF-8 text".into(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_between_file_systems_copies_verifies_then_removes() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("run");
        fs::create_dir_all(from.join("sub")).unwrap();
        fs::write(from.join("a.md"), "alpha").unwrap();
        fs::write(from.join("sub/x.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(from.join("sub/x.sh"), fs::Permissions::from_mode(0o751)).unwrap();
        std::os::unix::fs::symlink("a.md", from.join("link")).unwrap();
        let keep = dir.path().join("keep");
        copy_tree(&from, &keep).unwrap();
        // The path a failed rename across file systems takes, taken here.
        let to = dir.path().join("archive/run");
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        move_across(&from, &to, Some("a.md")).unwrap();
        assert!(!from.exists());
        same_tree(&keep, &to).unwrap();
        assert_eq!(
            fs::metadata(to.join("sub/x.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o751
        );
        // A copy that differs is named, and the original kept.
        fs::write(keep.join("a.md"), "changed").unwrap();
        let err = same_tree(&to, &keep).unwrap_err().to_string();
        assert!(err.contains("differs"), "{err}");
    }

    #[test]
    fn untrusted_paths_stay_inside_the_root_and_user_paths_go_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let outside = dir.path().join("outside");
        fs::create_dir_all(root.join("wf")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(root.join("wf/in.yaml"), "a: 1").unwrap();
        fs::write(outside.join("secret.yaml"), "k: v").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.yaml"), root.join("out.yaml")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("out-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("wf/in.yaml"), root.join("in-link.yaml")).unwrap();
        let confined = |p: &str| resolve_named(&root, Path::new(p), PathTrust::ProjectOnly, "f");
        let secret = outside.join("secret.yaml");
        for p in [
            secret.to_str().unwrap(),
            "../outside/secret.yaml",
            "wf/../../outside/secret.yaml",
            "out.yaml",
            "out-dir/secret.yaml",
            "out-dir/missing.yaml",
            "/etc/passwd",
        ] {
            let err = confined(p).unwrap_err();
            assert_eq!(err.kind(), logbook_model::ErrorKind::Invalid, "{p}");
            assert!(err.to_string().contains("inside the project root"), "{err}");
        }
        let root_c = root.canonicalize().unwrap();
        assert_eq!(confined("wf/in.yaml").unwrap(), root_c.join("wf/in.yaml"));
        assert_eq!(confined("in-link.yaml").unwrap(), root_c.join("wf/in.yaml"));
        assert_eq!(
            confined("wf/./x/../in.yaml").unwrap(),
            root_c.join("wf/in.yaml")
        );
        // Missing inside: named as is, for the read to say "not found".
        assert_eq!(
            confined("wf/none.yaml").unwrap(),
            root_c.join("wf/none.yaml")
        );
        let user = resolve_named(&root, &secret, PathTrust::User, "f").unwrap();
        assert_eq!(user, secret);
    }

    /// What Linux can show of a case-insensitive file system's rule: a
    /// second spelling of the root (here a symlink to it; on macOS also
    /// `/users/me/proj` for `/Users/me/Proj`) is judged by where it
    /// resolves, never by its letters: inside stays inside, and `..`
    /// through it still cannot leave.
    #[test]
    fn a_second_spelling_of_the_root_is_judged_by_where_it_resolves() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        fs::create_dir_all(root.join("wf")).unwrap();
        fs::write(root.join("wf/in.yaml"), "a: 1").unwrap();
        fs::write(dir.path().join("secret.yaml"), "k: v").unwrap();
        let alias = dir.path().join("Project-alias");
        std::os::unix::fs::symlink(&root, &alias).unwrap();
        let root_c = root.canonicalize().unwrap();
        let confined = |p: &Path| resolve_named(&root, p, PathTrust::ProjectOnly, "f");
        assert_eq!(
            confined(&alias.join("wf/in.yaml")).unwrap(),
            root_c.join("wf/in.yaml")
        );
        assert_eq!(
            confined(&alias.join("wf/new.yaml")).unwrap(),
            root_c.join("wf/new.yaml")
        );
        // The root named through its other spelling is the same root.
        let through_alias =
            resolve_named(&alias, Path::new("wf/in.yaml"), PathTrust::ProjectOnly, "f");
        assert_eq!(through_alias.unwrap(), root_c.join("wf/in.yaml"));
        for escape in [
            alias.join("../secret.yaml"),
            alias.join("wf/../../secret.yaml"),
            dir.path().join("secret.yaml"),
        ] {
            let err = confined(&escape).unwrap_err();
            assert!(
                err.to_string().contains("inside the project root"),
                "{escape:?}: {err}"
            );
        }
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn private_files_are_owner_only_from_creation_in_owner_only_folders() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |m: fs::Metadata| m.permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/deeper/t.json");
        let mut while_written = None;
        write_atomic_file_private(&p, |w| {
            while_written = Some(mode(w.get_ref().metadata().map_err(|e| Error::io(&p, e))?));
            w.write_all(b"secret").map_err(|e| Error::io(&p, e))
        })
        .unwrap();
        assert_eq!(while_written, Some(0o600));
        assert_eq!(mode(fs::metadata(&p).unwrap()), 0o600);
        assert_eq!(mode(fs::metadata(p.parent().unwrap()).unwrap()), 0o700);
        // A file given a wider mode gets it only once written.
        let shared = dir.path().join("shared/s.json");
        write_atomic_with_permissions(&shared, fs::Permissions::from_mode(0o644), b"x").unwrap();
        assert_eq!(mode(fs::metadata(&shared).unwrap()), 0o644);
        assert_eq!(
            mode(fs::metadata(shared.parent().unwrap()).unwrap()),
            0o755 & !umask()
        );
    }

    /// The process's file-creation mask, read back from a folder made with 0777.
    fn umask() -> u32 {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("probe");
        fs::create_dir(&probe).unwrap();
        0o777 & !(fs::metadata(&probe).unwrap().permissions().mode() & 0o777)
    }

    #[test]
    fn user_named_files_must_be_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("w.yaml");
        fs::write(&f, "name: x\n").unwrap();
        assert_eq!(
            read_regular(&f, "workflow file", 1024).unwrap().as_deref(),
            Some("name: x\n")
        );
        assert!(
            read_regular(&dir.path().join("nope"), "workflow file", 1024)
                .unwrap()
                .is_none()
        );
        let err = read_regular(&f, "workflow file", 4).unwrap_err();
        assert!(matches!(err, Error::FileTooLarge { limit: 4, .. }), "{err}");
        let err = read_regular(dir.path(), "workflow file", 1024).unwrap_err();
        assert!(err.to_string().contains("is a folder"), "{err}");
        let err = read_regular(Path::new("/dev/zero"), "workflow file", 1024).unwrap_err();
        assert!(err.to_string().contains("device"), "{err}");
    }

    #[test]
    fn entries_skip_temp_files_and_missing_folders() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.yaml"), "x").unwrap();
        fs::write(dir.path().join(".a.yaml.1.abc.tmp"), "x").unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        let files = entries(dir.path(), EntryKind::File).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, "a.yaml");
        assert_eq!(entries(dir.path(), EntryKind::Dir).unwrap().len(), 1);
        assert!(
            entries(&dir.path().join("nope"), EntryKind::File)
                .unwrap()
                .is_empty()
        );
    }
}

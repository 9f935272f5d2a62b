//! The runs folder (`agent_outputs_folder`) as every pass over all runs
//! reads it: one walk of its run folders ([`walk`]), which the index's
//! rebuild, sync and scan, `doctor` and the store's own listings share, and
//! the reads relative to the open folder ([`RunsDir`]) that keep a pass
//! over a million runs from resolving each run's whole path again.
//!
//! The walk only names folders: file types come from `readdir` itself on
//! the usual file systems, so it costs no `stat` per run. What each caller
//! needs of a folder (its manifest's stamp, its bytes, a listing for temp
//! files) it asks of [`RunsDir`] for the folders it cares about, on as many
//! threads as it likes; errors come back as values, never as a stopped
//! walk, except an unreadable runs folder itself.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Read as _;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::run_files::{self, Unconfined};
use crate::sys::{self, Errno, Follow, Kind, Meta, Want};
use logbook_model::error::{Error, Result};
use logbook_model::ids::RunId;
use logbook_model::run::MANIFEST_FILE;

/// One folder of the runs folder: a run, or a would-be run (a folder not
/// named by a run id, another tool's run still starting).
#[derive(Debug, Clone)]
pub struct RunFolder {
    /// Its name as the folder listing gave it.
    pub name: OsString,
    /// Its path (the runs folder joined with the name).
    pub path: PathBuf,
}

impl RunFolder {
    /// The run id its name is, if it is one.
    pub fn id(&self) -> Option<RunId> {
        RunId::parse(self.name.to_str()?).ok()
    }

    /// Its name as bytes (a run folder's name need not be UTF-8).
    pub fn name_bytes(&self) -> &[u8] {
        use std::os::unix::ffi::OsStrExt as _;
        OsStr::as_bytes(&self.name)
    }

    /// Where its manifest is (or would be).
    pub fn manifest(&self) -> PathBuf {
        self.path.join(MANIFEST_FILE)
    }
}

/// The run folders of a runs folder, streamed in `readdir` order (see
/// [`walk`]).
#[derive(Debug)]
pub struct Walk {
    dir: PathBuf,
    entries: Option<fs::ReadDir>,
}

/// Walks the runs folder `dir`: each subfolder once, as `readdir` lists
/// it, nothing held in memory; dot folders (the archive) are not runs. A missing runs folder has none; one that
/// cannot be listed is an error, and so is each entry that cannot be read
/// (yielded as a value: the caller chooses to stop or pass over it).
pub fn walk(dir: &Path) -> Result<Walk> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => Some(entries),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(dir, e)),
    };
    Ok(Walk {
        dir: dir.to_path_buf(),
        entries,
    })
}

impl Iterator for Walk {
    type Item = Result<RunFolder>;

    fn next(&mut self) -> Option<Result<RunFolder>> {
        loop {
            let entry = match self.entries.as_mut()?.next()? {
                Ok(entry) => entry,
                Err(e) => return Some(Err(Error::io(&self.dir, e))),
            };
            // A dot folder is never a run (a run id is a UUID): it is the
            // archive (`{agent_outputs_folder}/.archive` by default) or
            // another tool's own, and walking it as a run would list the
            // archive's runs as one broken run.
            if entry.file_name().as_encoded_bytes().first() == Some(&b'.') {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                return Some(Ok(RunFolder {
                    name: entry.file_name(),
                    path: entry.path(),
                }));
            }
        }
    }
}

/// Whether the run folder `folder` holds a manifest (of any kind).
pub fn has_manifest(folder: &Path) -> bool {
    fs::metadata(folder.join(MANIFEST_FILE)).is_ok()
}

/// The runs folder opened, for reads relative to it (`{run}/…`, not the
/// whole path): the passes over every run use it from many threads.
#[derive(Debug)]
pub struct RunsDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What a `stat` of a run's manifest through [`RunsDir::manifest_stamp`]
/// found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestStamp {
    /// There: its size and mtime (ns since the epoch; 0 before it), as
    /// `index` stamps every file.
    Stamp(i64, i64),
    /// Not there.
    Missing,
    /// A part of its path is not a folder (the run folder is a file now).
    NotDir,
    /// It could not be asked (the re-read decides, and records why).
    Unreadable,
}

/// What a worker reuses from one run folder to the next in
/// [`RunsDir::read_folder`], so a folder costs no allocation for its
/// listing or its manifest's bytes.
pub struct ReadBuffers {
    list: sys::ListBuffer,
    text: Vec<u8>,
}

impl Default for ReadBuffers {
    fn default() -> Self {
        ReadBuffers {
            list: sys::ListBuffer::default(),
            text: Vec::with_capacity(64 * 1024),
        }
    }
}

/// A run folder as [`RunsDir::read_folder`] read it, still open for its
/// outputs ([`FolderRead::outputs`]).
pub struct FolderRead<'s> {
    /// Its manifest's text; `Ok(None)` when there is none.
    pub manifest: Result<Option<&'s str>>,
    /// The manifest's stamp (size, mtime in ns), taken from the open file
    /// before it was read, as the index stamps it; `None` when it was not
    /// read.
    pub stamp: Option<(i64, i64)>,
    /// Whether its listing holds a temp file of an interrupted write whose
    /// name starts with the prefix asked about.
    pub temp: bool,
    /// The run folder, open.
    fd: OwnedFd,
}

impl FolderRead<'_> {
    /// The outputs stamp of the run in `folder` with registered `files`
    /// (the one the index takes), each file that is not the run's own
    /// handed to `unconfined` (the rule of [`RunsDir::output_unconfined`]):
    /// one `lstat` a file through the open folder for both.
    pub fn outputs<'a>(
        &self,
        folder: &Path,
        files: impl IntoIterator<Item = &'a str>,
        mut unconfined: impl FnMut(&'a str, Unconfined),
    ) -> i64 {
        let mut buf = PathBuf::new();
        crate::run_outputs::outputs_stamp_seeing(
            self.fd.as_fd(),
            Path::new(""),
            files,
            &mut buf,
            |file, m| {
                if let Some(u) = unconfined_from(folder, file, m) {
                    unconfined(file, u);
                }
            },
        )
    }
}

/// Why output `file` of the run in `folder` is not the run's own, if it is
/// not, from its `lstat` `m` through the open folder: the rule of
/// [`run_files::unconfined`] for a plain name that is a regular file or
/// absent (nearly every output); anything else (a symlink, a name with
/// folders, where a folder on the way may be a symlink, a `stat` that
/// failed) is resolved by that rule itself.
fn unconfined_from(folder: &Path, file: &str, m: sys::Result<&Meta>) -> Option<Unconfined> {
    let slow = || run_files::unconfined(folder, file);
    if file.contains('/') {
        return slow();
    }
    match m {
        Ok(m) => match m.kind {
            Kind::File => (m.nlink > 1).then_some(Unconfined::HardLink),
            Kind::Symlink => slow(),
            // A folder, FIFO or device: not a file, never "unconfined".
            Kind::Dir | Kind::Other => None,
        },
        Err(Errno::NOENT) => None,
        Err(_) => slow(),
    }
}

/// A run folder as [`RunsDir::probe_folder`] saw it.
#[derive(Debug, Clone, Copy)]
pub struct FolderProbe {
    /// Its manifest's stamp.
    pub manifest: ManifestStamp,
    /// Whether its listing holds a temp file of an interrupted write whose
    /// name starts with the prefix asked about.
    pub temp: bool,
}

/// The stamp of the manifest at `rel` from the open folder `at`.
fn manifest_stamp_at(at: impl AsFd, rel: &Path) -> ManifestStamp {
    match sys::stat_at(at, rel, Follow::Yes, Want::STAMP) {
        Ok(m) => ManifestStamp::Stamp(m.size as i64, m.mtime.ns()),
        Err(Errno::NOENT) => ManifestStamp::Missing,
        Err(Errno::NOTDIR) => ManifestStamp::NotDir,
        Err(_) => ManifestStamp::Unreadable,
    }
}

/// Lists the open run folder `fd`: whether it holds a temp file whose name
/// starts with `temp_prefix`. `None` when it cannot be listed.
fn list_folder(fd: &OwnedFd, temp_prefix: &str, buffers: &mut ReadBuffers) -> Option<bool> {
    let mut temp = false;
    sys::list(fd, &mut buffers.list, |name| {
        let name = name.to_bytes();
        if name.starts_with(temp_prefix.as_bytes())
            && crate::is_temp_file(&String::from_utf8_lossy(name))
        {
            temp = true;
        }
    })
    .ok()?;
    Some(temp)
}

/// The manifest of the open run folder `fd`, if it is a regular file, and
/// its stamp taken from the open file before it is read: one `openat`
/// (without blocking: another tool's FIFO in the manifest's place would
/// hold the open until a writer came), one `stat` of the open file (its
/// type too: a device would be read without end), the read. `path` names
/// it in errors.
fn read_manifest<'s>(
    fd: &OwnedFd,
    path: impl Fn() -> PathBuf,
    buffers: &'s mut ReadBuffers,
) -> (Result<Option<&'s str>>, Option<(i64, i64)>) {
    let file = match sys::open_read_at(fd, Path::new(MANIFEST_FILE), Follow::Yes) {
        Ok(f) => fs::File::from(f),
        Err(Errno::NOENT) => return (Ok(None), None),
        Err(e) => return (Err(Error::io(path(), e.into())), None),
    };
    let m = match sys::stat_open(&file, Want::KIND.and(Want::STAMP)) {
        Ok(m) => m,
        Err(e) => return (Err(Error::io(path(), e.into())), None),
    };
    if m.kind != Kind::File {
        let e = match file.metadata() {
            Ok(m) => Error::NotARegularFile {
                what: "manifest",
                path: path(),
                found: crate::fs::describe_file_type(m.file_type()),
            },
            Err(e) => Error::io(path(), e),
        };
        return (Err(e), None);
    }
    let stamp = Some((m.size as i64, m.mtime.ns()));
    buffers.text.clear();
    // Through `Take`: `File`'s own `read_to_end` first asks for the size
    // and position to size a buffer this one already has.
    if let Err(e) = file.take(u64::MAX).read_to_end(&mut buffers.text) {
        return (Err(Error::io(path(), e)), stamp);
    }
    let text = std::str::from_utf8(&buffers.text).map_err(|_| {
        // What `read_to_string` says of such a file.
        Error::io(
            path(),
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        )
    });
    (text.map(Some), stamp)
}

impl RunsDir {
    /// Opens the runs folder `dir`; `None` when it is missing or not a
    /// folder (then no run is there).
    pub fn open(dir: &Path) -> Result<Option<RunsDir>> {
        match sys::open_dir_at(sys::CWD, dir) {
            Ok(fd) => Ok(Some(RunsDir {
                fd,
                path: dir.to_path_buf(),
            })),
            Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
            Err(e) => Err(Error::io(dir, e.into())),
        }
    }

    /// The stamp of manifest `rel` (`{run}/manifest.json`, relative to the
    /// runs folder).
    pub fn manifest_stamp(&self, rel: &Path) -> ManifestStamp {
        manifest_stamp_at(&self.fd, rel)
    }

    /// A run folder's manifest stamp and whether it holds a temp file
    /// whose name starts with `temp_prefix`, the manifest left unread: one
    /// `openat` of the folder, its listing, one `stat`. What a pass that
    /// trusts the index for unchanged manifests needs (`doctor`); `None`
    /// when the folder cannot be opened or listed so (the caller then
    /// reads it as [`RunsDir::read_folder`] does).
    pub fn probe_folder(
        &self,
        folder: &RunFolder,
        temp_prefix: &str,
        buffers: &mut ReadBuffers,
    ) -> Option<FolderProbe> {
        let fd = sys::open_dir_at(&self.fd, Path::new(&folder.name)).ok()?;
        let temp = list_folder(&fd, temp_prefix, buffers)?;
        Some(FolderProbe {
            manifest: manifest_stamp_at(&fd, Path::new(MANIFEST_FILE)),
            temp,
        })
    }

    /// Why output `file` of run `folder` is not the run's own, if it is
    /// not (see `unconfined_from`), from one `lstat` relative to the open
    /// runs folder.
    pub fn output_unconfined(&self, folder: &RunFolder, file: &str) -> Option<Unconfined> {
        let m = match run_files::stored_rel(file) {
            Some(rel) => sys::stat_at(
                &self.fd,
                &Path::new(&folder.name).join(rel),
                Follow::No,
                Want::KIND.and(Want::NLINK),
            ),
            None => Err(Errno::INVAL),
        };
        unconfined_from(&folder.path, file, m.as_ref().map_err(|e| *e))
    }

    /// Whether `rel` (relative to the runs folder) is a folder.
    pub fn is_folder(&self, rel: &Path) -> bool {
        matches!(
            sys::stat_at(&self.fd, rel, Follow::Yes, Want::KIND),
            Ok(m) if m.kind == Kind::Dir
        )
    }

    /// The outputs stamp of run folder `folder` (relative to the runs
    /// folder) with registered `files`: the one
    /// [`crate::run_outputs::outputs_stamp`] takes, `buf` reused for paths.
    pub fn outputs_stamp<'a>(
        &self,
        folder: &Path,
        files: impl IntoIterator<Item = &'a str>,
        buf: &mut PathBuf,
    ) -> i64 {
        crate::run_outputs::outputs_stamp_at(self.fd.as_fd(), folder, files, buf)
    }

    /// The manifest's text and stamp, and whether the folder holds a temp
    /// file whose name starts with `temp_prefix`, read through the open
    /// folder: one `openat` of the folder, its listing, then
    /// `read_manifest` (no path walked again). The folder stays open for
    /// its outputs. `None` when the folder cannot be opened or listed so:
    /// the caller then reads by path.
    pub fn read_folder<'s>(
        &self,
        folder: &RunFolder,
        temp_prefix: &str,
        buffers: &'s mut ReadBuffers,
    ) -> Option<FolderRead<'s>> {
        let fd = sys::open_dir_at(&self.fd, Path::new(&folder.name)).ok()?;
        let temp = list_folder(&fd, temp_prefix, buffers)?;
        let (manifest, stamp) = read_manifest(&fd, || folder.manifest(), buffers);
        Some(FolderRead {
            manifest,
            stamp,
            temp,
            fd,
        })
    }

    /// The runs folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_names_folders_only_and_a_missing_runs_folder_has_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(walk(&dir.path().join("none")).unwrap().count(), 0);
        fs::create_dir(dir.path().join("a")).unwrap();
        fs::create_dir(dir.path().join("b")).unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        let mut names: Vec<OsString> = walk(dir.path()).unwrap().map(|f| f.unwrap().name).collect();
        names.sort();
        assert_eq!(names, ["a", "b"]);
        assert!(RunsDir::open(&dir.path().join("none")).unwrap().is_none());
    }

    #[test]
    fn a_folder_read_through_the_runs_folder_says_manifest_and_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("r");
        fs::create_dir(&run).unwrap();
        let runs = RunsDir::open(dir.path()).unwrap().unwrap();
        let folder = walk(dir.path()).unwrap().next().unwrap().unwrap();
        let mut buffers = ReadBuffers::default();
        let read = runs
            .read_folder(&folder, ".manifest.json.", &mut buffers)
            .unwrap();
        assert!(matches!(read.manifest, Ok(None)));
        assert!(!read.temp);
        fs::write(run.join(MANIFEST_FILE), "{}").unwrap();
        fs::write(run.join(".manifest.json.x.tmp"), "").unwrap();
        let read = runs
            .read_folder(&folder, ".manifest.json.", &mut buffers)
            .unwrap();
        assert!(matches!(read.manifest, Ok(Some("{}"))));
        assert!(read.temp);
        let rel = Path::new("r").join(MANIFEST_FILE);
        assert!(matches!(
            runs.manifest_stamp(&rel),
            ManifestStamp::Stamp(2, _)
        ));
        assert_eq!(
            runs.manifest_stamp(Path::new("x/manifest.json")),
            ManifestStamp::Missing
        );
        assert!(runs.is_folder(Path::new("r")));
        assert!(has_manifest(&run));
    }
}

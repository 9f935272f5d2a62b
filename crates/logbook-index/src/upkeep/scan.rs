//! The run folders against the index, without holding either whole in
//! memory: the folder names are read once and kept sorted in 16 bytes a
//! run (a UUID as a number: see `folder_names`), then merged with the
//! index's `files` rows,
//! read in path order a batch at a time; each batch's stamps are compared
//! on every core. `index sync`, `index status`, `doctor` and the name check
//! before every listing share it ([`Upkeep::scan_names`], the check before
//! a listing, compares names only).
//!
//! What each `stat` is for (nothing else is looked at):
//! - one `readdir` of `agent_outputs_folder`, only when its mtime moved
//!   since the last complete comparison: a run folder was created, removed
//!   or renamed. Otherwise the index's rows stand for the folders.
//! - with stamps, one `stat` per manifest: an edit of the manifest, in
//!   place or by rename, moves its size or mtime.
//! - with stamps, one `lstat` per registered output file of a run not
//!   indexed as finished (or of every run, [`Outputs::All`]): text written
//!   into an output after it was registered is indexed too, and an edit in
//!   place moves no folder's mtime, so nothing cheaper sees it. A file
//!   replaced by rename shows as a new inode. A finished run's outputs are
//!   settled: a normal sync trusts them (at a million runs their `lstat`s
//!   were most of a sync that found nothing), `index sync --full` does not.
//!
//! Each is a `statx` relative to the open runs folder (`{run}/{file}`, not
//! the whole path: the walk of the path's leading folders was a large share
//! of the kernel's time), and the index side is one clustered table read in
//! order (`files`, whose rows carry the output names: see the schema).
//!
//! Right after a pass that read every run folder (`doctor`'s), the stamps
//! it read stand for these `stat`s while the runs folder is unchanged
//! (`folder_names::WalkedNames`): nothing is asked of the files twice.
//!
//! The run folder's own mtime is not looked at: it moves when an entry is
//! added, removed or renamed, and each of those that matters to the index
//! already shows in the manifest's or an output's own `stat`.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::path_str;
use crate::upkeep::Upkeep;
use crate::upkeep::folder_names::{
    DiskCursor, Names, SUFFIX, Source, WalkedNames, cmp_name_rel, cmp_names, digest, uuid_text,
};
use crate::write::apply::Live;
use crate::write::record::ABSENT_STAMP;
use logbook_model::error::Result;
use logbook_model::ids::RunId;
use logbook_model::run::MANIFEST_FILE;
use logbook_store::run_outputs::decode_outs;
use logbook_store::runs::{self, ManifestStamp, RunsDir};

/// Index rows compared per batch: enough to keep both cores busy between
/// two index reads, few enough that a batch's memory is small.
const BATCH: i64 = 4096;

/// A run the index holds out of step with its folder.
#[derive(Debug)]
pub(crate) enum RunChange {
    /// A manifest to read: new (its folder is not indexed) or changed.
    Read {
        /// The manifest.
        path: PathBuf,
        /// Whether its folder is new to the index.
        new: bool,
    },
    /// An indexed manifest that is gone (its path as the index stores it).
    Gone(String),
}

/// What a scan looked at.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ScanSummary {
    /// Run manifests found (indexed or new).
    pub(crate) scanned: u64,
    /// False when a folder on disk was left unaccounted for (no manifest
    /// yet: another tool mid-start), so the folder's mtime must not be
    /// recorded as seen.
    pub(crate) complete: bool,
}

/// One indexed run manifest and its stamps; text lives in [`Batch::text`].
struct Entry {
    path: Range<usize>,
    size: i64,
    mtime_ns: i64,
    out_stamp: i64,
    /// Indexed as finished (`files.live` is `apply::Live::Settled`): its
    /// outputs are settled, and a normal sync trusts them.
    settled: bool,
    /// Its registered output files' names, a range of [`Batch::outs`]
    /// (see `outputs::encode_outs`).
    outs: Range<usize>,
}

/// A batch of index rows, their strings in one buffer (no allocation per
/// row).
#[derive(Default)]
struct Batch {
    text: String,
    outs: Vec<u8>,
    entries: Vec<Entry>,
}

impl Batch {
    fn str(&self, r: &Range<usize>) -> &str {
        &self.text[r.clone()]
    }

    fn push_text(&mut self, s: &str) -> Range<usize> {
        let start = self.text.len();
        self.text.push_str(s);
        start..self.text.len()
    }
}

/// Whose registered output files a scan `lstat`s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outputs {
    /// Only those of runs not indexed as finished (running, no manifest,
    /// invalid manifest), and of any run whose manifest changed: a
    /// finished run's outputs are settled, and a normal sync checks such a
    /// run by its manifest's stamp alone (`index sync`).
    Unsettled,
    /// Every run's (`index sync --full`): an output of a finished run
    /// edited in place, which moves no manifest, is seen too.
    All,
}

/// What a `stat` says of an indexed run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Same,
    Changed,
    Gone,
}

/// An entry of a batch whose folder is there, and the digest of the
/// stamps a pass just read of it, if one did.
#[derive(Clone, Copy)]
struct Present {
    entry: usize,
    read: Option<u64>,
}

/// Compares one entry's stamps with its files, relative to the runs folder
/// `dir` (the entry's path with `prefix` bytes cut is `{run}/manifest.json`),
/// `buf` reused for paths; or with the digest of what a pass just `read`
/// of them, which needs no `stat`.
fn verdict(
    batch: &Batch,
    (e, read): (&Entry, Option<u64>),
    dir: &RunsDir,
    prefix: usize,
    outputs: Outputs,
    buf: &mut PathBuf,
) -> Verdict {
    // The pass stamped the outputs too; a finished run's are compared only
    // when a sync of `outputs` would compare them.
    if let Some(read) = read
        && !(e.settled && outputs == Outputs::Unsettled)
    {
        return if read == digest((e.size, e.mtime_ns), e.out_stamp) {
            Verdict::Same
        } else {
            Verdict::Changed
        };
    }
    let Some(rel) = batch.str(&e.path).get(prefix..).map(Path::new) else {
        return Verdict::Changed;
    };
    match dir.manifest_stamp(rel) {
        ManifestStamp::Stamp(size, mtime_ns) if (size, mtime_ns) == (e.size, e.mtime_ns) => {}
        ManifestStamp::Stamp(..) => return Verdict::Changed,
        ManifestStamp::Missing => return without_manifest(e, dir, rel),
        ManifestStamp::NotDir => return Verdict::Gone,
        // Unreadable now: let the re-read decide (it records the error).
        ManifestStamp::Unreadable => return Verdict::Changed,
    }
    if e.settled && outputs == Outputs::Unsettled {
        return Verdict::Same;
    }
    let Some(folder) = rel.parent() else {
        return Verdict::Same;
    };
    let Some(files) = decode_outs(&batch.outs[e.outs.clone()]) else {
        return Verdict::Changed;
    };
    if dir.outputs_stamp(folder, files, buf) != e.out_stamp {
        return Verdict::Changed;
    }
    Verdict::Same
}

/// The verdict on an indexed run whose manifest is not there: gone with
/// its folder, else a run folder without a manifest (seed 000 lists it by
/// its UUID), which is what the index holds when its stamp says so.
fn without_manifest(e: &Entry, dir: &RunsDir, rel: &Path) -> Verdict {
    let folder = rel.parent().unwrap_or(rel);
    if !dir.is_folder(folder) {
        Verdict::Gone
    } else if (e.size, e.mtime_ns) == ABSENT_STAMP {
        Verdict::Same
    } else {
        Verdict::Changed
    }
}

/// The verdicts of `which` entries of `batch`, on every core.
fn verdicts(
    batch: &Batch,
    which: &[Present],
    dir: &RunsDir,
    prefix: usize,
    outputs: Outputs,
) -> Vec<Verdict> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    let mut out = vec![Verdict::Same; which.len()];
    let run = |slots: &mut [Verdict], which: &[Present]| {
        let mut buf = PathBuf::new();
        for (slot, p) in slots.iter_mut().zip(which) {
            let at = (&batch.entries[p.entry], p.read);
            *slot = verdict(batch, at, dir, prefix, outputs, &mut buf);
        }
    };
    if which.len() < 64 || workers == 1 {
        run(&mut out, which);
        return out;
    }
    let per = which.len().div_ceil(workers);
    std::thread::scope(|s| {
        for (slots, part) in out.chunks_mut(per).zip(which.chunks(per)) {
            s.spawn(move || run(slots, part));
        }
    });
    out
}

/// Merges `batch`, index rows in path order, with the folder names of the
/// runs folder `dir` still ahead in `disk` (`None`: the rows stand for the
/// folders). Returns the entries whose folder is there, to be stat'ed, and
/// what is known without a stat: folders new to the index (before a row,
/// or all that are left when `batch` is empty, the end) and rows whose
/// folder is gone. Rows below `archived` (the archive's own, when it lies
/// in the runs folder) are left out: the archive's sync keeps them.
fn merge(
    batch: &Batch,
    mut disk: Option<&mut DiskCursor>,
    dir: &Path,
    prefix: usize,
    archived: Option<&[u8]>,
    summary: &mut ScanSummary,
) -> (Vec<Present>, Vec<RunChange>) {
    let mut changes = vec![];
    let mut present = vec![];
    for (i, e) in batch.entries.iter().enumerate() {
        let rel = &batch.str(&e.path).as_bytes()[prefix..];
        if archived.is_some_and(|a| rel.starts_with(a)) {
            continue;
        }
        let on_disk = match disk.as_deref_mut() {
            None => Some(None),
            Some(disk) => {
                while let Some(name) = disk.peek()
                    && cmp_name_rel(name, rel) == Ordering::Less
                {
                    new_folder(dir, name, &mut changes, summary);
                    disk.advance();
                }
                let here = disk
                    .peek()
                    .is_some_and(|name| cmp_name_rel(name, rel) == Ordering::Equal);
                let read = here.then(|| disk.digest());
                if here {
                    disk.advance();
                }
                read
            }
        };
        if let Some(read) = on_disk {
            present.push(Present { entry: i, read });
        } else {
            changes.push(RunChange::Gone(batch.str(&e.path).to_string()));
        }
    }
    if batch.entries.is_empty()
        && let Some(disk) = disk
    {
        while let Some(name) = disk.peek() {
            new_folder(dir, name, &mut changes, summary);
            disk.advance();
        }
    }
    (present, changes)
}

/// A batch of index rows with the verdicts of its `present` entries, and
/// the changes its merge with the folder names found before the stats.
struct Stated {
    batch: Batch,
    present: Vec<Present>,
    found: Vec<Verdict>,
    changes: Vec<RunChange>,
}

/// A stat thread's result; its panic goes on in this thread.
fn joined(h: std::thread::ScopedJoinHandle<'_, Stated>) -> Stated {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

impl Stated {
    /// Adds the verdicts to the changes, counts what was scanned, and hands
    /// the changes to `each`.
    fn report(
        mut self,
        summary: &mut ScanSummary,
        each: &mut dyn FnMut(Vec<RunChange>) -> Result<()>,
    ) -> Result<()> {
        for (p, v) in self.present.iter().zip(self.found) {
            let path = self.batch.str(&self.batch.entries[p.entry].path);
            match v {
                Verdict::Same => summary.scanned += 1,
                Verdict::Changed => {
                    summary.scanned += 1;
                    self.changes.push(RunChange::Read {
                        path: PathBuf::from(path),
                        new: false,
                    });
                }
                Verdict::Gone => self.changes.push(RunChange::Gone(path.to_string())),
            }
        }
        if self.changes.is_empty() {
            return Ok(());
        }
        each(self.changes)
    }
}

impl Upkeep<'_> {
    /// Reads the indexed run manifests after `after` (exclusive) and below
    /// `end`, in path order, with their stamps and registered output files.
    fn run_batch(&self, after: &str, end: &str) -> Result<Batch> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT path, size, mtime_ns, out_stamp, outs, live FROM files \
                 WHERE path > ?1 AND path < ?2 AND kind = 'run' ORDER BY path LIMIT ?3",
            )
            .map_err(self.index.err())?;
        let mut rows = stmt
            .query(rusqlite::params![after, end, BATCH])
            .map_err(self.index.err())?;
        let mut batch = Batch::default();
        while let Some(row) = rows.next().map_err(self.index.err())? {
            let path = row
                .get_ref(0)
                .and_then(|v| Ok(v.as_str()?))
                .map_err(self.index.err())?;
            let path = batch.push_text(path);
            let outs = row
                .get_ref(4)
                .and_then(|v| Ok(v.as_blob_or_null()?))
                .map_err(self.index.err())?
                .unwrap_or_default();
            let start = batch.outs.len();
            batch.outs.extend_from_slice(outs);
            batch.entries.push(Entry {
                path,
                size: row.get(1).map_err(self.index.err())?,
                mtime_ns: row.get(2).map_err(self.index.err())?,
                out_stamp: row.get(3).map_err(self.index.err())?,
                settled: row.get::<_, i64>(5).map_err(self.index.err())? == Live::Settled as i64,
                outs: start..batch.outs.len(),
            });
        }
        Ok(batch)
    }

    /// Compares the run folders with the index, each manifest's and its
    /// outputs' stamps included, calling `each` with the changes found,
    /// batch by batch in path order (it may write them to the index: no
    /// statement is open then).
    ///
    /// `names`: read the folder names (else the indexed rows stand for the
    /// folders: the caller saw the runs folder's mtime unchanged). While
    /// the names a pass just `walked` are current, they stand for the
    /// folders either way, and the stamps it read for the files.
    /// `outputs`: whose output files are `lstat`ed.
    pub(crate) fn scan_runs(
        &self,
        names: bool,
        walked: Option<&WalkedNames>,
        outputs: Outputs,
        each: &mut dyn FnMut(Vec<RunChange>) -> Result<()>,
    ) -> Result<ScanSummary> {
        let dir = self.index.project.config.agent_outputs_folder.clone();
        let (prefix, end) = runs_range(&dir);
        // A pass's names stand for the folder while it is unchanged; its
        // stamps are then read in step with them.
        let walked = walked.filter(|w| w.current(&self.index.project));
        let mut disk = match (names, walked) {
            (_, Some(w)) => Some(DiskCursor::new(Source::Walked(w))),
            (true, None) => Some(DiskCursor::new(Source::Listed(Names::read(&dir)?))),
            (false, None) => None,
        };
        let fd = RunsDir::open(&dir)?;
        let mut summary = ScanSummary {
            scanned: 0,
            complete: true,
        };
        let mut after = prefix.clone();
        let archived = crate::upkeep::archive::archive_rel(&self.index.project);
        // Two stages: while one batch's files are stat'ed on other threads,
        // this one reads the next batch from the index (at a million runs
        // the index read is a sixth of a sync, and it left a core idle).
        std::thread::scope(|s| {
            let mut stating: Option<std::thread::ScopedJoinHandle<'_, Stated>> = None;
            loop {
                let batch = self.run_batch(&after, &end)?;
                let (present, changes) = merge(
                    &batch,
                    disk.as_mut(),
                    &dir,
                    prefix.len(),
                    archived.as_deref(),
                    &mut summary,
                );
                let last = batch.entries.last().map(|e| batch.str(&e.path).to_string());
                let fd = fd.as_ref();
                let prefix = prefix.len();
                let next = s.spawn(move || {
                    let found = match fd {
                        Some(fd) => verdicts(&batch, &present, fd, prefix, outputs),
                        None => vec![Verdict::Gone; present.len()],
                    };
                    Stated {
                        batch,
                        present,
                        found,
                        changes,
                    }
                });
                // The batch before this one, in path order: its changes
                // are written while this one's stats run.
                if let Some(before) = stating.replace(next) {
                    joined(before).report(&mut summary, each)?;
                }
                match last {
                    Some(last) => after = last,
                    None => {
                        if let Some(final_batch) = stating.take() {
                            joined(final_batch).report(&mut summary, each)?;
                        }
                        return Ok(summary);
                    }
                }
            }
        })
    }

    /// Compares the run folder *names* on disk with the index's, no stamps
    /// (the check before a listing: see `Upkeep::sync_names`), calling `each`
    /// with the folders that are new and the runs whose folder is gone, a
    /// batch at a time.
    ///
    /// The folder is listed on another thread while this one reads the
    /// index's names: the two take comparable time, and neither needs the
    /// other until both are sorted. Each side holds 16 bytes a run (a UUID
    /// as a number).
    pub(crate) fn scan_names(
        &self,
        each: &mut dyn FnMut(Vec<RunChange>) -> Result<()>,
    ) -> Result<ScanSummary> {
        let dir = self.index.project.config.agent_outputs_folder.clone();
        let (prefix, end) = runs_range(&dir);
        let (disk, indexed) = std::thread::scope(|s| {
            let disk = s.spawn(|| Names::read(&dir));
            let indexed = self.indexed_names(&prefix, &end);
            let disk = disk
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (disk, indexed)
        });
        let (disk, indexed) = (disk?, indexed?);
        let mut summary = ScanSummary {
            scanned: 0,
            complete: true,
        };
        let mut changes = vec![];
        let mut step = |side: Side, name: &[u8], changes: &mut Vec<RunChange>| -> Result<()> {
            match side {
                Side::Both => summary.scanned += 1,
                Side::Disk => new_folder(&dir, name, changes, &mut summary),
                Side::Index => {
                    let name = String::from_utf8_lossy(name);
                    changes.push(RunChange::Gone(format!("{prefix}{name}/{MANIFEST_FILE}")));
                }
            }
            if changes.len() >= BATCH as usize {
                each(std::mem::take(changes))?;
            }
            Ok(())
        };
        diff(&disk.uuids, &indexed.uuids, u128::cmp, |side, u| {
            step(side, &uuid_text(*u), &mut changes)
        })?;
        diff(
            &disk.others,
            &indexed.others,
            |a, b| cmp_names(a, b),
            |side, name| step(side, name, &mut changes),
        )?;
        if !changes.is_empty() {
            each(changes)?;
        }
        Ok(summary)
    }

    /// The run folder names the index holds (of the paths shaped like a
    /// run's manifest), sorted.
    fn indexed_names(&self, prefix: &str, end: &str) -> Result<Names> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT path FROM files WHERE path > ?1 AND path < ?2 AND kind = 'run' \
                 ORDER BY path",
            )
            .map_err(self.index.err())?;
        let mut rows = stmt.query([prefix, end]).map_err(self.index.err())?;
        let mut names = Names::default();
        while let Some(row) = rows.next().map_err(self.index.err())? {
            let path = row
                .get_ref(0)
                .and_then(|v| Ok(v.as_str()?))
                .map_err(self.index.err())?;
            let rel = &path.as_bytes()[prefix.len()..];
            if let Some(name) = rel.strip_suffix(SUFFIX)
                && !name.is_empty()
                && !name.contains(&b'/')
            {
                names.push(name);
            }
        }
        // In path order already, but "a-b/…" sorts before "a/…" as a
        // path and after it as a name: the same order `cmp_names` gives.
        names.sort();
        Ok(names)
    }
}

/// The runs folder's paths as the index stores them: every manifest path
/// is `prefix` followed by `{run}/manifest.json`, and below `end`.
fn runs_range(dir: &Path) -> (String, String) {
    // The prefix exactly as `path_str` writes the paths below `dir`.
    let probe = path_str(&dir.join("x"));
    let prefix = probe[..probe.len() - 1].to_string();
    let end = format!("{}0", &prefix[..prefix.len() - 1]);
    (prefix, end)
}

/// Where a name of [`diff`] was found.
#[derive(Clone, Copy)]
enum Side {
    Disk,
    Index,
    Both,
}

/// Walks two sorted lists side by side, calling `f` once per distinct name
/// with where it was found.
fn diff<T>(
    disk: &[T],
    index: &[T],
    cmp: impl Fn(&T, &T) -> Ordering,
    mut f: impl FnMut(Side, &T) -> Result<()>,
) -> Result<()> {
    let (mut d, mut i) = (0, 0);
    loop {
        let side = match (disk.get(d), index.get(i)) {
            (None, None) => return Ok(()),
            (Some(_), None) => Side::Disk,
            (None, Some(_)) => Side::Index,
            (Some(a), Some(b)) => match cmp(a, b) {
                Ordering::Less => Side::Disk,
                Ordering::Greater => Side::Index,
                Ordering::Equal => Side::Both,
            },
        };
        match side {
            Side::Disk => {
                f(side, &disk[d])?;
                d += 1;
            }
            Side::Index => {
                f(side, &index[i])?;
                i += 1;
            }
            Side::Both => {
                f(side, &disk[d])?;
                d += 1;
                i += 1;
            }
        }
    }
}

/// A folder on disk that the index does not hold: a run to read if it has
/// a manifest or is named by a run id (a run folder without a manifest is
/// listed by its UUID, and checked again before every listing); any other
/// folder without one may be another tool's run still starting, so the
/// scan is incomplete.
fn new_folder(dir: &Path, name: &[u8], changes: &mut Vec<RunChange>, summary: &mut ScanSummary) {
    let folder = dir.join(OsStr::from_bytes(name));
    let run_id = std::str::from_utf8(name).is_ok_and(|n| RunId::parse(n).is_ok());
    if run_id || runs::has_manifest(&folder) {
        summary.scanned += 1;
        changes.push(RunChange::Read {
            path: folder.join(MANIFEST_FILE),
            new: true,
        });
    } else {
        summary.complete = false;
    }
}

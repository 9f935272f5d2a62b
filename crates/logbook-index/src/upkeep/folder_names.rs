//! The run folder names as the index sorts them (by their manifest paths,
//! `{name}/manifest.json`, bytewise), held in 16 bytes a run (24 with a
//! pass's stamps): read from
//! the runs folder ([`Names`]), or kept by a pass over every folder with
//! the stamps it read ([`WalkedNames`]), and walked in order beside the
//! index's rows ([`DiskCursor`]) by the scan (`scan`) and by rebuilds
//! ([`folders_in_path_order`]).

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::upkeep::sync::{runs_dir_stamp, settled};
use logbook_model::clock::Clock;
use logbook_model::error::Result;
use logbook_store::Project;
use logbook_store::runs;

/// `/manifest.json`: what follows a run folder's name in its manifest path.
pub(crate) const SUFFIX: &[u8] = b"/manifest.json";

/// Run folder names (on disk, or the index's), sorted as the index sorts
/// their manifest paths (by `{name}/manifest.json`, bytewise).
#[derive(Default, Clone)]
pub(crate) struct Names {
    /// Names that are lowercase hyphenated UUIDs (nearly all), as numbers:
    /// numeric order is their text order.
    pub(crate) uuids: Vec<u128>,
    /// Any other names.
    pub(crate) others: Vec<Box<[u8]>>,
}

/// The run folder names a pass over every run folder (`doctor`'s) read,
/// and the stamps it read of each, kept so that the index's comparison
/// after it need not list the runs folder again, nor `stat` again what the
/// pass read. They stand for the folder only while its mtime has not moved
/// since the pass began (no run folder created, removed or renamed), and
/// only when that mtime was old enough then to be trusted (see
/// `sync::settled`).
pub struct WalkedNames {
    stamp: String,
    trusted: bool,
    /// The names that are run ids (nearly all), each with the digest of
    /// its stamps ([`NO_DIGEST`] when the pass took none): 24 bytes a run.
    keyed: Vec<Keyed>,
    /// Any other names.
    others: Vec<Box<[u8]>>,
}

/// A run-id folder name as a number (its halves: 8-byte aligned, so 24
/// bytes with its digest), and the [`digest`] of the stamps a pass read.
#[derive(Clone, Copy)]
struct Keyed {
    hi: u64,
    lo: u64,
    digest: u64,
}

impl Keyed {
    fn uuid(&self) -> u128 {
        (u128::from(self.hi) << 64) | u128::from(self.lo)
    }
}

/// What a pass read of one run folder, every file a sync with
/// `Outputs::All` would `stat`: the comparison after the pass trusts
/// these instead of asking again.
#[derive(Debug, Clone, Copy)]
pub struct FolderStamps {
    /// The manifest's size and mtime (ns), as the index stamps it.
    pub manifest: (i64, i64),
    /// The outputs stamp of the outputs the manifest registers
    /// (`logbook_store::run_outputs::outputs_stamp`).
    pub outputs: i64,
}

/// No stamps were read: the comparison `stat`s the files itself.
const NO_DIGEST: u64 = 0;

/// One number for a run's three stamps, so a pass keeps 8 bytes a run
/// (never [`NO_DIGEST`]). Two different stamps share a digest with odds of
/// one in 2^64; the run would then be read at the next sync instead.
pub(crate) fn digest((size, mtime_ns): (i64, i64), outputs: i64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    (size, mtime_ns, outputs).hash(&mut h);
    h.finish().max(1)
}

impl WalkedNames {
    /// Starts a pass over the runs folder of `p`, before its listing.
    pub fn begin(p: &Project) -> WalkedNames {
        WalkedNames::begin_at(p, p.clock)
    }

    /// [`WalkedNames::begin`] by `clock`: the names stand for the folder
    /// only if its mtime is old enough by it (see `sync::settled`), so a
    /// test moves the clock instead of waiting for the mtime to age.
    pub fn begin_at(p: &Project, clock: Clock) -> WalkedNames {
        WalkedNames {
            stamp: runs_dir_stamp(p),
            trusted: settled(&p.config.agent_outputs_folder, clock),
            keyed: vec![],
            others: vec![],
        }
    }

    /// Notes one run folder the pass found (its name as listed), with the
    /// stamps it read of it, if it read them all.
    pub fn push(&mut self, name: &[u8], stamps: Option<FolderStamps>) {
        match uuid_of(name) {
            Some(u) => self.keyed.push(Keyed {
                hi: (u >> 64) as u64,
                lo: u as u64,
                digest: stamps.map_or(NO_DIGEST, |s| digest(s.manifest, s.outputs)),
            }),
            None => self.others.push(name.into()),
        }
    }

    /// Ends the pass: the names sorted as the comparison reads them.
    pub fn finish(&mut self) {
        self.keyed.sort_unstable_by_key(Keyed::uuid);
        self.keyed.shrink_to_fit();
        self.others.sort_by(|a, b| cmp_names(a, b));
    }

    /// Whether the names still stand for the runs folder of `p`.
    pub(crate) fn current(&self, p: &Project) -> bool {
        self.trusted && runs_dir_stamp(p) == self.stamp
    }
}

/// Compares `a/manifest.json` with `b/manifest.json`.
pub(crate) fn cmp_names(a: &[u8], b: &[u8]) -> Ordering {
    a.iter().chain(SUFFIX).cmp(b.iter().chain(SUFFIX))
}

/// Compares `name/manifest.json` with `rel` (a path below the runs folder).
pub(crate) fn cmp_name_rel(name: &[u8], rel: &[u8]) -> Ordering {
    name.iter().chain(SUFFIX).cmp(rel.iter())
}

pub(crate) fn uuid_text(u: u128) -> [u8; 36] {
    let mut buf = [0u8; 36];
    uuid::Uuid::from_u128(u).hyphenated().encode_lower(&mut buf);
    buf
}

/// The number a folder name stands for, if it is a run id written as a
/// lowercase hyphenated UUID: numeric order is then its text order.
fn uuid_of(name: &[u8]) -> Option<u128> {
    let u = uuid::Uuid::try_parse_ascii(name).ok()?.as_u128();
    (uuid_text(u) == name).then_some(u)
}

impl Names {
    /// The run folders of `dir`, by the store's one walk.
    pub(crate) fn read(dir: &Path) -> Result<Names> {
        let mut names = Names::default();
        for folder in runs::walk(dir)? {
            names.push(folder?.name_bytes());
        }
        names.sort();
        Ok(names)
    }

    pub(crate) fn push(&mut self, name: &[u8]) {
        match uuid_of(name) {
            Some(u) => self.uuids.push(u),
            None => self.others.push(name.into()),
        }
    }

    pub(crate) fn sort(&mut self) {
        self.uuids.sort_unstable();
        self.others.sort_by(|a, b| cmp_names(a, b));
    }
}

/// Where a [`DiskCursor`]'s names come from.
pub(crate) enum Source<'a> {
    /// The runs folder, listed now.
    Listed(Names),
    /// A pass's, with the stamps it read.
    Walked(&'a WalkedNames),
}

impl Source<'_> {
    fn uuid(&self, i: usize) -> Option<u128> {
        match self {
            Source::Listed(n) => n.uuids.get(i).copied(),
            Source::Walked(w) => w.keyed.get(i).map(Keyed::uuid),
        }
    }

    fn other(&self, i: usize) -> Option<&[u8]> {
        let others = match self {
            Source::Listed(n) => &n.others,
            Source::Walked(w) => &w.others,
        };
        others.get(i).map(|b| &b[..])
    }

    /// The digest of the stamps a pass read of the `i`th run-id folder.
    fn digest(&self, i: usize) -> Option<u64> {
        match self {
            Source::Listed(_) => None,
            Source::Walked(w) => w.keyed.get(i).map(|k| k.digest),
        }
        .filter(|&d| d != NO_DIGEST)
    }
}

/// The names of a [`Source`] in order, both lists merged.
pub(crate) struct DiskCursor<'a> {
    names: Source<'a>,
    u: usize,
    o: usize,
    text: [u8; 36],
}

impl<'a> DiskCursor<'a> {
    pub(crate) fn new(names: Source<'a>) -> DiskCursor<'a> {
        let mut c = DiskCursor {
            names,
            u: 0,
            o: 0,
            text: [0; 36],
        };
        c.load();
        c
    }

    fn load(&mut self) {
        if let Some(u) = self.names.uuid(self.u) {
            self.text = uuid_text(u);
        }
    }

    /// Which list the next name comes from: `Some(true)` the UUIDs.
    fn next_from_uuids(&self) -> Option<bool> {
        match (self.names.uuid(self.u), self.names.other(self.o)) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(_), Some(o)) => Some(cmp_names(&self.text, o) != Ordering::Greater),
        }
    }

    pub(crate) fn peek(&self) -> Option<&[u8]> {
        match self.next_from_uuids()? {
            true => Some(&self.text),
            false => self.names.other(self.o),
        }
    }

    /// The digest of the stamps a pass read of the next name's folder.
    pub(crate) fn digest(&self) -> Option<u64> {
        match self.next_from_uuids()? {
            true => self.names.digest(self.u),
            false => None,
        }
    }

    pub(crate) fn advance(&mut self) {
        match self.next_from_uuids() {
            Some(true) => {
                self.u += 1;
                self.load();
            }
            Some(false) => self.o += 1,
            None => {}
        }
    }
}

/// The run folders of `dir` in the order of their manifest paths, the
/// order of the index's `files` rows: a rebuild that inserts the rows in
/// it appends to the table's B-tree, where the folder's own order wrote
/// into random pages of a table larger than the page cache. The names are
/// held in 16 bytes a run (see [`Names`]).
pub(crate) fn folders_in_path_order(
    dir: &Path,
) -> Result<impl Iterator<Item = PathBuf> + Send + use<>> {
    let mut cursor = DiskCursor::new(Source::Listed(Names::read(dir)?));
    let dir = dir.to_path_buf();
    Ok(std::iter::from_fn(move || {
        let path = dir.join(OsStr::from_bytes(cursor.peek()?));
        cursor.advance();
        Some(path)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn uuid_names_sort_as_their_manifest_paths() {
        let mut names: Vec<Vec<u8>> = vec![
            b"0f0e0d0c-0000-4000-8000-000000000000".to_vec(),
            b"a".to_vec(),
            b"a-b".to_vec(),
            b"zz".to_vec(),
            b"ffffffff-ffff-4fff-bfff-ffffffffffff".to_vec(),
            b"00000000-0000-4000-8000-000000000001".to_vec(),
            b"0F0E0D0C-0000-4000-8000-000000000000".to_vec(),
        ];
        let dir = tempfile::tempdir().unwrap();
        for n in &names {
            fs::create_dir(dir.path().join(OsStr::from_bytes(n))).unwrap();
        }
        fs::write(dir.path().join("file"), "").unwrap();
        let mut cursor = DiskCursor::new(Source::Listed(Names::read(dir.path()).unwrap()));
        let mut got = vec![];
        while let Some(n) = cursor.peek() {
            got.push(n.to_vec());
            cursor.advance();
        }
        let mut paths: Vec<Vec<u8>> = names
            .iter_mut()
            .map(|n| [&n[..], SUFFIX].concat())
            .collect();
        paths.sort();
        let want: Vec<Vec<u8>> = paths
            .into_iter()
            .map(|p| p[..p.len() - SUFFIX.len()].to_vec())
            .collect();
        assert_eq!(got, want);
    }
}

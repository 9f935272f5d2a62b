//! `find` while the index is lost: a scan of the manifests on every core.
//!
//! A lost index (its file deleted, or never built for a project another
//! tool filled) is rebuilt in two phases, and until the first phase (the
//! rows) is in place no query can be answered from it: at a million runs
//! that took longer than reading every manifest, which is all the seed's
//! own discovery ever did. So while the index file is missing, `find`
//! answers by reading the manifests itself, on one thread per core, and
//! starts the builder program behind its answer ([`Index::build_behind`]):
//! the answer is printed when the scan ends, and the index is built in a
//! process of its own meanwhile, for the commands that follow.
//!
//! The answer is the index's exactly: every folder is read by the store's
//! one rule of the seed's scan ([`logbook_store::run::scan_folder`]: runs
//! without a manifest are `unknown`, broken manifests are skipped and
//! counted), filtered by the one predicate the index is checked against
//! ([`crate::model::query::RunMatcher::matches`]), newest first with ties
//! by id ([`crate::model::query::sort_newest_first`]'s order), and the
//! archived matches a listing of the live set leaves out are counted as
//! the index counts them. A text query (`--text`) is not answered so: the
//! index's full-text search reads the output files' words, which a scan of
//! the manifests does not, so it waits for the rows phase as before.
//!
//! Memory stays bounded whatever the number of runs: each worker keeps only
//! the best `offset + limit` matches in a heap, whole runs for a page of
//! up to [`WHOLE_KEPT`], and beyond that (a listing of every run) only
//! their sort keys, whose manifests are read again as they are printed.
//! Such a listing prints each run as it is when printed, in the place the
//! scan found it: a run rewritten in between is left out if it no longer
//! matches, and otherwise printed in its new state where its old start
//! time put it. A page of up to [`WHOLE_KEPT`] runs is the scan's own
//! reading of each run.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::Mutex;

use jiff::Timestamp;

use super::{Found, FoundRun, Page, Sink, entry, paged};
use crate::Logbook;
use crate::error::Result;
use crate::model::ids::RunId;
use crate::model::query::{ArchiveScope, RunMatcher, RunQuery};
use crate::model::run::Run;
use logbook_index::Index;
use logbook_store::Project;
use logbook_store::run::{Scanned, scan_folder};
use logbook_store::runs::RunFolder;

/// From how many run folders a lost index is answered by a scan: below it,
/// the rows phase takes well under a second and answers itself, as it
/// always did (no builder process is started for a small project).
const SCAN_FROM: u64 = 2_000;

fn scan_from() -> u64 {
    #[cfg(feature = "testing")]
    if let Some(n) = logbook_store::testing::scan_from() {
        return n;
    }
    SCAN_FROM
}

/// The largest page (`offset + limit`) whose runs a worker keeps whole
/// (4,096 whole manifests of a few KiB: a few MiB per worker);
/// past it only their sort keys (see the module documentation).
const WHOLE_KEPT: usize = 4_096;

/// Run folders a worker draws from the walk at a time: one lock of the
/// walk for many folders.
const DRAW: usize = 64;

/// One thread per core, as the index's rebuild reads.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// `find` answered from the manifests when the index file is missing and
/// the project is large enough for that to be faster than its rows phase
/// (see the module documentation); the builder is started behind the
/// answer. `None`: the index answers (it is there, the query has text, no
/// builder program is registered to build it behind, or the project is
/// small).
pub(crate) fn answer_while_lost(
    p: &Logbook,
    query: &RunQuery,
    now: Timestamp,
    sink: Option<Sink<'_>>,
) -> Result<Option<Page>> {
    if query.text.is_some()
        || p.text_builder.is_none()
        || !Project::exists(p)
        || logbook_store::index_file::exists(&p.index_path())
    {
        return Ok(None);
    }
    let query = paged(query);
    let scan = scan(p, &query, cores())?;
    if scan.folders < scan_from() {
        return Ok(None);
    }
    // Before the answer is printed: a reader of a pipe may take its time.
    // The answer stands without it (a read-only project): the next command
    // scans again, or builds the index as before where it can.
    if let Err(e) = Index::build_behind(p) {
        p.notices.push(format!(
            "could not start building the index behind this answer ({e}); it was read from the manifests"
        ));
    }
    scan.page(p, &query, now, sink).map(Some)
}

/// `find` by a scan of every manifest on `workers` threads, whatever the
/// index holds: what [`answer_while_lost`] answers, for the tests and the
/// benchmark that compare it with the index (one worker is the seed's own
/// scan, with bounded memory). The query's text, if any, is matched as a
/// substring of the manifest's strings (see
/// [`crate::model::query::RunMatcher::matches`]), not by the index's
/// full-text search.
pub fn find_by_scan(
    p: &Logbook,
    query: &RunQuery,
    workers: usize,
    now: Option<Timestamp>,
    sink: Option<Sink<'_>>,
) -> Result<Page> {
    let query = paged(query);
    let now = now.unwrap_or_else(|| p.clock.now());
    scan(p, &query, workers.max(1))?.page(p, &query, now, sink)
}

/// What a matching run is kept by: its place in `find`'s order, and the
/// run itself or where to read it again.
struct Kept {
    /// `started_at` as the index orders it ([`crate::model::run::Manifest::start_order`]).
    order: Option<i64>,
    id: RunId,
    run: Place,
}

/// A kept run, whole or as the folder to read it again from.
enum Place {
    Whole(Box<Run>),
    /// In the archive or not, and its folder's name when it is not the id
    /// as written (another tool's upper-case folder).
    Folder {
        archived: bool,
        name: Option<Box<str>>,
    },
}

impl Kept {
    /// Newest first, then by id: greater is earlier in `find`'s order.
    fn rank(&self) -> (Option<i64>, Reverse<&RunId>) {
        (self.order, Reverse(&self.id))
    }
}

impl PartialEq for Kept {
    fn eq(&self, other: &Self) -> bool {
        self.rank() == other.rank()
    }
}

impl Eq for Kept {}

impl PartialOrd for Kept {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Kept {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

/// What a scan found: its best matches, and the counts a page says.
#[derive(Default)]
struct Tally {
    /// The best `reach` matches, worst on top.
    kept: BinaryHeap<Reverse<Kept>>,
    /// Matches in the query's scope.
    matched: u64,
    /// Matches in the archive a listing of the live set leaves out.
    archived: u64,
    /// Broken manifests, live and archived, as the index counts them.
    corrupt: u64,
    /// Run folders read.
    folders: u64,
}

/// How one scan keeps its matches.
struct Keeping {
    matcher: RunMatcher,
    scope: ArchiveScope,
    /// `offset + limit`: how many of the best matches a page needs.
    reach: usize,
    /// Whether runs are kept whole (`reach` ≤ [`WHOLE_KEPT`]).
    whole: bool,
}

impl Tally {
    /// Counts and perhaps keeps what one folder held.
    fn add(&mut self, k: &Keeping, name: &str, found: Option<Scanned>, archived: bool) {
        self.folders += 1;
        let run = match found {
            Some(Scanned::Run(run)) => run,
            Some(Scanned::Corrupt(_)) => {
                self.corrupt += 1;
                return;
            }
            None => return,
        };
        let in_scope = match k.scope {
            ArchiveScope::Live => !archived,
            ArchiveScope::Archived => archived,
            ArchiveScope::All => true,
        };
        let counted_aside = k.scope == ArchiveScope::Live && archived;
        if !(in_scope || counted_aside) || !k.matcher.matches(&run.manifest) {
            return;
        }
        if counted_aside {
            self.archived += 1;
            return;
        }
        self.matched += 1;
        let (order, id) = (run.manifest.start_order(), run.id.clone());
        let kept = Kept {
            run: match k.whole {
                true => Place::Whole(run),
                false => Place::Folder {
                    archived,
                    name: (name != id.as_str()).then(|| name.into()),
                },
            },
            order,
            id,
        };
        self.keep(kept, k.reach);
    }

    /// Keeps `kept` if it is among the best `reach`.
    fn keep(&mut self, kept: Kept, reach: usize) {
        if self.kept.len() < reach {
            self.kept.push(Reverse(kept));
        } else if let Some(mut worst) = self.kept.peek_mut()
            && kept > worst.0
        {
            *worst = Reverse(kept);
        }
    }

    /// Another worker's tally added to this one.
    fn merge(&mut self, other: Tally, reach: usize) {
        self.matched += other.matched;
        self.archived += other.archived;
        self.corrupt += other.corrupt;
        self.folders += other.folders;
        for Reverse(kept) in other.kept {
            self.keep(kept, reach);
        }
    }
}

/// The run folders of the live set and the archive, each with whether it
/// is archived.
type Folders = Box<dyn Iterator<Item = (Result<RunFolder>, bool)> + Send>;

/// Reads every run folder, live and archived, on `workers` threads, and
/// tallies them for `query` (already paged).
fn scan(p: &Logbook, query: &RunQuery, workers: usize) -> Result<Scan> {
    let reach = query
        .offset
        .saturating_add(query.limit.unwrap_or(usize::MAX));
    let keeping = Keeping {
        matcher: query.matcher()?,
        scope: query.archive,
        reach,
        whole: reach <= WHOLE_KEPT,
    };
    let live = logbook_store::runs::walk(&p.config.agent_outputs_folder)?;
    let archive = logbook_store::runs::walk(&p.config.archive_folder)?;
    let folders: Folders = Box::new(live.map(|f| (f, false)).chain(archive.map(|f| (f, true))));
    let folders = Mutex::new(folders);
    let tallies: Vec<Result<Tally>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..workers)
            .map(|_| scope.spawn(|| read_until_done(&folders, &keeping)))
            .collect();
        workers
            .into_iter()
            // A worker that panicked must not leave its runs out unsaid.
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut tally = Tally::default();
    for t in tallies {
        tally.merge(t?, reach);
    }
    Ok(Scan {
        folders: tally.folders,
        tally,
        matcher: keeping.matcher,
    })
}

/// One worker: draws folders from the walk and reads them until none is
/// left; the first entry the walk could not read stops it with its error.
fn read_until_done(folders: &Mutex<Folders>, k: &Keeping) -> Result<Tally> {
    let mut tally = Tally::default();
    let mut batch = Vec::with_capacity(DRAW);
    loop {
        batch.clear();
        {
            let mut walk = folders.lock().unwrap_or_else(|e| e.into_inner());
            batch.extend(walk.by_ref().take(DRAW));
        }
        if batch.is_empty() {
            return Ok(tally);
        }
        for (folder, archived) in batch.drain(..) {
            let folder = folder?;
            let name = folder.name.to_string_lossy().into_owned();
            let found = scan_folder(&name, folder.path);
            tally.add(k, &name, found, archived);
        }
    }
}

/// A finished scan, ready to be paged.
struct Scan {
    /// Run folders read, live and archived.
    folders: u64,
    tally: Tally,
    matcher: RunMatcher,
}

impl Scan {
    /// The page `query` asks for, its runs handed to `sink` when there is
    /// one (display names for `now`), as the index's find returns it.
    fn page(
        self,
        p: &Logbook,
        query: &RunQuery,
        now: Timestamp,
        mut sink: Option<Sink<'_>>,
    ) -> Result<Page> {
        let Tally {
            kept,
            matched,
            archived,
            corrupt,
            ..
        } = self.tally;
        let mut best: Vec<Kept> = kept.into_iter().map(|Reverse(k)| k).collect();
        best.sort_by(|a, b| b.cmp(a));
        let mut page = Page {
            total: matched,
            exact: true,
            skipped: corrupt,
            archived,
            ..Page::default()
        };
        let limit = query.limit.unwrap_or(usize::MAX);
        for kept in best.into_iter().skip(query.offset).take(limit) {
            let Some(run) = reread(p, &self.matcher, kept) else {
                // Changed since the scan so that it no longer matches.
                page.total = page.total.saturating_sub(1);
                continue;
            };
            page.shown += 1;
            match sink.as_mut() {
                Some(sink) => {
                    let row = FoundRun {
                        entry: entry(&run, now),
                        origin: None,
                        snippet: None,
                    };
                    if sink(row).is_break() {
                        page.total = (query.offset + page.shown) as u64;
                        page.archived = 0;
                        return Ok(page);
                    }
                }
                None => page.hits.push(Found {
                    run,
                    snippet: None,
                    origin: None,
                }),
            }
        }
        Ok(page)
    }
}

/// The run `kept` stands for: itself when kept whole, else its manifest
/// read again; `None` when that no longer matches (or is gone).
fn reread(p: &Logbook, matcher: &RunMatcher, kept: Kept) -> Option<Run> {
    let (archived, name) = match kept.run {
        Place::Whole(run) => return Some(*run),
        Place::Folder { archived, name } => (archived, name),
    };
    let dir = match archived {
        true => &p.config.archive_folder,
        false => &p.config.agent_outputs_folder,
    };
    let name = name.map_or_else(|| kept.id.as_str().to_string(), String::from);
    match scan_folder(&name, dir.join(&name)) {
        Some(Scanned::Run(run)) if matcher.matches(&run.manifest) => Some(*run),
        _ => None,
    }
}

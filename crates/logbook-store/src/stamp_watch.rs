//! Stamps a long-lived process keeps fresh without asking the file system
//! each time: the MCP server answers `find_runs` many times a second, and
//! every running run it may show is checked against its manifest first
//! (another program may finish it in place). With a [`StampWatch`], a
//! manifest's stamp is taken once with its folder watched, and taken again
//! only once the watch saw its folder change; a drain of the watch's
//! events at the start of each check sees every change finished before
//! the check began, so the answer is the one a fresh `stat` would give.
//! Where there is no watch (not Linux, a refused watch), every stamp is
//! taken afresh, as the CLI does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::stamp::Stamp;
use crate::sys::FolderWatch;

/// How many folders at most are watched: past it, the ones least recently
/// asked about are let go (each watch costs the kernel about a kilobyte).
const MAX_WATCHED: usize = 100_000;

/// Stamps of files kept fresh by watching their folders (see the module).
pub struct StampWatch {
    watch: FolderWatch,
    state: Mutex<State>,
}

impl std::fmt::Debug for StampWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StampWatch").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// Watched folders: their watch, and per file the stamp taken while the
    /// watch was in place (the folder is let go when it changes).
    folders: HashMap<PathBuf, Folder>,
    /// A folder's path by its watch.
    by_watch: HashMap<i32, PathBuf>,
    /// Checks so far: when a folder was last asked about.
    checks: u64,
}

struct Folder {
    wd: i32,
    stamps: HashMap<PathBuf, Option<Stamp>>,
    asked: u64,
}

impl StampWatch {
    /// A watch, or `None` where the system has none to give.
    pub fn new() -> Option<StampWatch> {
        Some(StampWatch {
            watch: FolderWatch::new()?,
            state: Mutex::new(State::default()),
        })
    }

    /// The stamps of `files` now, as `probe` takes one: from the watch
    /// where no change to a file's folder was seen since it was taken,
    /// else from `probe`, with the folder watched from then on.
    pub fn stamps(
        &self,
        files: &[&Path],
        probe: &dyn Fn(&Path) -> Option<Stamp>,
    ) -> Vec<Option<Stamp>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.drain(&mut state);
        state.checks += 1;
        let now = state.checks;
        let answers = files
            .iter()
            .map(|file| self.stamp_of(&mut state, file, now, probe))
            .collect();
        self.let_go(&mut state);
        answers
    }

    /// Lets go of the folders that changed (or of all, when events were
    /// lost): the next check takes their stamps afresh, watching them
    /// again first, so a folder removed and made again is watched anew.
    fn drain(&self, state: &mut State) {
        let mut lost = false;
        let mut changed = vec![];
        self.watch.drain(|wd| match wd {
            Some(wd) => changed.push(wd),
            None => lost = true,
        });
        if lost {
            changed = state.by_watch.keys().copied().collect();
        }
        for wd in changed {
            if let Some(path) = state.by_watch.remove(&wd) {
                state.folders.remove(&path);
                self.watch.remove(wd);
            }
        }
    }

    fn stamp_of(
        &self,
        state: &mut State,
        file: &Path,
        now: u64,
        probe: &dyn Fn(&Path) -> Option<Stamp>,
    ) -> Option<Stamp> {
        let Some(dir) = file.parent() else {
            return probe(file);
        };
        if let Some(folder) = state.folders.get_mut(dir) {
            folder.asked = now;
            if let Some(stamp) = folder.stamps.get(file) {
                return *stamp;
            }
        } else {
            // Watched before the stamp is taken: a change after it is seen.
            let Some(wd) = self.watch.add(dir) else {
                return probe(file);
            };
            // A folder reached by two paths shares one watch: the older
            // path's entry goes.
            if let Some(old) = state.by_watch.insert(wd, dir.to_path_buf()) {
                state.folders.remove(&old);
            }
            state.folders.insert(
                dir.to_path_buf(),
                Folder {
                    wd,
                    stamps: HashMap::new(),
                    asked: now,
                },
            );
        }
        let stamp = probe(file);
        if let Some(folder) = state.folders.get_mut(dir) {
            folder.stamps.insert(file.to_path_buf(), stamp);
        }
        stamp
    }

    /// Lets go of the folders least recently asked about, past
    /// [`MAX_WATCHED`] (a finished run is no longer asked about).
    fn let_go(&self, state: &mut State) {
        if state.folders.len() <= MAX_WATCHED {
            return;
        }
        let mut asked: Vec<u64> = state.folders.values().map(|f| f.asked).collect();
        let cut = asked.len() - MAX_WATCHED / 2;
        let (_, at, _) = asked.select_nth_unstable(cut);
        let at = *at;
        let gone: Vec<PathBuf> = state
            .folders
            .iter()
            .filter(|(_, f)| f.asked < at)
            .map(|(p, _)| p.clone())
            .collect();
        for path in gone {
            if let Some(folder) = state.folders.remove(&path) {
                self.watch.remove(folder.wd);
                state.by_watch.remove(&folder.wd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_stamp_is_taken_again_only_once_its_folder_changed() {
        let Some(w) = StampWatch::new() else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let manifest = run.join("manifest.json");
        std::fs::write(&manifest, "{}").unwrap();
        let probes = Cell::new(0);
        let probe = |p: &Path| {
            probes.set(probes.get() + 1);
            crate::stamp::of_path(p)
        };
        let first = w.stamps(&[&manifest], &probe);
        assert_eq!(first, vec![crate::stamp::of_path(&manifest)]);
        assert_eq!(w.stamps(&[&manifest], &probe), first);
        assert_eq!(probes.get(), 1, "the second answer came from the watch");
        // Another program finishes the run in place: the very next check
        // sees it.
        let tmp = run.join("manifest.json.tmp");
        std::fs::write(&tmp, "{\"done\": true}").unwrap();
        std::fs::rename(&tmp, &manifest).unwrap();
        let after = w.stamps(&[&manifest], &probe);
        assert_eq!(after, vec![crate::stamp::of_path(&manifest)]);
        assert_ne!(after, first);
        assert_eq!(probes.get(), 2);
        // A folder removed and made again is watched afresh.
        std::fs::remove_dir_all(&run).unwrap();
        std::fs::create_dir(&run).unwrap();
        std::fs::write(&manifest, "{\"again\": 1}").unwrap();
        assert_eq!(
            w.stamps(&[&manifest], &probe),
            vec![crate::stamp::of_path(&manifest)]
        );
    }
}

//! Run folders and their `manifest.json` on disk. The caller holds the run's
//! lock ([`RunId::lock_name`]) for every write.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::Project;
use logbook_model::CorruptFile;
use logbook_model::error::{Error, Next, Result, Step};
use logbook_model::ids::RunId;
use logbook_model::query::ArchiveScope;
use logbook_model::run::{MANIFEST_FILE, Manifest, Run, parse_manifest};
use logbook_model::text;

/// What a scan of `agent_outputs_folder` found.
#[derive(Debug, Default)]
pub struct ScanResult {
    /// Every valid run, in folder-name order.
    pub runs: Vec<Run>,
    /// Manifests that could not be read or are invalid; never fatal.
    pub corrupt: Vec<CorruptFile>,
}

/// The folder a new run `id` gets (lowercase, as Logbook creates it).
pub fn folder(p: &Project, id: &RunId) -> PathBuf {
    id.folder(&p.config.agent_outputs_folder)
}

/// The folder of existing run `id` whatever the case of its name on disk
/// (another tool may have made `A3F2C9D1-…`), in the live set or else in
/// the archive; the lowercase live path when there is none. Only a miss
/// of the lowercase name costs a folder listing.
pub fn locate(p: &Project, id: &RunId) -> Result<PathBuf> {
    let live = locate_live(p, id)?;
    if live.is_dir() {
        return Ok(live);
    }
    Ok(crate::archive::locate(p, id)?.unwrap_or(live))
}

/// [`locate`] in the live set only.
fn locate_live(p: &Project, id: &RunId) -> Result<PathBuf> {
    let lower = folder(p, id);
    Ok(find_folder(&p.config.agent_outputs_folder, id)?.unwrap_or(lower))
}

/// The folder of run `id` in `dir` (the live set or the archive) whatever
/// the case of its name: the lowercase one when it is there, else the
/// first by name, as a sorted listing would find it, when several
/// spellings are there.
pub(crate) fn find_folder(dir: &Path, id: &RunId) -> Result<Option<PathBuf>> {
    let lower = id.folder(dir);
    if lower.is_dir() {
        return Ok(Some(lower));
    }
    let mut found: Option<crate::runs::RunFolder> = None;
    for folder in crate::runs::walk(dir)? {
        let folder = folder?;
        if folder.name.eq_ignore_ascii_case(id.as_str())
            && found.as_ref().is_none_or(|f| folder.name < f.name)
        {
            found = Some(folder);
        }
    }
    Ok(found.map(|f| f.path))
}

/// The ids of the run folders whose names start with `prefix` (lowercase),
/// whatever their case: the files' answer when the index cannot give one. A
/// folder without a manifest is a run too (listed by its UUID as unknown),
/// so the prefix a listing shows names it.
pub fn ids_with_prefix(p: &Project, prefix: &str) -> Result<Vec<RunId>> {
    let mut ids = vec![];
    let live = crate::runs::walk(&p.config.agent_outputs_folder)?;
    for folder in live.chain(crate::runs::walk(&p.config.archive_folder)?) {
        let folder = folder?;
        let starts = folder
            .name_bytes()
            .get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()));
        ids.extend(starts.then(|| folder.id()).flatten());
    }
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Whether run `id` has a folder (with a manifest or not, live or
/// archived): an index row whose folder was removed since is no run.
pub fn exists(p: &Project, id: &RunId) -> bool {
    locate(p, id).is_ok_and(|f| f.is_dir())
}

/// Reads run `id`; a missing folder or manifest is [`Error::NotFound`].
pub fn load(p: &Project, id: &RunId) -> Result<Run> {
    Ok(load_raw(p, id)?.0)
}

/// Reads run `id` and the manifest's raw JSON, which a rewrite keeps the key
/// order and unknown keys of.
pub fn load_raw(p: &Project, id: &RunId) -> Result<(Run, Value)> {
    // The folder as Logbook names it is read straight away; only a miss
    // looks for it another way (`locate`'s case-blind search, which would
    // `stat` the folder first on every write).
    let named = folder(p, id);
    let (folder, text) = match crate::read_optional(&named.join(MANIFEST_FILE), "manifest")? {
        Some(text) => (named, Some(text)),
        None => match locate(p, id)? {
            found if found == named => (named, None),
            found => {
                let text = crate::read_optional(&found.join(MANIFEST_FILE), "manifest")?;
                (found, text)
            }
        },
    };
    let path = folder.join(MANIFEST_FILE);
    let Some(text) = text else {
        if folder.is_dir() {
            return Err(Error::RunWithoutManifest {
                id: id.to_string(),
                folder,
            });
        }
        // A deleted run is told as such, with when (its tombstone).
        if let Some((tombstone, t)) = crate::archive::read_tombstone(p, id)? {
            return Err(Error::RunDeleted {
                id: id.to_string(),
                deleted_at: t.deleted_at,
                by: t.by,
                tombstone,
            });
        }
        return Err(Error::not_found(
            "run",
            id.as_str(),
            Next::of(Step::find_runs(), " lists the runs there are"),
        ));
    };
    let (manifest, raw) = parse_manifest(&path, &text)?;
    Ok((
        Run {
            id: id.clone(),
            folder,
            manifest,
        },
        raw,
    ))
}

/// Creates run `id`'s folder (which must not exist yet) and its manifest.
pub fn create(p: &Project, id: &RunId, manifest: &Manifest) -> Result<PathBuf> {
    let parent = &p.config.agent_outputs_folder;
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let folder = folder(p, id);
    std::fs::create_dir(&folder).map_err(|e| Error::io(&folder, e))?;
    let path = folder.join(MANIFEST_FILE);
    crate::write_atomic(&path, text::to_json(&path, manifest, None)?.as_bytes())?;
    Ok(path)
}

/// Writes `run`'s manifest back over the file's `original` value, changing
/// only what differs from the manifest as it was `read` (its value, taken
/// before the change): key order, unknown keys and spellings stay.
pub fn save(run: &Run, original: &Value, read: &Value) -> Result<()> {
    let path = run.manifest_file();
    let placed = logbook_model::run::raw_in_seed_order(original, &run.manifest);
    let original = placed.as_ref().unwrap_or(original);
    crate::write_atomic(
        &path,
        text::to_json_over(&path, &run.manifest, original, read)?.as_bytes(),
    )
}

/// The run a folder named by a run id but holding no `manifest.json`
/// stands for (seed 000 lists it by its UUID; see [`Manifest::absent`]),
/// started when the folder last changed; `None` when the folder is gone or
/// not named by a run id (such folders are not runs).
pub fn without_manifest(folder: &Path) -> Option<Run> {
    let id = RunId::parse(&folder.file_name()?.to_string_lossy()).ok()?;
    let m = std::fs::metadata(folder).ok().filter(|m| m.is_dir())?;
    let seen = m
        .modified()
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    Some(Run {
        manifest: Manifest::absent(&id, &logbook_model::clock::format(seen)),
        id,
        folder: folder.to_path_buf(),
    })
}

/// What one run folder held, read as a scan reads it ([`scan_folder`]).
#[derive(Debug)]
pub enum Scanned {
    /// A run: its manifest parsed, or a folder named by a run id without
    /// one ([`without_manifest`]). Boxed: a scan moves it about.
    Run(Box<Run>),
    /// A manifest that could not be read or is invalid (or one in a folder
    /// not named by a run id): listings skip it and count it.
    Corrupt(CorruptFile),
}

/// Reads the run folder `folder` called `name` as the seed's discovery
/// does: the one rule of [`scan_in`], which the parallel scan of `find`
/// shares, so the two never differ on a folder. `None`: no run is there (a
/// folder without a manifest not named by a run id, or gone).
pub fn scan_folder(name: &str, folder: PathBuf) -> Option<Scanned> {
    let path = folder.join(MANIFEST_FILE);
    let text = match crate::read_optional(&path, "manifest") {
        Ok(Some(t)) => t,
        Ok(None) => return without_manifest(&folder).map(|run| Scanned::Run(Box::new(run))),
        Err(e) => {
            return Some(Scanned::Corrupt(CorruptFile {
                path,
                reason: e.to_string(),
            }));
        }
    };
    let Ok(id) = RunId::parse(name) else {
        return Some(Scanned::Corrupt(CorruptFile {
            path,
            reason: format!("folder name {name:?} is not a run id (a UUID)"),
        }));
    };
    Some(match parse_manifest(&path, &text) {
        Ok((manifest, _)) => Scanned::Run(Box::new(Run {
            id,
            folder,
            manifest,
        })),
        Err(e) => Scanned::Corrupt(CorruptFile {
            path,
            reason: e.to_string(),
        }),
    })
}

/// Reads and parses every manifest under `agent_outputs_folder` (the seed's
/// discovery algorithm). Folders named by a run id without a manifest are
/// runs of status `unknown` ([`without_manifest`]), other folders without
/// one are not runs; broken manifests are reported in
/// [`ScanResult::corrupt`].
pub fn scan(p: &Project) -> Result<ScanResult> {
    scan_in(p, ArchiveScope::Live)
}

/// [`scan`] of the live set, the archive (`archive_folder`), or both.
pub fn scan_in(p: &Project, scope: ArchiveScope) -> Result<ScanResult> {
    let dirs: &[&Path] = match scope {
        ArchiveScope::Live => &[&p.config.agent_outputs_folder],
        ArchiveScope::Archived => &[&p.config.archive_folder],
        ArchiveScope::All => &[&p.config.agent_outputs_folder, &p.config.archive_folder],
    };
    let mut result = ScanResult::default();
    let mut folders = vec![];
    for dir in dirs {
        for f in crate::runs::walk(dir)? {
            let f = f?;
            folders.push((f.name.to_string_lossy().into_owned(), f.path));
        }
    }
    folders.sort();
    for (name, folder) in folders {
        match scan_folder(&name, folder) {
            Some(Scanned::Run(run)) => result.runs.push(*run),
            Some(Scanned::Corrupt(file)) => result.corrupt.push(file),
            None => {}
        }
    }
    Ok(result)
}

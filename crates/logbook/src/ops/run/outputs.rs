//! A run's output files: registering one, and reading one for the faces,
//! both through the same path rules (inside the run folder, symlinks
//! resolved, a regular file).

use std::path::{Component, Path, PathBuf};

use serde_json::Map;

use super::resolve;
use super::write::{finished, required, update};
use crate::clock;
use crate::error::{Error, Next, Result, Step};
use crate::model::ids::RunId;
use crate::model::run::{
    MANIFEST_FILE, OutputRecord, OutputType, Run, RunStatus, normalize_output_path,
};
use crate::store::run_files::{self, Lead};
use crate::store::{self, Project};

/// Registers (or re-registers) output `file` of run `id`. The file must be a
/// regular file inside the run folder; it is recorded under its real path
/// there (symlinks resolved), so registering it again under any alias
/// updates its one record's type and description and keeps its first
/// `created_at`.
pub fn register_output(
    p: &Project,
    id: &str,
    file: &str,
    output_type: OutputType,
    description: &str,
) -> Result<(Run, OutputRecord)> {
    if let OutputType::Other(t) = &output_type {
        return Err(Error::invalid(
            "type",
            t.as_str(),
            format!("expected one of {}", OutputType::KNOWN.join(", ")),
        ));
    }
    let rel = normalize_output_path(file)?;
    let description = required("description", description)?;
    let id = resolve(p, id)?;
    update(p, &id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(finished(run, true));
        }
        let (rel, _) = canonical_output(&run.folder, &rel, file)?;
        let now = clock::now_string();
        let record = match run.manifest.outputs.iter_mut().find(|o| o.file == rel) {
            Some(existing) => {
                existing.output_type = output_type;
                existing.description = description;
                if existing.created_at.is_empty() {
                    existing.created_at = now;
                }
                existing.clone()
            }
            None => {
                let record = OutputRecord {
                    file: rel.clone(),
                    output_type,
                    description,
                    created_at: now,
                    extra: Map::new(),
                };
                run.manifest.outputs.push(record.clone());
                record
            }
        };
        Ok(record)
    })
}

/// Where output `given` (`rel` once normalised) really is: its path
/// relative to the run's real folder with every symlink resolved, so the
/// aliases of one file (`sub/a.md`, `self/sub/a.md`, `up/<id>/sub/a.md`)
/// make one record. Refuses a path that does not exist, is not the run's
/// own ([`run_files::Unconfined`]: a symlink leading outside the run
/// folder, a hard link), or is not a regular file (a folder, FIFO, device).
fn canonical_output(folder: &Path, rel: &str, given: &str) -> Result<(String, PathBuf)> {
    let target = || rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c));
    let (real, path) = match run_files::lead(folder, rel).map_err(|e| Error::io(target(), e))? {
        Lead::File { rel, path } => (rel, path),
        Lead::Missing => {
            return Err(Error::invalid(
                "output file",
                given,
                format!(
                    "{} does not exist; write the file into the run folder first, then register it",
                    target().display()
                ),
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
    let real = normalize_output_path(&real).map_err(|e| match e {
        Error::Invalid { value, reason, .. } if value != given => Error::invalid(
            "output file",
            given,
            format!("leads to {value:?}, which {reason}"),
        ),
        e => e,
    })?;
    Ok((real, path))
}

/// The most a face reads of one run file into memory ([`read_output`]).
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// A run's file as [`read_output`] returns it.
#[derive(Debug, Clone)]
pub struct OutputFile {
    /// The run it belongs to.
    pub run: RunId,
    /// Its path relative to the run folder (symlinks resolved).
    pub file: String,
    /// Its absolute path.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Reads file `file` of run `id` with the path rules of
/// [`register_output`]: relative, no `..`, no symlink leading out of the
/// run folder, a regular file (not the manifest), at most [`READ_LIMIT`]
/// bytes. Faces that serve run files (MCP resources, the web viewer) read
/// through this, so the rules live in one place.
pub fn read_output(p: &Project, id: &str, file: &str) -> Result<OutputFile> {
    use std::io::Read as _;
    let id = resolve(p, id)?;
    let not_found = |rel: &str| {
        Error::not_found(
            "run file",
            format!("{id}/{rel}"),
            Next::of(
                Step::ShowRun {
                    id: Some(id.to_string()),
                },
                " lists the run's outputs",
            ),
        )
    };
    // The manifest is the run itself, not one of its files: hidden (not
    // refused as a path), as the viewer's tree hides it.
    let is_manifest = Path::new(file)
        .components()
        .filter(|c| *c != Component::CurDir)
        .eq([Component::Normal(MANIFEST_FILE.as_ref())]);
    if is_manifest {
        return Err(not_found(MANIFEST_FILE));
    }
    let rel = normalize_output_path(file)?;
    let folder = store::run::folder(p, &id);
    let (rel, path) = canonical_output(&folder, &rel, file)?;
    let mut reader =
        store::fs::open_regular(&path, "run file", READ_LIMIT)?.ok_or_else(|| not_found(&rel))?;
    // Asked again of the open file: a link made after the check is seen.
    if let Some(u) = reader
        .get_ref()
        .metadata()
        .ok()
        .and_then(|m| run_files::Unconfined::of_file(&m))
    {
        return Err(Error::invalid("run file", file, u.explain()));
    }
    let mut bytes = vec![];
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&path, e))?;
    Ok(OutputFile {
        run: id,
        file: rel,
        path,
        bytes,
    })
}

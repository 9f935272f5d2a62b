//! A run's output files: registering one, and reading one for the faces,
//! both through the same path rules (inside the run folder, symlinks
//! resolved, a regular file).

use std::path::{Path, PathBuf};

use serde_json::Map;

use super::resolve;
use super::write::{finished, required, update};
use crate::clock;
use crate::error::{Error, Result};
use crate::model::ids::RunId;
use crate::model::run::{OutputRecord, OutputType, Run, RunStatus, normalize_output_path};
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
        let rel = canonical_output(&run.folder, &rel, file)?;
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
/// make one record. Refuses a path that does not exist, leads outside the
/// run folder, or is not a regular file (a folder, FIFO, device).
fn canonical_output(folder: &Path, rel: &str, given: &str) -> Result<String> {
    if plain_file(folder, rel) {
        return Ok(rel.to_string());
    }
    let real_folder = folder.canonicalize().map_err(|e| Error::io(folder, e))?;
    let target = rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c));
    let real = match target.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::invalid(
                "output file",
                given,
                format!(
                    "{} does not exist; write the file into the run folder first, then register it",
                    target.display()
                ),
            ));
        }
        Err(e) => return Err(Error::io(&target, e)),
    };
    let inside = match real.strip_prefix(&real_folder) {
        Ok(inside) if !inside.as_os_str().is_empty() => inside,
        _ => {
            return Err(Error::invalid(
                "output file",
                given,
                "leads outside the run folder (through a symlink); copy the file into the run folder instead",
            ));
        }
    };
    let meta = std::fs::metadata(&real).map_err(|e| Error::io(&real, e))?;
    if !meta.is_file() {
        return Err(Error::NotARegularFile {
            what: "output file",
            path: target,
            found: store::fs::describe_file_type(meta.file_type()),
        });
    }
    let mut parts = vec![];
    for c in inside.components() {
        let Some(part) = c.as_os_str().to_str() else {
            return Err(Error::invalid(
                "output file",
                given,
                "its real name is not UTF-8 text; rename the file",
            ));
        };
        parts.push(part);
    }
    // The real name passes the same rules as the one given (a symlink may
    // lead to `manifest.json`, or to a name with a newline).
    normalize_output_path(&parts.join("/")).map_err(|e| match e {
        Error::Invalid { value, reason, .. } if value != given => Error::invalid(
            "output file",
            given,
            format!("leads to {value:?}, which {reason}"),
        ),
        e => e,
    })
}

/// Whether `rel` reaches a regular file from `folder` through folders
/// that are not symlinks: then it already is its own real path, and
/// resolving both paths (a `readlink` for every component of each, a dozen
/// system calls on every registration) would only say so again. Anything
/// else, a symlink on the way included, takes the resolving path.
fn plain_file(folder: &Path, rel: &str) -> bool {
    let mut path = folder.to_path_buf();
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        path.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return false;
        };
        let wanted = if parts.peek().is_some() {
            meta.is_dir()
        } else {
            meta.is_file()
        };
        if !wanted {
            return false;
        }
    }
    true
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
    let rel = normalize_output_path(file)?;
    let id = resolve(p, id)?;
    let folder = store::run::folder(p, &id);
    let rel = canonical_output(&folder, &rel, file)?;
    let path = rel.split('/').fold(folder, |p, c| p.join(c));
    let mut reader = store::fs::open_regular(&path, "run file", READ_LIMIT)?.ok_or_else(|| {
        Error::not_found(
            "run file",
            format!("{id}/{rel}"),
            "`logbook run show ID` lists the run's outputs",
        )
    })?;
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

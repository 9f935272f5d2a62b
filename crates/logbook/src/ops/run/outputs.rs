//! A run's output files: registering one, and reading one for the faces,
//! both through the path rules of [`logbook_store::run_files`] (inside the
//! run folder, symlinks resolved, a regular file).

use crate::Logbook;
use std::path::PathBuf;

use serde_json::Map;

use super::resolve;
use super::write::{finished, required, update};
use crate::error::{Error, Next, Result, Step};
use crate::model::ids::RunId;
use crate::model::run::{MANIFEST_FILE, OutputRecord, OutputType, Run, RunStatus};
use logbook_store::run_files::{confine, names_manifest, normalize, read_own};

/// Registers (or re-registers) output `file` of run `id`. The file must be a
/// regular file inside the run folder; it is recorded under its real path
/// there (symlinks resolved), so registering it again under any alias
/// updates its one record's type and description and keeps its first
/// `created_at`.
pub fn register_output(
    p: &Logbook,
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
    let rel = normalize(file)?;
    let description = required("description", description)?;
    let id = resolve(p, id)?;
    update(p, &id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(finished(run, true));
        }
        let (rel, _) = confine(&run.folder, &rel, file)?;
        let now = p.clock.now_string();
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
pub fn read_output(p: &Logbook, id: &str, file: &str) -> Result<OutputFile> {
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
    if names_manifest(file) {
        return Err(not_found(MANIFEST_FILE));
    }
    let rel = normalize(file)?;
    // Live or archived: an archived run's files stay readable.
    let folder = logbook_store::run::locate(p, &id)?;
    let (rel, path) = confine(&folder, &rel, file)?;
    let bytes = read_own(&path, file, READ_LIMIT)?.ok_or_else(|| not_found(&rel))?;
    Ok(OutputFile {
        run: id,
        file: rel,
        path,
        bytes,
    })
}

//! What the index holds of finished runs, for a pass over every run folder
//! that trusts it while a manifest's stamp is unchanged (`doctor`): the
//! manifest was parsed when that stamp was taken, so parsing it again would
//! only say the same.

use std::path::PathBuf;

use rusqlite::OptionalExtension;

use crate::read::Reader;
use crate::write::apply::{Live, Stamp};
use crate::{Index, path_str};
use logbook_model::error::Result;
use logbook_store::Project;
use logbook_store::run_outputs::decode_outs;

/// A finished run as the index holds it: valid when indexed, and since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledRun {
    /// The manifest's stamp (size, mtime in ns) when it was parsed.
    pub stamp: Stamp,
    /// Its registered output files, as the manifest names them.
    pub outputs: Vec<String>,
}

impl Index {
    /// The index file as it is, for a pass that only trusts it: `None`
    /// when it is absent, of another schema, built for another place, or
    /// cannot be opened. Never builds, repairs or syncs it (a damaged
    /// index is `doctor`'s finding, not its input).
    pub fn open_existing(p: &Project) -> Option<Index> {
        let path = p.index_path();
        if !Project::exists(p) || !logbook_store::index_file::is_present(&path) {
            return None;
        }
        let index = Index::connect(p, &path).ok()?;
        index.built_for_here().ok()?.then_some(index)
    }
}

impl Reader<'_> {
    /// The runs of `manifests` the index holds as finished and valid (`None`
    /// for any other: running, without a manifest, invalid, not indexed),
    /// in one read. One primary-key lookup each.
    pub fn settled_runs(&self, manifests: &[PathBuf]) -> Result<Vec<Option<SettledRun>>> {
        self.in_one_read(|| {
            let mut stmt = self
                .index
                .conn
                .prepare_cached(
                    "SELECT size, mtime_ns, outs FROM files \
                     WHERE path = ?1 AND kind = 'run' AND live = ?2",
                )
                .map_err(self.index.err())?;
            let mut out = Vec::with_capacity(manifests.len());
            for m in manifests {
                let row = stmt
                    .query_row(rusqlite::params![path_str(m), Live::Settled as i64], |r| {
                        let outs: Option<Vec<u8>> = r.get(2)?;
                        Ok(((r.get(0)?, r.get(1)?), outs.unwrap_or_default()))
                    })
                    .optional()
                    .map_err(self.index.err())?;
                out.push(row.and_then(|(stamp, outs)| {
                    Some(SettledRun {
                        stamp,
                        outputs: decode_outs(&outs)?.map(str::to_string).collect(),
                    })
                }));
            }
            Ok(out)
        })
    }
}

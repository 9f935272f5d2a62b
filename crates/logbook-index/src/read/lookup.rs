//! Single records by id or prefix, the latest output of an agent, and the
//! lineage edges around a run.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use crate::read::Reader;
use logbook_model::error::Result;
use logbook_model::ids::RunId;
use logbook_model::query::{ArchiveScope, RunQuery};
use logbook_model::run::{OutputRecord, Run};

impl Reader<'_> {
    /// the scan's latest output from the index: the newest run of `agent`
    /// (workflow matching, of `status` unless `None`) having an output of
    /// `output_type`, and its last such output.
    pub fn latest_output(
        &self,
        agent: &str,
        workflow: Option<&str>,
        output_type: Option<&str>,
        status: Option<&str>,
    ) -> Result<Option<(Run, OutputRecord, PathBuf)>> {
        // An archived run's outputs are still its agent's latest.
        let query = RunQuery {
            agent: Some(agent.to_string()),
            workflow: workflow.map(str::to_string),
            status: status.map(str::to_string),
            archive: ArchiveScope::All,
            ..RunQuery::default()
        };
        // Usually the newest run has the output: start with a small page.
        let (mut offset, mut size) = (0, 16);
        loop {
            let page = self.find_runs(&RunQuery {
                offset,
                limit: Some(size),
                ..query.clone()
            })?;
            if page.is_empty() {
                return Ok(None);
            }
            offset += page.len();
            size = (size * 4).min(4096);
            for hit in page {
                if let Some(out) = hit
                    .run
                    .manifest
                    .outputs
                    .iter()
                    .rev()
                    .find(|o| output_type.is_none_or(|t| o.output_type.as_str() == t))
                {
                    let path = hit.run.output_path(&out.file);
                    let out = out.clone();
                    return Ok(Some((hit.run, out, path)));
                }
            }
        }
    }

    /// One run by id, from the index, verified against its file (see
    /// `Reader::verified`).
    pub fn run(&self, id: &str) -> Result<Option<Run>> {
        Ok(self
            .verified(
                || Ok(self.run_row(id)?.into_iter().collect()),
                |r| &r.folder,
                false,
            )?
            .pop())
    }

    /// Brings the run in `folder` up to date in the index if its manifest
    /// or any registered output differs from what the index stored: what a
    /// face calls as it shows a run from its files, so that an output of a
    /// finished run edited in place (settled, so a normal sync trusts it)
    /// is searched as it is shown from then on. One `stat` of the manifest
    /// and one `lstat` per output.
    pub fn recheck_run(&self, folder: &Path) -> Result<()> {
        self.verified(|| Ok(vec![folder.to_path_buf()]), |f| f.as_path(), true)
            .map(|_| ())
    }

    fn run_row(&self, id: &str) -> Result<Option<Run>> {
        let row: Option<(String, String, String)> = self
            .index
            .conn
            .query_row(
                "SELECT id, folder, manifest FROM runs WHERE id = ?1 ORDER BY folder LIMIT 1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(self.index.err())?;
        Ok(row.and_then(|(id, folder, manifest)| {
            let folder = PathBuf::from(folder);
            Some(Run {
                id: RunId::parse(&id).ok()?,
                manifest: crate::write::record::stored_manifest(&folder, &manifest)?,
                folder,
            })
        }))
    }

    /// The ids of the indexed runs whose id starts with `prefix` (lowercase),
    /// at most `limit` of them, sorted. Ids are stored lowercase and are
    /// made of hex digits and `-`, all below `~`, so the range
    /// `[prefix, prefix~)` is exactly the prefix and one seek in `runs_id`.
    pub fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let mut stmt = self
            .index.conn
            .prepare_cached(
                "SELECT DISTINCT id FROM runs WHERE id >= ?1 AND id < ?1 || '~' ORDER BY id LIMIT ?2",
            )
            .map_err(self.index.err())?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        stmt.query_map(params![prefix, limit], |r| r.get(0))
            .map_err(self.index.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())
    }

    /// The ids and files of the indexed transcripts whose id starts or ends
    /// with `part` (lowercase, compared without case), sorted by id.
    pub fn transcript_ids_matching(&self, part: &str) -> Result<Vec<(String, PathBuf)>> {
        let mut stmt = self
            .index.conn
            .prepare_cached(
                "SELECT id, path FROM transcripts \
                 WHERE lower(substr(id, 1, length(?1))) = ?1 OR lower(substr(id, -length(?1))) = ?1 \
                 ORDER BY id, path",
            )
            .map_err(self.index.err())?;
        stmt.query_map([part], |r| {
            Ok((
                r.get::<_, String>(0)?,
                PathBuf::from(r.get::<_, String>(1)?),
            ))
        })
        .map_err(self.index.err())?
        .collect::<std::result::Result<_, _>>()
        .map_err(self.index.err())
    }

    /// Ids of the runs naming `id` in their `related_sessions` (its children).
    pub fn children(&self, id: &str) -> Result<Vec<String>> {
        self.ids(
            "SELECT DISTINCT child FROM edges WHERE parent = ?1 ORDER BY child",
            id,
        )
    }

    fn ids(&self, query: &str, id: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(query)
            .map_err(self.index.err())?;
        stmt.query_map([id], |r| r.get(0))
            .map_err(self.index.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())
    }

    /// Every lineage edge `(child, parent)` whose parent is not indexed as
    /// a run, for `doctor`.
    pub fn dangling_edges(&self) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .index.conn
            .prepare(
                "SELECT child, parent FROM edges WHERE parent NOT IN (SELECT id FROM runs) ORDER BY child, parent",
            )
            .map_err(self.index.err())?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.index.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())
    }
}

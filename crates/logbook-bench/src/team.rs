//! The team catalog rows (`--team`): `team push` of the whole project and
//! `find --team`, on a PostgreSQL started for the run.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook_index::Index;

use crate::find::{FIND_ARGS, find_query};
use crate::measure::{ms, percentile, process_ms, time};
use crate::pg;
use crate::report::RowSink;

/// Push throughput and `find --team` latency against a PostgreSQL started
/// for the run: the whole project pushed by the real binary, then the
/// local `find` row's query answered by the catalog.
pub(crate) fn rows(
    bin: &Path,
    root: &Path,
    n: usize,
    local_find_ms: f64,
    row: RowSink<'_>,
) -> Result<()> {
    eprintln!("team catalog: starting PostgreSQL …");
    let pg = pg::Pg::start()?;
    let config = Restore::new(root.join("logbook.yaml"))?;
    let mut text = config.before.clone().unwrap_or_default();
    text.push_str(&format!("\nteam_url: '{}'\norigin: bench\n", pg.url()));
    std::fs::write(&config.path, text)?;
    process_ms(bin, root, &["team", "init", "--json"])?;
    eprintln!("team push of {n} runs …");
    let push_ms = process_ms(bin, root, &["team", "push", "--json"])?;
    let project =
        Logbook::open(root)?.with_catalog(std::sync::Arc::new(logbook_team_pg::PgConnector));
    let status = logbook::ops::catalog::status(&project)?;
    let pushed = status
        .catalog
        .as_ref()
        .and_then(|c| c.origins.first())
        .map_or(0, |o| o.runs);
    // A reused project may hold a few runs more than it was made with.
    let local = Index::open(&project)?
        .read()
        .count_runs(&RunQuery::default())? as i64;
    if pushed != local || status.backlog != 0 {
        bail!(
            "team push left {pushed} of {local} runs on the server, {} waiting",
            status.backlog
        );
    }
    let per_s = local as f64 / (push_ms / 1000.0);
    row(
        "`team push` of every run, new catalog (whole process)",
        format!("{per_s:.0} runs/s ({:.1} s)", push_ms / 1000.0),
        String::new(),
        String::new(),
        "≥ 5,000 runs/s",
        Some(per_s >= 5000.0),
    );
    eprintln!("find --team …");
    let catalog = logbook::ops::catalog::connect(&project, logbook::ops::catalog::COMMAND_TIMEOUT)?;
    let query = find_query();
    let local = crate::find::runs_of(&project, &query, logbook::ops::query::Scope::Local)?.len();
    let mut team_ms = vec![];
    for _ in 0..50 {
        let (d, (runs, _)) = time(|| Ok(catalog.find_runs(&query)?))?;
        if runs.len() != local {
            bail!(
                "find --team found {} runs, the local index {local}",
                runs.len()
            );
        }
        team_ms.push(ms(d));
    }
    let t50 = percentile(&mut team_ms, 0.5);
    row(
        "`find --team --agent X --workflow '^deep-' --status completed --limit 20`, query on a connected catalog",
        format!("{t50:.2} ms median at {n} runs"),
        format!("{local_find_ms:.2} ms median (local index)"),
        format!("{:.2}×", t50 / local_find_ms),
        "< 10 ms",
        Some(t50 < 10.0),
    );
    let args = [&["find", "--team", "--json"][..], &FIND_ARGS].concat();
    process_ms(bin, root, &args)?;
    // Alternated with the floor: `psql` opening a connection of its own to
    // run `SELECT 1` (a new server backend, its startup and first query).
    let (mut whole, mut floor) = (vec![], vec![]);
    for _ in 0..21 {
        whole.push(process_ms(bin, root, &args)?);
        let t = Instant::now();
        if !pg.select_one().status()?.success() {
            bail!("psql could not run SELECT 1 on the bench's server");
        }
        floor.push(ms(t.elapsed()));
    }
    let (w50, f50) = (percentile(&mut whole, 0.5), percentile(&mut floor, 0.5));
    row(
        "`find --team` (same query), whole process: connect, check schema, query",
        format!("{w50:.2} ms median"),
        format!("{f50:.2} ms median `psql -c 'SELECT 1'` (a new connection's floor)"),
        format!("{:.2}×", w50 / f50),
        "< 10 ms",
        Some(w50 < 10.0),
    );
    Ok(())
}

/// A file put back as it was (or removed, if it was not there) when this
/// is dropped: the team rows point a reused project at a server that is
/// gone once they end, and later writes there would each try to reach it.
struct Restore {
    path: PathBuf,
    before: Option<String>,
}

impl Restore {
    fn new(path: PathBuf) -> Result<Restore> {
        let before = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Ok(Restore { path, before })
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = match &self.before {
            Some(text) => std::fs::write(&self.path, text),
            None => std::fs::remove_file(&self.path),
        };
    }
}

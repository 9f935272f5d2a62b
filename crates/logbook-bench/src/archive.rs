//! The archive rows: `logbook archive` of the oldest 10 % of the runs, and
//! `find` before and after it (the live set a tenth smaller, and the count
//! of archived matches it leaves out), each against the same `find` in
//! the same run before the archive. The runs are moved back after, so a
//! reused project stays as it was.

use anyhow::{Result, bail};
use logbook::Logbook;
use logbook::model::query::{ArchiveScope, RunQuery};
use logbook::ops::archive;
use logbook::ops::query::{self, FindOptions, Scope};

use crate::find::find_query;
use crate::measure::{ms, percentile, time};
use crate::report::RowSink;
use crate::synth::BASE;

/// Median `find` of `q` over `rounds` runs, in ms, and its page's count
/// of archived matches left out.
fn median_find(project: &Logbook, q: &RunQuery, rounds: usize) -> Result<(f64, u64)> {
    let mut times = vec![];
    let mut archived = 0;
    for _ in 0..rounds {
        let (d, page) = time(|| Ok(query::find(project, q, FindOptions::new(Scope::Local))?))?;
        times.push(ms(d));
        archived = page.archived;
    }
    Ok((percentile(&mut times, 0.5), archived))
}

pub(crate) fn rows(project: &Logbook, n: usize, row: RowSink<'_>) -> Result<()> {
    eprintln!("archive …");
    let filtered = find_query();
    let page = RunQuery {
        limit: Some(50),
        ..RunQuery::default()
    };
    let (filtered_before, _) = median_find(project, &filtered, 30)?;
    let (page_before, _) = median_find(project, &page, 30)?;

    // The synthesized runs start a minute apart from BASE: those that
    // finished before the tenth one's start are the oldest tenth.
    let cutoff = jiff::Timestamp::from_second(BASE + (n as i64 / 10) * 60)?;
    let (took, done) = time(|| Ok(archive::archive_finished_before(project, cutoff, false)?))?;
    if done.count == 0 {
        bail!("the archive moved no run; use a larger --runs");
    }
    let per_s = done.count as f64 / took.as_secs_f64();
    row(
        &format!("`archive` of the oldest 10 % ({} runs moved)", done.count),
        format!("{per_s:.0} runs/s ({:.1} s)", took.as_secs_f64()),
        String::new(),
        String::new(),
        "",
        None,
    );

    let (filtered_after, left_out) = median_find(project, &filtered, 30)?;
    let (page_after, _) = median_find(project, &page, 30)?;
    let archived_only = RunQuery {
        archive: ArchiveScope::Archived,
        ..page.clone()
    };
    let (archived_ms, _) = median_find(project, &archived_only, 30)?;
    row(
        "`find --agent X --workflow '^deep-' --status completed --limit 20`, 10 % archived",
        format!("{filtered_after:.2} ms median ({left_out} archived left out, counted)"),
        format!("{filtered_before:.2} ms (nothing archived)"),
        format!("{:.2}×", filtered_after / filtered_before),
        "",
        None,
    );
    row(
        "`find` (first page), 10 % archived",
        format!("{page_after:.2} ms median"),
        format!("{page_before:.2} ms (nothing archived)"),
        format!("{:.2}×", page_after / page_before),
        "",
        None,
    );
    row(
        "`find --archived` (first page)",
        format!("{archived_ms:.2} ms median"),
        format!("{page_before:.2} ms (`find`, nothing archived)"),
        format!("{:.2}×", archived_ms / page_before),
        "",
        None,
    );

    eprintln!("unarchive …");
    let (back, ()) = time(|| {
        for m in &done.moved {
            archive::unarchive(project, &m.session_id)?;
        }
        Ok(())
    })?;
    row(
        &format!("`unarchive` of the same {} runs, one by one", done.count),
        format!(
            "{:.0} runs/s ({:.1} s)",
            done.count as f64 / back.as_secs_f64(),
            back.as_secs_f64()
        ),
        String::new(),
        String::new(),
        "",
        None,
    );
    Ok(())
}

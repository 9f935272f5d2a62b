//! The query rows: `find` and `latest-output` through the index against
//! the seed's read-every-manifest scan, and full-text search.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::model::run::Run;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::run;
use logbook_index::Index;

use crate::measure::{ms, percentile, time};
use crate::report::RowSink;
use crate::synth::{Rng, VOCAB, Vocab};

/// The `find` every find row times (in process, as a whole process, with
/// its peak memory, against the team catalog), as command-line options:
/// one query, so their figures compare.
pub(crate) const FIND_ARGS: [&str; 8] = [
    "--agent",
    "agent03",
    "--workflow",
    "^deep-",
    "--status",
    "completed",
    "--limit",
    "20",
];

/// [`FIND_ARGS`] as the library's query.
pub(crate) fn find_query() -> RunQuery {
    RunQuery {
        agent: Some(FIND_ARGS[1].into()),
        workflow: Some(FIND_ARGS[3].into()),
        status: Some(FIND_ARGS[5].into()),
        limit: FIND_ARGS[7].parse().ok(),
        ..RunQuery::default()
    }
}

/// `find` and `latest-output`, each through the index and by the scan;
/// returns the median `find` through the index, which the team rows
/// compare with.
pub(crate) fn find_rows(project: &Logbook, row: RowSink<'_>) -> Result<f64> {
    // find through the index vs the seed's scan.
    eprintln!("find …");
    let query = find_query();
    let mut idx_ms = vec![];
    let mut expected = vec![];
    for _ in 0..50 {
        let (d, hits) = time(|| runs_of(project, &query, Scope::Local))?;
        idx_ms.push(ms(d));
        expected = hits.into_iter().map(|r| r.id).collect::<Vec<_>>();
    }
    let mut scan_ms = vec![];
    for _ in 0..3 {
        let (d, runs) = time(|| runs_of(project, &query, Scope::Files))?;
        scan_ms.push(ms(d));
        let got: Vec<_> = runs.into_iter().map(|r| r.id).collect();
        if got != expected {
            bail!("index and scan disagree on find: {got:?} vs {expected:?}");
        }
    }
    let (fi, fs) = (percentile(&mut idx_ms, 0.5), percentile(&mut scan_ms, 0.5));
    row(
        "`find --agent X --workflow '^deep-' --status completed --limit 20`",
        format!("{fi:.2} ms median"),
        format!("{fs:.0} ms (scan)"),
        format!("{:.0}×", fs / fi),
        "≥ 100× and < 5 ms",
        Some(fs / fi >= 100.0 && fi < 5.0),
    );

    eprintln!("latest-output …");
    // At a small --runs not every agent has a report of a review workflow:
    // the row asks for agent07's, else the next agent's that has one.
    let agent = (7..27)
        .map(|i| format!("agent{:02}", i % 20))
        .find(|a| run::latest_output(project, &review_report(a)).is_ok())
        .context("no agent has a report of a '^review-' workflow; use a larger --runs")?;
    let mut idx_ms = vec![];
    let mut expected = None;
    for _ in 0..50 {
        let (d, found) = time(|| Ok(run::latest_output(project, &review_report(&agent))?))?;
        idx_ms.push(ms(d));
        expected = Some(found.path);
    }
    let mut scan_ms = vec![];
    for _ in 0..3 {
        let (d, found) = time(|| latest_output_scan(project, &agent, "^review-", "report"))?;
        scan_ms.push(ms(d));
        if Some(&found.2) != expected.as_ref() {
            bail!("index and scan disagree on latest-output");
        }
    }
    let (li, ls) = (percentile(&mut idx_ms, 0.5), percentile(&mut scan_ms, 0.5));
    row(
        "`latest-output --agent X --workflow '^review-' --type report`",
        format!("{li:.2} ms median"),
        format!("{ls:.0} ms (scan)"),
        format!("{:.0}×", ls / li),
        "≥ 100×",
        Some(ls / li >= 100.0),
    );
    Ok(fi)
}

/// `find --status completed --limit 20` with 1 % of the runs running
/// against the same `find` with none running: before its status filter
/// decides, every run indexed as running is checked against its manifest
/// (a `stat` each; no other filter narrows them here), so this ratio is
/// that check's cost at its largest. The running runs are finished in place behind Logbook's
/// back for the measures (synced, untimed) and restored after.
pub(crate) fn running_rows(project: &Logbook, row: RowSink<'_>) -> Result<()> {
    eprintln!("find with 1 % running …");
    let running = RunQuery {
        status: Some("running".into()),
        ..RunQuery::default()
    };
    let all = Index::open(project)?
        .read()
        .count_runs(&RunQuery::default())?;
    let keep = usize::try_from(all / 100)?.max(1);
    let mut originals = vec![];
    let every = RunQuery {
        limit: Some(RunQuery::MAX_PAGING),
        ..running
    };
    for run in runs_of(project, &every, Scope::Local)? {
        let path = run.manifest_file();
        let text = std::fs::read_to_string(&path)?;
        originals.push((path, text));
    }
    if originals.len() < keep {
        bail!(
            "only {} of {all} runs are running; 1 % is {keep}",
            originals.len()
        );
    }
    // Each file as written (running) or finished in place, then synced.
    let set = |files: &[(PathBuf, String)], running: bool| -> Result<()> {
        for (path, text) in files {
            if running {
                std::fs::write(path, text)?;
            } else {
                std::fs::write(path, text.replace("\"running\"", "\"completed\""))?;
            }
        }
        Index::open(project)?.upkeep().sync()?;
        Ok(())
    };
    let query = RunQuery {
        status: Some("completed".into()),
        limit: Some(20),
        ..RunQuery::default()
    };
    let sample = |into: &mut Vec<f64>| -> Result<()> {
        for _ in 0..20 {
            let (d, _) = time(|| runs_of(project, &query, Scope::Local))?;
            into.push(ms(d));
        }
        Ok(())
    };
    // Rounds alternate the two states, so that whatever else the machine
    // does weighs on both alike.
    let (mut with, mut none) = (vec![], vec![]);
    set(&originals[keep..], false)?;
    for _ in 0..3 {
        sample(&mut with)?;
        set(&originals[..keep], false)?;
        sample(&mut none)?;
        set(&originals[..keep], true)?;
    }
    set(&originals[keep..], true)?;
    let with_running = percentile(&mut with, 0.5);
    let none_running = percentile(&mut none, 0.5);
    let ratio = with_running / none_running;
    row(
        &format!("`find --status completed --limit 20`, 1 % of the runs running ({keep})"),
        format!("{with_running:.2} ms median"),
        format!("{none_running:.2} ms (none running)"),
        format!("{ratio:.2}×"),
        "< 5 ms, as `find`",
        Some(with_running < 5.0),
    );
    Ok(())
}

/// Full-text search of one common word and of two rarer words.
pub(crate) fn fts_rows(project: &Logbook, row: RowSink<'_>) -> Result<()> {
    eprintln!("full-text …");
    // Two kinds of search, as people type them: one common word (among the
    // ten most frequent, so it is in most runs and bm25 must rank nearly
    // all of them), and two rarer words (ranks 200–6000, each in a few
    // percent of runs or less) that must both occur.
    let vocab = Vocab::new();
    let index = Index::open(project)?;
    let mut rng = Rng(7);
    let mut fts = |words: &mut dyn FnMut(&mut Rng) -> String| -> Result<(f64, f64, f64)> {
        let mut lat = vec![];
        let mut hits = 0usize;
        for _ in 0..200 {
            let q = RunQuery {
                text: Some(words(&mut rng)),
                limit: Some(20),
                ..RunQuery::default()
            };
            let (d, found) = time(|| Ok(index.read().find_runs(&q)?))?;
            hits += found.len();
            lat.push(ms(d));
        }
        Ok((
            percentile(&mut lat, 0.5),
            percentile(&mut lat, 0.99),
            hits as f64 / 200.0,
        ))
    };
    let (c50, c99, chits) = fts(&mut |rng| vocab.words[rng.below(10)].clone())?;
    let rare = |rng: &mut Rng| vocab.words[200 + rng.below(VOCAB - 200)].clone();
    let (r50, r99, rhits) = fts(&mut |rng| format!("{} {}", rare(rng), rare(rng)))?;
    drop(index);
    row(
        "`find --text 'common-word' --limit 20`",
        format!("{c50:.2} ms median, {c99:.2} ms p99 ({chits:.1} hits per page)"),
        String::new(),
        String::new(),
        "",
        None,
    );
    row(
        "`find --text 'two rarer-words' --limit 20`",
        format!("{r50:.2} ms median, {r99:.2} ms p99 ({rhits:.1} hits per page)"),
        String::new(),
        String::new(),
        "",
        None,
    );
    Ok(())
}

/// `latest-output --agent AGENT --workflow '^review-' --type report`: the
/// question the row times.
fn review_report(agent: &str) -> run::LatestQuery<'_> {
    run::LatestQuery {
        agent,
        workflow: Some("^review-"),
        output_type: Some("report"),
        status: None,
    }
}

/// The seed's "find latest output" by reading every manifest (its
/// discovery pattern: completed runs only): the baseline `latest-output`
/// through the index is measured against.
fn latest_output_scan(
    project: &Logbook,
    agent: &str,
    workflow: &str,
    output_type: &str,
) -> Result<(String, String, PathBuf)> {
    let query = RunQuery {
        agent: Some(agent.to_string()),
        workflow: Some(workflow.to_string()),
        status: Some(run::LATEST_STATUS.to_string()),
        ..RunQuery::default()
    };
    let every = RunQuery {
        limit: Some(RunQuery::MAX_PAGING),
        ..query
    };
    for r in runs_of(project, &every, Scope::Files)? {
        if let Some(out) = r
            .manifest
            .outputs
            .iter()
            .rev()
            .find(|o| o.output_type.as_str() == output_type)
        {
            return Ok((r.id.to_string(), out.file.clone(), r.output_path(&out.file)));
        }
    }
    bail!("no {output_type} output of {agent} in the scan")
}

/// The runs `query` finds in `scope` (the index, or the seed's scan of
/// every manifest), in `find`'s order: what both are measured answering.
pub(crate) fn runs_of(project: &Logbook, query: &RunQuery, scope: Scope) -> Result<Vec<Run>> {
    let page = query::find(project, query, FindOptions::new(scope))?;
    Ok(page.hits.into_iter().map(|h| h.run).collect())
}

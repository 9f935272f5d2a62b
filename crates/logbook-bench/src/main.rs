//! `logbook-bench`: builds a synthetic project the way another tool would
//! (manifests of 1–3 KB with 1–5 output files, 20 agents, 50 workflows,
//! lineage chains, written straight to disk) and prints one markdown table.
//! Every figure is measured in the same run, each against a baseline from
//! the same run on the same files: the seed's read-every-manifest scan, a
//! bare write+fsync+rename of the same bytes.
//!
//! ```text
//! cargo build --release -p logbook-cli          # for the peak-memory rows
//! cargo run --release -p logbook-bench -- --runs 100000
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod archive;
mod args;
mod baseline;
mod export;
mod find;
mod first_answer;
mod hook;
mod index;
mod mcp;
mod measure;
mod memory;
mod page;
mod pg;
mod pg_bin;
mod portable;
mod register;
mod report;
mod scale;
mod size;
mod statusline;
mod synth;
mod team;
mod transcripts;
mod upgrade;
mod upkeep;
mod web;

use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook_index::Index;

use crate::measure::{find_bin, time};
use crate::report::Row;
use crate::synth::synthesize;

/// The allocator the `logbook` binary runs with, so that what runs in this
/// process is measured as it runs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<()> {
    if let Some(done) = first_answer::builder_mode() {
        return done;
    }
    let args = args::parse_args()?;
    let n = args.runs;
    let tmp;
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("logbook-bench-")
                .tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&root)?;
    let project = Logbook::open(&root)?;
    let outputs_dir = project.config.agent_outputs_folder.clone();
    let mut rows: Vec<Row> = vec![];
    let mut row = |measure: &str,
                   result: String,
                   baseline: String,
                   ratio: String,
                   target: &str,
                   met: Option<bool>| {
        rows.push(Row {
            measure: measure.into(),
            result,
            baseline,
            ratio,
            target: target.into(),
            met,
        })
    };

    let reused = std::fs::read_dir(&outputs_dir).map_or(0, |d| d.count()) >= n
        && project.index_path().is_file();
    let gen_time = if reused {
        Duration::ZERO
    } else {
        eprintln!("synthesizing {n} runs in {} …", root.display());
        let (gen_time, _ids) = time(|| synthesize(&outputs_dir, n, 42))?;
        eprintln!("  {:.1}s", gen_time.as_secs_f64());
        gen_time
    };

    if reused {
        eprintln!("reusing the {n} runs and the index in {}", root.display());
    }
    // A reused index is rebuilt only when `--only` names the rebuild rows:
    // at a million runs a rebuild takes minutes.
    if args.named("rebuild") || !reused && args.wants("rebuild") {
        index::rebuild_rows(&project, &mut row)?;
    } else if !reused {
        Index::rebuild(&project, None)?;
    }
    // The team rows compare `find --team` with this local query.
    let local_find_ms = if args.wants("find") || args.team {
        find::find_rows(&project, &mut row)?
    } else {
        f64::NAN
    };
    if args.wants("find") {
        find::running_rows(&project, &mut row)?;
    }
    if args.wants("fts") {
        find::fts_rows(&project, &mut row)?;
    }
    if args.wants("sync") {
        index::sync_rows(&project, &outputs_dir, n, &mut row)?;
    }
    if args.wants("upkeep") {
        upkeep::rows(&project, n, &mut row)?;
    }
    if args.wants("portable") {
        match (find_bin(args.logbook.clone()), &args.portable_logbook) {
            (Some(bin), Some(portable)) => portable::rows(&bin, portable, &root, n, &mut row)?,
            _ => eprintln!(
                "skipping the portable row: it compares a `logbook` beside this one (or --logbook) with --portable-logbook PATH, built by cargo build --release -p logbook-cli --features portable-fs (see docs/performance.md)"
            ),
        }
    }
    if args.wants("register") {
        register::rows(&project, &mut row)?;
    }
    if args.wants("memory") {
        // Peak memory of the real binary.
        match find_bin(args.logbook.clone()) {
            Some(bin) => memory::rows(&bin, &root, n, args.log_mib, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the memory rows (cargo build --release -p logbook-cli)"
            ),
        }
    }
    if args.wants("mcp") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => mcp::rows(&bin, &root, n, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the MCP row (cargo build --release -p logbook-cli)"
            ),
        }
    }
    if args.wants("hook") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => hook::rows(&bin, &root, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the hook rows (cargo build --release -p logbook-cli)"
            ),
        }
    }
    if args.wants("statusline") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => statusline::rows(&bin, &root, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the statusline row (cargo build --release -p logbook-cli)"
            ),
        }
    }
    if args.wants("web") {
        web::rows(&project, n, &mut row)?;
    }
    if args.wants("size") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => size::rows(&bin, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the size row (cargo build --profile dist -p logbook-cli)"
            ),
        }
    }
    if args.wants("page") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => page::rows(&bin, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the transcript page rows (cargo build --release -p logbook-cli)"
            ),
        }
    }

    if args.wants("export") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => export::rows(&bin, &root, n, &mut row)?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the export rows (cargo build --release -p logbook-cli)"
            ),
        }
    }

    if args.wants("scale") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => scale::rows(
                &bin,
                &project,
                n,
                args.dir.as_ref().map(|d| args::baseline_dir(d)).as_deref(),
                &mut row,
            )?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the scale rows (cargo build --release -p logbook-cli)"
            ),
        }
    }

    if args.wants("upgrade") {
        upgrade::rows(&project, n, &mut row)?;
    }

    if args.team {
        match find_bin(args.logbook.clone()) {
            Some(bin) => team::rows(&bin, &root, n, local_find_ms, &mut row)?,
            None => {
                bail!("--team needs the `logbook` binary (cargo build --release -p logbook-cli)")
            }
        }
    }

    let mut compared = None;
    if let Some(old) = &args.baseline
        && args.wants("baseline")
    {
        let new = find_bin(args.logbook.clone()).context(
            "--baseline compares with the `logbook` beside this one or at --logbook PATH: none found (cargo build --release -p logbook-cli)",
        )?;
        compared = Some((old, baseline::rows(old, &new, &project, n, &mut row)?));
    }

    if args.wants("first-answer") {
        first_answer::rows(&project, n, &mut row)?;
    }

    // Last: it moves runs (and moves them back after).
    if args.wants("archive") {
        archive::rows(&project, n, &mut row)?;
    }

    let status = Index::open(&project)?.upkeep().status()?;
    report::print(&status, n, gen_time, &rows)?;
    match compared {
        Some((old, version)) => report::print_callouts(old, &version, &rows),
        None => Ok(()),
    }
}

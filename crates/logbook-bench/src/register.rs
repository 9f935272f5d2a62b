//! The registration rows: a durable `run output` registration against the
//! physical floor of writing the same manifest, and concurrent writers.

use std::path::Path;

use anyhow::{Result, bail};
use logbook::Logbook;
use logbook::model::run::{OutputType, RunStatus};
use logbook::ops::run;

use crate::measure::{ms, percentile, time};
use crate::report::RowSink;

/// Registering an output again and a new output, each against write+fsync+rename
/// of the same bytes, then 8 writers registering on different runs at once.
pub(crate) fn rows(project: &Logbook, row: RowSink<'_>) -> Result<()> {
    // Durable registration vs the physical floor.
    eprintln!("registration …");
    let started = run::start(
        project,
        run::StartOptions {
            agent: "bench".into(),
            workflow: Some("registration".into()),
            ..run::StartOptions::default()
        },
    )?;
    let reps = 200;
    for i in 0..reps {
        std::fs::write(started.folder.join(format!("f{i}.md")), "x")?;
    }
    // The floor is measured turn about with the registrations, so both
    // see the same disk and cache state (measured in a block after
    // them, it ran faster than the same write did in between, which
    // flattered the floor),
    // writing the manifest as the registration just left it, into the
    // same folder.
    let (mut reg_ms, mut floor_ms) = (vec![], vec![]);
    let register = |id: &str, folder: &Path, file: &str, description: &str| -> Result<(f64, f64)> {
        let (d, _) = time(|| {
            Ok(run::register_output(
                project,
                id,
                file,
                OutputType::Document,
                description,
            )?)
        })?;
        let bytes = std::fs::read(folder.join("manifest.json"))?;
        let floor_path = folder.join("floor.json");
        let (f, _) = time(|| Ok(logbook_store::write_atomic(&floor_path, &bytes)?))?;
        Ok((ms(d), ms(f)))
    };
    for i in 0..reps {
        let (d, f) = register(
            started.session_id.as_str(),
            &started.folder,
            &format!("f{}.md", i % 20),
            "a registered output",
        )?;
        reg_ms.push(d);
        floor_ms.push(f);
    }
    let (r50, r99) = (percentile(&mut reg_ms, 0.5), percentile(&mut reg_ms, 0.99));
    let (f50, f99) = (
        percentile(&mut floor_ms, 0.5),
        percentile(&mut floor_ms, 0.99),
    );
    row(
        "`run output` registration, durable (20 files registered in turn: after the first round, each again with the same type and description)",
        format!("{r50:.2} ms p50, {r99:.2} ms p99"),
        format!("{f50:.2} ms p50, {f99:.2} ms p99 (write+fsync+rename+fsync dir)"),
        format!("{:.2}× (p50)", r50 / f50),
        "≤ 1.5×",
        Some(r50 / f50 <= 1.5),
    );
    // The other case: each registration adds an output, so the run's
    // full text is made again from its manifest and every output file.
    let (mut new_ms, mut floor_ms) = (vec![], vec![]);
    for r in 0..reps / 5 {
        let started = run::start(
            project,
            run::StartOptions {
                agent: "bench".into(),
                workflow: Some(format!("registration-{r}")),
                ..run::StartOptions::default()
            },
        )?;
        for i in 0..5 {
            let file = format!("part-{i}.md");
            std::fs::write(started.folder.join(&file), format!("part {i} of run {r}\n"))?;
            let (d, f) = register(
                started.session_id.as_str(),
                &started.folder,
                &file,
                &format!("part {i}"),
            )?;
            new_ms.push(d);
            floor_ms.push(f);
        }
    }
    let (n50, n99) = (percentile(&mut new_ms, 0.5), percentile(&mut new_ms, 0.99));
    let f50 = percentile(&mut floor_ms, 0.5);
    row(
        "`run output` registration of a new output (full text made again), durable",
        format!(
            "{n50:.2} ms p50, {n99:.2} ms p99 ({} runs, 5 outputs each)",
            reps / 5
        ),
        format!("{f50:.2} ms p50 (write+fsync+rename+fsync dir)"),
        format!("{:.2}× (p50)", n50 / f50),
        "",
        None,
    );

    eprintln!("8 concurrent writers …");
    let per_writer = 50;
    let mut runs = vec![];
    for w in 0..8 {
        let s = run::start(
            project,
            run::StartOptions {
                agent: format!("writer{w}"),
                workflow: Some("concurrency".into()),
                ..run::StartOptions::default()
            },
        )?;
        for i in 0..per_writer {
            std::fs::write(s.folder.join(format!("o{i}.md")), "y")?;
        }
        runs.push(s.session_id);
    }
    let (wall, ()) = time(|| {
        std::thread::scope(|s| -> Result<()> {
            let handles: Vec<_> = runs
                .iter()
                .map(|id| {
                    let p = project.clone();
                    s.spawn(move || -> Result<()> {
                        for i in 0..per_writer {
                            run::register_output(
                                &p,
                                id.as_str(),
                                &format!("o{i}.md"),
                                OutputType::Data,
                                "concurrent",
                            )?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for h in handles {
                h.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
            }
            Ok(())
        })
    })?;
    for id in &runs {
        let r = run::show(project, id.as_str())?;
        if r.manifest.outputs.len() != per_writer {
            bail!(
                "lost update: run {id} has {} outputs",
                r.manifest.outputs.len()
            );
        }
        run::finish(project, id.as_str(), RunStatus::Completed)?;
    }
    let total = (8 * per_writer) as f64;
    row(
        "8 concurrent writers on different runs",
        format!("{:.0} registrations/s", total / wall.as_secs_f64()),
        String::new(),
        String::new(),
        "",
        None,
    );
    Ok(())
}

//! The upkeep rows: `index sync` with nothing changed, default `doctor`
//! and `doctor --full`, each as a ratio to the bare file-system work of
//! the same kind measured in the same run on the same files, on as many
//! threads as the library uses, through the same `store::sys` calls: a
//! walk that `stat`s every manifest; a walk that `lstat`s every registered
//! output; a walk that reads and parses every manifest, and one that also
//! `lstat`s every output (what `doctor --full` reads). Each figure is the
//! better of two warm runs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use logbook::Logbook;
use logbook::model::run::{MANIFEST_FILE, parse_manifest};
use logbook::ops::doctor;
use logbook_index::Index;
use logbook_store::sys::{self, Follow, Want};

use crate::measure::time;
use crate::report::RowSink;

/// The better of two timings of `f`.
fn best<T>(mut f: impl FnMut() -> Result<T>) -> Result<(Duration, T)> {
    let (a, _) = time(&mut f)?;
    let (b, v) = time(&mut f)?;
    Ok((a.min(b), v))
}

fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
}

/// The run folders' names, by one `readdir` of the runs folder.
fn names(dir: &Path) -> Result<Vec<OsString>> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            out.push(e.file_name());
        }
    }
    Ok(out)
}

/// Calls `each` on every item of `items`, split over the library's
/// number of threads.
fn on_threads<T: Sync, R: Send + Default>(
    items: &[T],
    each: impl Fn(&T) -> R + Sync,
    fold: impl Fn(R, R) -> R + Sync,
) -> R {
    let per = items.len().div_ceil(threads()).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(per)
            .map(|chunk| {
                let (each, fold) = (&each, &fold);
                s.spawn(move || chunk.iter().fold(R::default(), |acc, x| fold(acc, each(x))))
            })
            .map(|h| h.join().unwrap_or_default())
            .collect();
        parts.into_iter().fold(R::default(), &fold)
    })
}

fn open_dir(dir: &Path) -> Result<std::os::fd::OwnedFd> {
    Ok(sys::open_dir_at(sys::CWD, dir)?)
}

/// Bare: the walk, and a `statx` of every manifest relative to the open
/// runs folder. Returns how many were there.
fn walk_stat(dir: &Path) -> Result<usize> {
    let fd = open_dir(dir)?;
    let names = names(dir)?;
    Ok(on_threads(
        &names,
        |n| {
            let rel = Path::new(n).join(MANIFEST_FILE);
            usize::from(sys::stat_at(&fd, &rel, Follow::Yes, Want::STAMP).is_ok())
        },
        |a, b| a + b,
    ))
}

/// An `lstat` of each of `files` in run folder `n` of the open runs folder
/// `fd`; how many were there.
fn lstat_outputs<'a>(
    fd: &std::os::fd::OwnedFd,
    n: &OsString,
    files: impl Iterator<Item = &'a str>,
) -> usize {
    let want = Want::KIND.and(Want::NLINK);
    files
        .filter(|f| {
            let rel = Path::new(n).join(f);
            sys::stat_at(fd, &rel, Follow::No, want).is_ok()
        })
        .count()
}

/// Bare: the walk, and an `lstat` of every registered output (`outputs`,
/// by run folder name, gathered beforehand). Returns how many were there.
fn walk_lstat(dir: &Path, outputs: &[(OsString, Vec<String>)]) -> Result<usize> {
    let fd = open_dir(dir)?;
    let _ = names(dir)?;
    Ok(on_threads(
        outputs,
        |(n, files)| lstat_outputs(&fd, n, files.iter().map(String::as_str)),
        |a, b| a + b,
    ))
}

/// Bare: the walk, and every manifest read and parsed (the library's
/// parser). Returns each run's registered outputs.
fn walk_parse(dir: &Path) -> Result<Vec<(OsString, Vec<String>)>> {
    let names = names(dir)?;
    Ok(on_threads(
        &names,
        |n| {
            let path: PathBuf = dir.join(n).join(MANIFEST_FILE);
            let files = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| parse_manifest(&path, &text).ok())
                .map(|(m, _)| m.outputs.into_iter().map(|o| o.file).collect())
                .unwrap_or_default();
            vec![(n.clone(), files)]
        },
        |mut a, mut b| {
            a.append(&mut b);
            a
        },
    ))
}

/// Bare: the walk, every manifest read and parsed, and an `lstat` of each
/// output it registers: the file-system work of `doctor --full`, in one
/// pass. Returns how many outputs were there.
fn walk_parse_lstat(dir: &Path) -> Result<usize> {
    let fd = open_dir(dir)?;
    let names = names(dir)?;
    Ok(on_threads(
        &names,
        |n| {
            let path: PathBuf = dir.join(n).join(MANIFEST_FILE);
            let Some((m, _)) = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| parse_manifest(&path, &text).ok())
            else {
                return 0;
            };
            lstat_outputs(&fd, n, m.outputs.iter().map(|o| o.file.as_str()))
        },
        |a, b| a + b,
    ))
}

fn ratio(a: Duration, b: Duration) -> String {
    format!("{:.2}×", a.as_secs_f64() / b.as_secs_f64().max(1e-9))
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// The upkeep rows on the project's `n` runs.
pub(crate) fn rows(project: &Logbook, n: usize, row: RowSink<'_>) -> Result<()> {
    let dir = project.config.agent_outputs_folder.clone();
    Index::open(project)?.upkeep().sync_full()?;

    eprintln!("upkeep: walk + stat of every manifest …");
    let (stat, manifests) = best(|| walk_stat(&dir))?;
    eprintln!("upkeep: index sync …");
    let (sync, r) = best(|| Ok(Index::open(project)?.upkeep().sync()?))?;
    let (sync_full, rf) = best(|| Ok(Index::open(project)?.upkeep().sync_full()?))?;
    let per_million = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    row(
        "`index sync`, nothing changed (vs a walk that `stat`s every manifest)",
        format!(
            "{} ({} read; ≈ {:.1} s at 1M)",
            secs(sync),
            r.indexed,
            per_million(sync)
        ),
        format!("{} ({manifests} manifests)", secs(stat)),
        ratio(sync, stat),
        "≤ 1.3×; ≤ 2 s at 1M",
        Some(sync.as_secs_f64() <= 1.3 * stat.as_secs_f64() && per_million(sync) <= 2.0),
    );
    row(
        "`index sync --full`, nothing changed (every output `lstat`ed too)",
        format!("{} ({} read)", secs(sync_full), rf.indexed),
        format!("{} (the walk above)", secs(stat)),
        ratio(sync_full, stat),
        "",
        None,
    );

    eprintln!("upkeep: walk + read and parse every manifest …");
    let (parse, outputs) = best(|| walk_parse(&dir))?;
    let files: usize = outputs.iter().map(|(_, f)| f.len()).sum();
    eprintln!("upkeep: walk + lstat of every output …");
    let (lstat, present) = best(|| walk_lstat(&dir, &outputs))?;
    eprintln!("upkeep: doctor …");
    let opts = doctor::Options::default();
    let (doc, d) = best(|| Ok(doctor::check(project, &opts)?))?;
    row(
        "`doctor` (vs a walk that `lstat`s every registered output)",
        format!(
            "{} ({} runs; ≈ {:.1} s at 1M)",
            secs(doc),
            d.runs_checked,
            per_million(doc)
        ),
        format!("{} ({files} outputs, {present} present)", secs(lstat)),
        ratio(doc, lstat),
        "≤ 30 s at 1M",
        Some(per_million(doc) <= 30.0),
    );
    // Part of every doctor, on a thread of its own beside the run folders:
    // the index file's pages checked (`PRAGMA quick_check`).
    let (pages, _) = best(|| Ok(Index::damage(project)?))?;
    row(
        "the index's page check alone (part of both `doctor` rows)",
        secs(pages),
        String::new(),
        String::new(),
        "",
        None,
    );
    eprintln!("upkeep: doctor --full …");
    let full = doctor::Options {
        full: true,
        ..doctor::Options::default()
    };
    let (doc_full, _) = best(|| Ok(doctor::check(project, &full)?))?;
    eprintln!("upkeep: walk + read and parse every manifest + lstat of every output …");
    let (parse_lstat, _) = best(|| walk_parse_lstat(&dir))?;
    row(
        "`doctor --full` (vs a walk that reads and parses every manifest and `lstat`s every output)",
        format!(
            "{} (≈ {:.1} s at 1M)",
            secs(doc_full),
            per_million(doc_full)
        ),
        format!(
            "{} ({} manifests, {files} outputs)",
            secs(parse_lstat),
            outputs.len()
        ),
        ratio(doc_full, parse_lstat),
        "≤ 1.5×",
        Some(doc_full.as_secs_f64() <= 1.5 * parse_lstat.as_secs_f64()),
    );
    row(
        "`doctor --full` against the parse walk alone (no output `lstat`ed)",
        secs(doc_full),
        format!("{} (the walk above)", secs(parse)),
        ratio(doc_full, parse),
        "",
        None,
    );
    Ok(())
}

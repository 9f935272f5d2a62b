//! `logbook secrets scan`: the secrets ([`crate::model::secrets`]) in what
//! Logbook stores: transcripts (live and archived), every file of every run
//! folder (live and archived), work sessions and their workflow states.
//! Each finding names the file, where in it (a JSON path such as
//! `messages[3].content[0].text`, a line, or for a file too large to parse
//! a byte offset) and the secret masked; nothing is rewritten.
//!
//! A JSON file is scanned in its decoded strings (and, through the
//! scanner's own decoding, in strings that hold JSON again), so a key split
//! by escapes is found. A file larger than [`WHOLE_LIMIT`] is read in
//! overlapping chunks: memory holds a chunk, not the file.

use crate::Logbook;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Next, Result, Step};
use crate::model::notice::Notice;
use crate::model::secrets::{self, Found, Kind};
use logbook_index::Index;
use logbook_store::scan_files::{self, Scanned};

/// The largest file parsed whole (as JSON, or as text with line numbers);
/// a larger one is scanned in chunks.
pub const WHOLE_LIMIT: u64 = 32 * 1024 * 1024;

const CHUNK: usize = 4 * 1024 * 1024;
const OVERLAP: usize = 64 * 1024;

/// One secret found in a stored file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The file, relative to the project root when it is inside it.
    pub file: String,
    /// Where in it: a JSON path, `line N`, or `byte N`.
    pub location: String,
    /// What it is (`anthropic-key`, `private-key`…).
    pub kind: String,
    /// The secret masked: its first 4 and last 2 characters at most.
    pub masked: String,
}

/// What a scan found, and how much it read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// The findings, file by file in the order scanned.
    pub findings: Vec<Finding>,
    /// Files read.
    pub files: u64,
    /// Files passed over as binary.
    pub binary: u64,
    /// Files that could not be read, with why.
    pub unreadable: Vec<(String, String)>,
}

/// Scans every stored transcript, run folder and work session.
pub fn scan(p: &Logbook) -> Result<Report> {
    let mut report = Report::default();
    for file in stored_files(p, true)? {
        scan_file(p, &file, &mut report);
    }
    Ok(report)
}

/// The files a scan reads, in a stable order: transcripts, run folders
/// (with `outputs`), work sessions.
fn stored_files(p: &Logbook, outputs: bool) -> Result<Vec<PathBuf>> {
    let mut files = vec![];
    let transcripts = &p.config.transcripts_dir;
    for dir in [
        transcripts.clone(),
        logbook_store::transcript::archive_dir(p),
    ] {
        if logbook_store::fs::is_folder(&dir) {
            let mut here: Vec<PathBuf> = logbook_store::transcript::transcript_files(&dir)?
                .into_iter()
                .map(|(_, path)| path)
                .collect();
            here.sort();
            files.extend(here);
        }
    }
    let run_dirs = [&p.config.agent_outputs_folder, &p.config.archive_folder];
    for dir in run_dirs.into_iter().filter(|_| outputs) {
        let mut folders = vec![];
        for f in logbook_store::runs::walk(dir)? {
            folders.push(f?.path);
        }
        folders.sort();
        for folder in folders {
            files.extend(scan_files::files_under(&folder));
        }
    }
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        if logbook_store::fs::is_folder(dir) {
            let mut here = logbook_store::work_session::session_files(dir)?;
            here.extend(logbook_store::workflow::state_files(dir)?);
            here.sort();
            files.extend(here);
        }
    }
    files.dedup();
    Ok(files)
}

fn shown(p: &Logbook, file: &Path) -> String {
    file.strip_prefix(&p.config.root)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

fn scan_file(p: &Logbook, file: &Path, report: &mut Report) {
    let name = shown(p, file);
    let mut add = |location: String, found: Vec<Found>| {
        for f in found {
            report.findings.push(Finding {
                file: name.clone(),
                location: location.clone(),
                kind: f.kind.as_str().to_string(),
                masked: secrets::mask(&f.secret),
            });
        }
    };
    match scan_files::read(file, WHOLE_LIMIT) {
        Err(e) => {
            report.unreadable.push((shown(p, file), e.to_string()));
            return;
        }
        Ok(Scanned::Binary) => {
            report.binary += 1;
            return;
        }
        Ok(Scanned::Whole(text)) => {
            let json =
                file.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
            match json
                .then(|| serde_json::from_str::<serde_json::Value>(&text).ok())
                .flatten()
            {
                Some(v) => secrets::each_string(&v, "", &mut |path, found| {
                    add(
                        if path.is_empty() {
                            "(value)".into()
                        } else {
                            path.to_string()
                        },
                        found,
                    );
                }),
                None => {
                    let mut line = 1;
                    let mut at = 0;
                    for f in secrets::find(&text) {
                        line += text[at..f.range.start].matches('\n').count();
                        at = f.range.start;
                        add(format!("line {line}"), vec![f]);
                    }
                }
            }
        }
        Ok(Scanned::Large) => {
            // Findings in the overlap are seen twice: the second is dropped.
            let mut seen_to = 0u64;
            let chunked = scan_files::each_chunk(file, CHUNK, OVERLAP, &mut |offset, text| {
                for f in secrets::find(text) {
                    let at = offset + f.range.start as u64;
                    if at < seen_to {
                        continue;
                    }
                    seen_to = at + (f.range.len() as u64);
                    add(format!("byte {at}"), vec![f]);
                }
            });
            if let Err(e) = chunked {
                report.unreadable.push((shown(p, file), e.to_string()));
                return;
            }
        }
    }
    report.files += 1;
}

/// What a doctor counted, file by file: (size, mtime ns, secrets) by path.
#[derive(Default, Serialize, serde::Deserialize)]
struct Counts {
    /// [`COUNTS_VERSION`]: counts made by other rules are dropped.
    version: u64,
    files: std::collections::BTreeMap<PathBuf, (u64, i128, u64)>,
}

/// Bumped when the scanner's rules change.
const COUNTS_VERSION: u64 = 1;

/// The largest file a default `doctor` scans for its count: a larger one
/// (a long session) is counted by `doctor --full`, so a doctor after a
/// large import stays quick.
const QUICK_LIMIT: u64 = 8 * 1024 * 1024;

/// Tells the face how many secrets the stored files hold, as a notice
/// (`logbook doctor`): never a failure, and a scan that cannot run says
/// nothing. Each file's count is kept in the index with its size and
/// mtime (paths and counts, never a secret), so a doctor reads only what
/// changed since the last; run outputs (every file of every run folder,
/// millions at scale) are counted only with `full` (`doctor --full`).
/// Without `index_usable` the counts are neither read nor kept.
pub fn notice_count(p: &Logbook, full: bool, index_usable: bool) {
    let Ok(files) = stored_files(p, full) else {
        return;
    };
    // A damaged index is left alone: doctor names it, and a rebuild comes
    // first.
    let index = index_usable.then(|| Index::open(p).ok()).flatten();
    let kept = index
        .as_ref()
        .and_then(|i| i.upkeep().secrets_counts().ok().flatten());
    let mut counts = kept
        .as_deref()
        .and_then(|json| serde_json::from_str::<Counts>(json).ok())
        .filter(|c| c.version == COUNTS_VERSION)
        .unwrap_or_default();
    let (mut n, mut skipped) = (0, 0);
    for file in &files {
        let Some((len, mtime)) = scan_files::stamp(file) else {
            continue;
        };
        if !full && len > QUICK_LIMIT {
            skipped += 1;
            continue;
        }
        n += match counts.files.get(file) {
            Some(&(l, m, known)) if (l, m) == (len, mtime) => known,
            _ => {
                let mut report = Report::default();
                scan_file(p, file, &mut report);
                let found = report.findings.len() as u64;
                if report.unreadable.is_empty() {
                    counts.files.insert(file.clone(), (len, mtime, found));
                }
                found
            }
        };
    }
    // Files gone since are forgotten; what `--full` counted of run
    // outputs is kept for the next `--full`.
    counts.files.retain(|f, _| scan_files::stamp(f).is_some());
    counts.version = COUNTS_VERSION;
    // Written only when it changed: a doctor of a project where nothing
    // changed leaves the index as it was, as every read does.
    if let (Some(index), Ok(json)) = (&index, serde_json::to_string(&counts))
        && kept.as_deref() != Some(json.as_str())
    {
        let _ = index.upkeep().set_secrets_counts(&json);
    }
    if !full && skipped > 0 && n == 0 {
        p.notices.push(
            Notice::new(format!(
                "{skipped} stored file(s) over 8 MiB not scanned for secrets"
            ))
            .next(
                Next::from(Step::DoctorFull)
                    .text(" or ")
                    .step(Step::SecretsScan)
                    .text(" reads them"),
            ),
        );
    }
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        let mut next = Next::of(
            Step::SecretsScan,
            " lists them (exports and team pushes redact them)",
        );
        let what = if full {
            format!("{n} secret{s} found in stored transcripts, run outputs or work sessions")
        } else {
            next = next
                .text("; ")
                .step(Step::DoctorFull)
                .text(" also counts run outputs and files over 8 MiB");
            format!("{n} secret{s} found in stored transcripts or work sessions")
        };
        p.notices.push(Notice::new(what).next(next));
    }
}

/// The kinds a scan looks for, by name.
pub fn kinds() -> Vec<&'static str> {
    Kind::ALL.iter().map(|k| k.as_str()).collect()
}

//! The status-line row: `logbook statusline` runs after every message of a
//! Claude Code session, so its whole process (read the status JSON, this
//! session's exact tokens and cost, today's cost here, the work session's
//! budget) is held within 5× `logbook --version`.

use std::path::Path;

use anyhow::Result;

use crate::measure::{percentile, run, timed};
use crate::report::RowSink;

const REPS: usize = 30;
/// Calls in the session's log (and in each of the repository's others).
const CALLS: usize = 400;
/// Other sessions of the repository (today's cost reads their counts too).
const SESSIONS: usize = 20;
const SESSION: &str = "5e55a0e0-0000-4000-8000-000000000000";

/// Times `logbook statusline` in a project of its own under `dir`.
pub(crate) fn rows(bin: &Path, dir: &Path, row: RowSink<'_>) -> Result<()> {
    eprintln!("statusline whole-process time …");
    let root = dir.join("statusline-bench");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("logs"))?;
    run(bin, &root, &["init"], None)?;
    for s in 0..=SESSIONS {
        let id = if s == 0 {
            SESSION.to_string()
        } else {
            format!("5e55a0e0-0000-4000-8000-{s:012}")
        };
        std::fs::write(root.join(format!("logs/{id}.jsonl")), log(&id, &root))?;
    }
    run(bin, &root, &["transcript", "import", "logs"], None)?;
    run(bin, &root, &["start", "--yes", "--max-cost", "25"], None)?;
    run(bin, &root, &["usage", "--from-transcript", SESSION], None)?;
    let input = format!(
        r#"{{"session_id":"{SESSION}","model":{{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"}},"workspace":{{"current_dir":"{}"}}}}"#,
        root.display()
    );
    let (mut lines, mut versions) = (vec![], vec![]);
    for i in 0..=REPS {
        let l = timed(bin, &root, &["statusline"], Some(&input))?;
        let v = timed(bin, &root, &["--version"], None)?;
        if i > 0 {
            lines.push(l);
            versions.push(v);
        }
    }
    let l50 = percentile(&mut lines, 0.5);
    let v50 = percentile(&mut versions, 0.5);
    row(
        "`logbook statusline` (Claude Code's status line: tokens, cost, today's cost, budget), whole process",
        format!(
            "{l50:.2} ms median of {REPS}, {} sessions of {CALLS} calls in the repository",
            SESSIONS + 1
        ),
        format!("{v50:.2} ms median `logbook --version`"),
        format!("{:.2}×", l50 / v50),
        "under 5× `--version`",
        Some(l50 < 5.0 * v50),
    );
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}

/// A Claude Code log of `CALLS` calls with cache reads and writes, made
/// today (UTC): every session counts in today's cost, the line's worst case.
fn log(id: &str, cwd: &Path) -> String {
    let cwd = cwd.display();
    let today: String = logbook::clock::now_string().chars().take(10).collect();
    let mut out = String::new();
    for n in 0..CALLS {
        let (s, m) = (n % 60, (n / 60) % 60);
        out.push_str(&format!(
            r#"{{"type":"user","sessionId":"{id}","cwd":"{cwd}","uuid":"{id:.24}{:012}","timestamp":"{today}T00:{m:02}:{s:02}.000Z","message":{{"role":"user","content":"step {n}"}}}}"#,
            2 * n
        ));
        out.push('\n');
        out.push_str(&format!(
            r#"{{"type":"assistant","sessionId":"{id}","cwd":"{cwd}","uuid":"{id:.24}{:012}","timestamp":"{today}T00:{m:02}:{s:02}.500Z","requestId":"req_{id}_{n}","message":{{"id":"msg_{id}_{n}","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"done {n}"}}],"usage":{{"input_tokens":12,"output_tokens":300,"cache_creation_input_tokens":800,"cache_read_input_tokens":{}}}}}}}"#,
            2 * n + 1,
            20_000 + 800 * n
        ));
        out.push('\n');
    }
    out
}

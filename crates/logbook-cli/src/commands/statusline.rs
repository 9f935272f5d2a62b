//! `logbook statusline`: Claude Code's status-line command. It reads the
//! status-line JSON on stdin and prints one line; it never prints an error
//! into the status line (garbage in: an empty line, exit 0).

use std::io::Read as _;
use std::path::PathBuf;

use logbook::Logbook;
use logbook::model::naming::thousands;
use logbook::model::terminal::cell;
use serde_json::Value;

use crate::printer::Output;

/// The most of stdin read: Claude Code's status JSON is a few hundred bytes.
const MAX_INPUT: u64 = 1024 * 1024;

/// The line for what Claude Code sent on stdin; an empty one for anything else.
pub(crate) fn run(root: Option<PathBuf>) -> Output {
    let mut text = String::new();
    let read = std::io::stdin().take(MAX_INPUT).read_to_string(&mut text);
    let line = match (read, serde_json::from_str::<Value>(&text)) {
        (Ok(_), Ok(v @ Value::Object(_))) => line(&v, root),
        _ => String::new(),
    };
    Output::new(Value::String(line.clone()), format!("{line}\n"))
}

fn line(v: &Value, root: Option<PathBuf>) -> String {
    let s = |ptr: &str| {
        v.pointer(ptr)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let model = s("/model/display_name").or_else(|| s("/model/id"));
    let cwd = s("/workspace/current_dir")
        .or_else(|| s("/cwd"))
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok());
    let mut parts: Vec<String> = model.map(|m| cell(m).into_owned()).into_iter().collect();
    // Claude Code runs the command in its own working folder: the project
    // above it (else the per-user home) holds what its hooks recorded.
    let project = match (&root, std::env::current_dir().ok().or_else(|| cwd.clone())) {
        (Some(r), _) => Logbook::discover(r, Some(r)).ok(),
        (None, Some(here)) => Logbook::for_agent(&here).ok(),
        (None, None) => None,
    };
    if let (Some(project), Some(cwd)) = (project, cwd) {
        let p = project;
        let st = logbook::ops::statusline::status_line(&p, s("/session_id"), &cwd);
        if let Some(tokens) = st.tokens {
            parts.push(format!("{} tok {}", thousands(tokens), usd(st.cost_usd)));
        }
        if let Some(today) = st.today_usd {
            parts.push(format!("today {}", usd(Some(today))));
        }
        if let Some((ratio, dollars)) = st.budget {
            let pct = ratio * 100.0;
            let filled = ((pct / 20.0).round() as i64).clamp(0, 5) as usize;
            parts.push(format!(
                "{} [{}{}] {}%",
                if dollars { "$ budget" } else { "budget" },
                "█".repeat(filled),
                "░".repeat(5 - filled),
                pct.round() as i64
            ));
        }
    }
    parts.join(" · ")
}

fn usd(c: Option<f64>) -> String {
    c.map_or_else(|| "not priced".into(), |c| format!("${c:.2}"))
}

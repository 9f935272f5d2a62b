//! Usage the viewer draws and the CLI prints: one fixture of two agents
//! (a Claude Code session whose calls cross midnight with two models, and
//! a Codex rollout over two days), `transcript usage --by day|repo` and
//! `--source`, the usage page's numbers equal to the CLI's, and a listing
//! whose `--model` and `--source` are answered from the index alone.

use std::path::PathBuf;

use serde_json::Value;

use crate::harness::TestProject;
use crate::serve::{get, serve};

const CLAUDE: &str = "7a1d0c5e-0000-4000-8000-0000000a5a9e";
const CODEX: &str = "0199c0de-0000-7000-8000-0000000a5a9e";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/usage")
}

/// A project with both logs imported.
fn imported() -> TestProject {
    let t = TestProject::new();
    t.run(&["init"]).ok();
    let logs = fixture();
    t.run(&["transcript", "import", logs.to_str().unwrap()])
        .ok();
    t
}

/// Each row's key and total, as `transcript usage --json` gives them.
fn totals(report: &Value) -> Vec<(String, u64)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["total_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn usage_by_day_counts_each_call_on_its_own_day_split_by_model() {
    let t = imported();
    let r = t.json(&["transcript", "usage", "--all", "--by", "day", "--json"]);
    // The Claude session began on the 18th; its second call, after
    // midnight, counts on the 19th, with the Codex rollout's first day.
    assert_eq!(
        totals(&r),
        [
            ("2026-01-18".to_string(), 6120),
            ("2026-01-19".to_string(), 3060 + 440),
            ("2026-01-20".to_string(), 550),
        ]
    );
    let day19 = &r["rows"][1]["byModel"];
    assert_eq!(day19["claude-sonnet-4-5"]["total_tokens"], 3060);
    assert_eq!(day19["gpt-5-codex"]["total_tokens"], 440);
    assert!(day19.get("claude-opus-4-5").is_none(), "{day19}");
    assert_eq!(r["total"]["total_tokens"], 10170);
    // The human table prints the same numbers.
    let human = t
        .run(&["transcript", "usage", "--all", "--by", "day"])
        .ok()
        .to_string();
    for n in ["6,120", "3,500", "550", "10,170"] {
        assert!(human.contains(n), "{n} missing:\n{human}");
    }
    // The 19th's two models, each on its own line under the day.
    let lines: Vec<&str> = human.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("2026-01-19"))
        .unwrap();
    assert!(lines[at + 1].starts_with("  claude-sonnet-4-5") && lines[at + 1].ends_with("3,060"));
    assert!(lines[at + 2].starts_with("  gpt-5-codex") && lines[at + 2].ends_with("440"));
    assert!(lines[at + 3].starts_with("2026-01-20"), "{human}");
}

#[test]
fn usage_of_a_whole_id_that_names_no_transcript_is_not_found() {
    let t = imported();
    let absent = "3c5e7a90-1b2d-4f6e-8a0c-2e4f6a8b0c1d";
    let shown = t
        .run(&["transcript", "show", absent])
        .not_found()
        .to_string();
    let usage = t
        .run(&["transcript", "usage", absent])
        .not_found()
        .to_string();
    assert!(
        usage.contains(absent) && !usage.contains("No measured usage"),
        "{usage}"
    );
    assert_eq!(usage, shown);
    // A transcript that is there still answers.
    let r = t.json(&["transcript", "usage", CLAUDE, "--json"]);
    assert_eq!(r["total"]["total_tokens"], 9180);
}

#[test]
fn usage_by_repo_and_by_source() {
    let t = imported();
    let r = t.json(&["transcript", "usage", "--all", "--by", "repo", "--json"]);
    // Neither workdir is a checkout: each is its folder.
    assert_eq!(
        totals(&r),
        [
            ("/w/usage".to_string(), 9180),
            ("/w/codex-usage".to_string(), 990),
        ]
    );
    assert_eq!(
        r["rows"][0]["byModel"]["claude-opus-4-5"]["total_tokens"],
        6120
    );
    let codex = t.json(&[
        "transcript",
        "usage",
        "--all",
        "--by",
        "day",
        "--source",
        "codex",
        "--json",
    ]);
    assert_eq!(
        totals(&codex),
        [
            ("2026-01-19".to_string(), 440),
            ("2026-01-20".to_string(), 550)
        ]
    );
    let bad = t
        .run(&["transcript", "usage", "--all", "--source", "gpt"])
        .err()
        .to_string();
    assert!(
        bad.contains("expected claude-code, codex or logbook"),
        "{bad}"
    );
}

#[test]
fn the_usage_page_shows_the_numbers_the_cli_prints() {
    let t = imported();
    let cli = t.json(&["transcript", "usage", "--all", "--by", "day", "--json"]);
    let (mut child, url) = serve(&t, &["--bind", "127.0.0.1:0"], None);
    let page = get(&url, "/usage", "");
    let api = get(&url, "/api/usage?by=day", "");
    let bad = get(&url, "/transcripts?source=gpt", "");
    let _ = child.kill();
    let _ = child.wait();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    // Each day's row of the page's table carries its exact total.
    let shown: Vec<(String, u64)> = page
        .split("data-day=\"")
        .skip(1)
        .map(|s| {
            let day = s.split('"').next().unwrap().to_string();
            let total = s
                .split("data-total=\"")
                .nth(1)
                .and_then(|v| v.split('"').next())
                .unwrap()
                .parse()
                .unwrap();
            (day, total)
        })
        .collect();
    assert_eq!(shown, totals(&cli));
    let body = api.split("\r\n\r\n").nth(1).unwrap();
    let api: Value = serde_json::from_str(body).unwrap();
    assert_eq!(api["rows"], cli["rows"]);
    assert_eq!(api["total"], cli["total"]);
    // A bad filter is refused with the CLI's own sentence.
    let cli_err = t
        .run(&["transcript", "list", "--all", "--source", "gpt"])
        .err()
        .to_string();
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    assert!(
        bad.contains(crate::harness::sentence(&cli_err)),
        "{bad}\nvs {cli_err}"
    );
}

#[test]
fn list_json_has_models_and_usage_and_model_is_answered_from_the_index() {
    let t = imported();
    let all = t.json(&["transcript", "list", "--all", "--json"]);
    let claude = all
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == CLAUDE)
        .unwrap()
        .clone();
    assert_eq!(
        claude["models"],
        serde_json::json!(["claude-opus-4-5", "claude-sonnet-4-5"])
    );
    assert_eq!(claude["usage"]["total_tokens"], 9180);
    assert_eq!(claude["usage"]["cache_read_input_tokens"], 8000);
    // Overwrite the stored file with unreadable bytes of the same length and
    // the same modification time: the index does not see a change, so a
    // listing that still finds it by model and source read only the index.
    let file = PathBuf::from(claude["file"].as_str().unwrap());
    let meta = std::fs::metadata(&file).unwrap();
    let len = meta.len() as usize;
    let mtime = meta.modified().unwrap();
    std::fs::write(&file, vec![b'#'; len]).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["transcript", "list", "--all", "--json"];
        all.extend_from_slice(args);
        t.json(&all)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    // The human list's MODEL column, and its measured tokens.
    let human = t.run(&["transcript", "list", "--all"]).ok().to_string();
    let line = human.lines().find(|l| l.contains(CODEX)).unwrap();
    // Then its cost (gpt-5-codex's prices, the shipped table), then MODEL.
    assert!(
        line.contains("990 tokens     $0.0014  gpt-5-codex"),
        "{line}"
    );
    assert_eq!(ids(&["--model", "SONNET"]), [CLAUDE]);
    assert_eq!(
        ids(&["--source", "claude-code", "--model", "opus"]),
        [CLAUDE]
    );
    assert_eq!(ids(&["--model", "gpt-5"]), [CODEX]);
    assert!(ids(&["--source", "codex", "--model", "opus"]).is_empty());
}

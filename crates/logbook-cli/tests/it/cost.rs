//! Costs beside exact tokens (issue 52), worked out by hand from the
//! shipped price table: cache writes and reads, a model switch, a call past
//! a long-context tier, a subagent, and a model the table does not price.

use serde_json::Value;

use crate::harness::TestProject;

pub(crate) const MAIN: &str = "aaaaaaaa-1111-4222-8333-444455556666";
const ODD: &str = "bbbbbbbb-1111-4222-8333-444455556666";

/// One Claude Code assistant line: a call of `model` with these counts.
pub(crate) fn call(
    session: &str,
    n: u32,
    model: &str,
    counts: [u64; 4],
    sidechain: bool,
) -> String {
    let [input, output, write, read] = counts;
    let agent = if sidechain {
        r#""isSidechain":true,"agentId":"sub1","#
    } else {
        ""
    };
    format!(
        r#"{{{agent}"type":"assistant","sessionId":"{session}","cwd":"/work/costly","uuid":"00000000-0000-4000-8000-{n:012}","timestamp":"2026-03-02T10:00:{n:02}.000Z","requestId":"req_{n}","message":{{"id":"msg_{n}","role":"assistant","model":"{model}","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{input},"output_tokens":{output},"cache_creation_input_tokens":{write},"cache_read_input_tokens":{read}}}}}}}"#
    )
}

/// A user line opening a session.
pub(crate) fn prompt(session: &str, sidechain: bool) -> String {
    let agent = if sidechain {
        r#""isSidechain":true,"agentId":"sub1","#
    } else {
        ""
    };
    format!(
        r#"{{{agent}"type":"user","sessionId":"{session}","cwd":"/work/costly","uuid":"00000000-0000-4000-8000-0000000000{}","timestamp":"2026-03-02T10:00:00.000Z","message":{{"role":"user","content":"Go"}}}}"#,
        if sidechain { "99" } else { "00" }
    )
}

/// Writes the logs: the main session (sonnet 4.5 with cache writes and
/// reads, a switch to haiku, a sonnet 4 call past 200k), its subagent
/// (haiku), and another session of a model no table prices.
pub(crate) fn write_logs(t: &TestProject) -> std::path::PathBuf {
    let main = [
        prompt(MAIN, false),
        call(
            MAIN,
            1,
            "claude-sonnet-4-5-20250929",
            [1_000, 2_000, 10_000, 100_000],
            false,
        ),
        call(MAIN, 2, "claude-haiku-4-5", [1_000, 1_000, 0, 0], false),
        call(
            MAIN,
            3,
            "claude-sonnet-4-20250514",
            [100_000, 1_000, 1, 100_000],
            false,
        ),
    ];
    let sub = [
        prompt(MAIN, true),
        call(MAIN, 4, "claude-haiku-4-5", [2_000, 100, 0, 0], true),
    ];
    let odd = [
        prompt(ODD, false),
        call(ODD, 5, "gpt-9-made-up", [10, 10, 0, 0], false),
    ];
    t.write(
        &format!("logs/-work-costly/{MAIN}.jsonl"),
        &(main.join("\n") + "\n"),
    );
    t.write(
        &format!("logs/-work-costly/{MAIN}/subagents/agent-sub1.jsonl"),
        &(sub.join("\n") + "\n"),
    );
    t.write(
        &format!("logs/-work-costly/{ODD}.jsonl"),
        &(odd.join("\n") + "\n"),
    );
    t.path("logs")
}

fn close(v: &Value, want: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"));
    assert!((got - want).abs() < 1e-6, "got {got}, want {want}");
}

#[test]
fn a_session_costs_each_call_at_its_own_models_price() {
    let t = TestProject::new();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let one = t.json(&["transcript", "usage", MAIN]);
    let ts = one["transcripts"].as_array().unwrap();
    let main = ts.iter().find(|t| t["id"] == MAIN).unwrap();
    let sub = ts.iter().find(|t| t["kind"] == "subagent").unwrap();
    // sonnet 4.5: 1000×$3 + 2000×$15 + 10000×$3.75 (5-minute write) +
    // 100000×$0.30, per million = $0.1005. haiku 4.5: 1000×$1 + 1000×$5 =
    // $0.006. sonnet 4 past 200k (100000 + 1 + 100000 prompt tokens), the
    // whole call at its long-context rates: 100000×$6 + 1000×$22.50 +
    // 1×$7.50 + 100000×$0.60 = $0.6825075. Sum: $0.7890075.
    close(&main["cost_usd"], 0.789_007_5);
    close(&main["costByModel"]["claude-sonnet-4-5-20250929"], 0.1005);
    close(&main["costByModel"]["claude-haiku-4-5"], 0.006);
    close(
        &main["costByModel"]["claude-sonnet-4-20250514"],
        0.682_507_5,
    );
    // The subagent: 2000×$1 + 100×$5 = $0.0025, apart and in the total.
    close(&sub["cost_usd"], 0.0025);
    close(&main["cost_with_subagents_usd"], 0.791_507_5);
    close(&one["cost_usd"], 0.791_507_5);
    let rows = one["rows"].as_array().unwrap();
    let haiku = rows
        .iter()
        .find(|r| r["key"] == "claude-haiku-4-5")
        .unwrap();
    close(&haiku["cost_usd"], 0.0085);
    // Which table, and what it assumed.
    let basis = &one["costBasis"];
    assert!(
        basis["prices"]["source"]
            .as_str()
            .unwrap()
            .contains("LiteLLM")
    );
    assert_eq!(basis["prices"]["date"], "2026-11-29");
    let notes = basis["notes"].to_string();
    assert!(notes.contains("5-minute rate"), "{notes}");
    let text = t.run(&["transcript", "usage", MAIN, "--cost"]);
    assert!(text.ok().contains("$0.7915"), "{}", text.stdout);
    assert!(text.stdout.contains("5-minute rate"), "{}", text.stdout);
}

#[test]
fn a_model_without_a_price_is_not_priced_never_zero() {
    let t = TestProject::new();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let odd = t.json(&["transcript", "usage", ODD]);
    assert_eq!(odd["cost_usd"], Value::Null);
    assert_eq!(odd["transcripts"][0]["cost_usd"], Value::Null);
    assert_eq!(odd["rows"][0]["cost_usd"], Value::Null);
    assert!(
        odd["costBasis"]["notes"]
            .to_string()
            .contains("gpt-9-made-up")
    );
    // In a report with priced sessions, the total is not known either; the
    // priced models' rows still are.
    let all = t.json(&["transcript", "usage", "--all", "--by", "session"]);
    assert_eq!(all["cost_usd"], Value::Null);
    let main = all["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == MAIN)
        .unwrap();
    close(&main["cost_usd"], 0.791_507_5);
    let text = t.run(&["transcript", "usage", ODD, "--cost"]);
    assert!(text.ok().contains("not priced"), "{}", text.stdout);
    // Without --cost the text has no cost column.
    let plain = t.run(&["transcript", "usage", MAIN]);
    assert!(!plain.ok().contains('$'), "{}", plain.stdout);
}

#[test]
fn prices_show_and_update_offline() {
    let t = TestProject::new();
    // A project here: the table is stored in it (else the per-user home's).
    t.run(&["init"]).ok();
    let shown = t.json(&["prices", "show", "claude-sonnet-4-5"]);
    assert_eq!(shown["origin"], "shipped");
    close(&shown["models"][0]["base"]["input"], 3e-6);
    t.run(&["prices", "show", "gpt-9-made-up"]).not_found();
    // A newer table that prices the odd model: costs follow it, and say so.
    t.write(
        "newer.json",
        r#"{"gpt-9-made-up": {"litellm_provider": "openai", "mode": "chat",
            "input_cost_per_token": 0.001, "output_cost_per_token": 0.002}}"#,
    );
    let done = t.json(&["prices", "update", t.path("newer.json").to_str().unwrap()]);
    assert_eq!(done["models"], 1);
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let odd = t.json(&["transcript", "usage", ODD]);
    // 10×$0.001 + 10×$0.002
    close(&odd["cost_usd"], 0.03);
    assert_eq!(odd["costBasis"]["prices"]["source"], "LiteLLM newer.json");
    // What is not in the newer table is not priced, never zero.
    assert_eq!(
        t.json(&["transcript", "usage", MAIN])["cost_usd"],
        Value::Null
    );
    t.write("bad.json", "{\"x\": 1}");
    let bad = t.run(&["prices", "update", t.path("bad.json").to_str().unwrap()]);
    assert!(bad.err().contains("LiteLLM"), "{}", bad.stderr);
    t.run(&["prices", "update", t.path("missing.json").to_str().unwrap()])
        .not_found();
}

#[test]
fn a_work_session_costs_what_its_linked_agent_sessions_cost() {
    let t = TestProject::new();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let big = "10000000";
    t.json(&[
        "start",
        "--client",
        "acme",
        "--project",
        "x",
        "--max-cost",
        "1",
        "--max-tokens",
        big,
    ]);
    let s = t.json(&["status"]);
    assert_eq!(s["cost"]["max_usd"], 1.0);
    close(&s["cost"]["counted_usd"], 0.0);
    assert_eq!(s["indicator"], "active");
    // Linked by usage --from-transcript: the main session and its subagent.
    t.json(&["usage", "--from-transcript", MAIN]);
    let s = t.json(&["status"]);
    close(&s["cost"]["counted_usd"], 0.791_507_5);
    // 79 % of $1: the token budget is far, the dollar one not yet at 80 %.
    assert_eq!(s["indicator"], "active");
    let refused = t.run(&["budget", "--add-cost=-0.05"]);
    assert!(refused.err().contains("positive"), "{}", refused.stderr);
    t.json(&["budget", "--add-cost", "0.05"]);
    // $0.7915 of $1.05: 75 %.
    let s = t.json(&["status"]);
    close(&s["cost"]["max_usd"], 1.05);
    // A lower limit: past 80 % the nearer limit turns the indicator yellow.
    t.json(&["start", "--yes", "--max-cost", "0.9", "--max-tokens", big]);
    t.json(&["usage", "--from-transcript", MAIN]);
    let s = t.json(&["status"]);
    assert_eq!(s["indicator"], "warning");
    let text = t.run(&["status"]);
    assert!(
        text.ok().contains("Cost: $0.7915 / $0.90 (88%)"),
        "{}",
        text.stdout
    );
    let tokens = t.json(&["tokens"]);
    close(&tokens["cost"]["counted_usd"], 0.791_507_5);
    let closed = t.run(&["close"]);
    assert!(closed.ok().contains("Cost: $0.7915"), "{}", closed.stdout);
}

/// `logbook statusline` fed `input` on stdin.
fn statusline(t: &TestProject, input: &str) -> crate::harness::Run {
    use std::io::Write as _;
    let mut c = t.cmd(&["statusline"]);
    c.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    crate::harness::Run::from(out)
}

#[test]
fn the_status_line_shows_model_tokens_cost_and_budget_and_never_an_error() {
    let t = TestProject::new();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    for garbage in ["", "not json", "[1,2]", "\u{1b}[31m{"] {
        let r = statusline(&t, garbage);
        assert_eq!(r.ok(), "\n", "{garbage:?}");
        assert_eq!(r.stderr, "");
    }
    t.json(&[
        "start",
        "--yes",
        "--max-cost",
        "1",
        "--max-tokens",
        "10000000",
    ]);
    t.json(&["usage", "--from-transcript", MAIN]);
    let input = format!(
        r#"{{"session_id":"{MAIN}","model":{{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5\u001b[2J"}},"workspace":{{"current_dir":"/work/costly"}}}}"#
    );
    let r = statusline(&t, &input);
    let line = r.ok();
    assert!(line.starts_with("Sonnet 4.5"), "{line}");
    assert!(!line.contains('\u{1b}'), "{line:?}");
    assert!(line.contains("318,101 tok $0.79"), "{line}");
    assert!(line.contains("$ budget [████░] 79%"), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
}

#[test]
fn the_otlp_export_carries_each_turns_cost() {
    use crate::export::{Collector, attr, spans_of};
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    let t = TestProject::new();
    t.run(&["init"]).ok();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let c = Collector::start(vec![]);
    let endpoint = c.base();
    t.json(&["export", "otlp", "--endpoint", &endpoint, "--all"]);
    let spans = spans_of(&c.received(), false);
    let cost_of = |model: &str| -> Vec<f64> {
        spans
            .iter()
            .filter(|s| s.name == format!("chat {model}"))
            .filter_map(|s| match attr(s, "gen_ai.usage.cost") {
                Some(Any::DoubleValue(d)) => Some(*d),
                _ => None,
            })
            .collect()
    };
    // The call past 200k, at its long-context rates (see above).
    assert_eq!(cost_of("claude-sonnet-4-20250514"), vec![0.682_507_5]);
    assert_eq!(cost_of("claude-sonnet-4-5-20250929"), vec![0.1005]);
    // Not priced: no cost attribute, never zero.
    assert!(cost_of("gpt-9-made-up").is_empty());
    assert!(spans.iter().any(|s| s.name == "chat gpt-9-made-up"));
}

#[test]
fn transcript_list_gives_each_sessions_own_cost() {
    let t = TestProject::new();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    let list = t.json(&["transcript", "list", "--all"]);
    let cost = |id: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id || (id == "sub" && r["kind"] == "subagent"))
            .unwrap()["cost_usd"]
            .clone()
    };
    // Three models, one past its long-context tier: priced call by call.
    close(&cost(MAIN), 0.789_007_5);
    // One model: from the index's counts.
    close(&cost("sub"), 0.0025);
    assert_eq!(cost(ODD), Value::Null);
    let text = t.run(&["transcript", "list", "--all"]);
    assert!(text.ok().contains("$0.7890"), "{}", text.stdout);
    assert!(text.stdout.contains("not priced"), "{}", text.stdout);
}

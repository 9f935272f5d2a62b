//! Find-in-transcript and the errors bar: `GET /api/transcripts/{id}/find`
//! and the transcript page's `?find=` form, links to `?at=N#mN`, the
//! errors listed being the cards shown with the error chip.

use serde_json::{Value, json};

use crate::harness::{HOSTILE, Served};

/// The transcript of [`served`].
pub(crate) const FIND_ID: &str = "f1f1f1f1-2222-4333-8444-555566667777";

/// Messages, by index: 0 a prompt; 1 a Bash call; 2 its failed result
/// (hostile text); 3 a Read; 4 its result; 5 a Codex shell call; 6 its
/// result, exit code 2; 7 text full of FTS syntax; 8 text; 9 a failed
/// result whose call is not in the transcript.
fn messages() -> Vec<Value> {
    vec![
        json!({"role": "user", "blocks": [{"type": "text", "content": "Please fix the flaky zebra test"}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "text", "content": "Running the tests"},
            {"type": "tool", "id": "t1", "name": "Bash", "parameters": "{\"command\":\"cargo test --package quokka\"}"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "t1", "result": format!("walrus panicked {HOSTILE}"), "isError": true}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": "t2", "name": "Read", "parameters": "{\"file_path\":\"/w/src/lib.rs\"}"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "t2", "result": "fn narwhal() {}"}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": "t3", "name": "shell", "parameters": "{\"command\":[\"bash\",\"-lc\",\"make lint\"]}"}]}),
        json!({"role": "tool", "blocks": [
            {"type": "tool_result", "toolUseId": "t3", "result": "{\"output\":\"lint failed\",\"metadata\":{\"exit_code\":2}}"}]}),
        json!({"role": "assistant", "blocks": [{"type": "text", "content": "NEAR(alpha beta) \"quoted\" col:val a*b -minus"}]}),
        json!({"role": "assistant", "blocks": [{"type": "text", "content": "the zebra is fixed"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "zz", "result": "orphan failure", "isError": true}]}),
    ]
}

/// The demo project plus the transcript of [`messages`], imported.
pub(crate) fn served() -> Served {
    Served::demo_with(None, |root| {
        let file = root.join("find.json");
        let t = json!({
            "id": FIND_ID, "timestamp": "2026-01-18T10:42:07.512Z", "version": "1.0.0",
            "messages": messages(),
            "metadata": {"workdir": "/w", "startedAt": "2026-01-18T10:30:00.000Z",
                         "lastActiveAt": "2026-01-18T10:42:07.512Z", "latestTotalTokens": 10}
        });
        std::fs::write(&file, t.to_string()).unwrap();
        let p = logbook::Logbook::open(root).unwrap();
        logbook::ops::transcript::import(&p, &file, false, None, None).unwrap();
    })
}

fn at(v: &Value, key: &str) -> Vec<u64> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.get("message").unwrap_or(m).as_u64().unwrap())
        .collect()
}

/// The cards of a transcript page whose head carries the error chip.
pub(crate) fn error_cards(html: &str) -> usize {
    html.split("<div class=\"card tool-card\">")
        .skip(1)
        .filter(|card| {
            let head = card.split("</div>").next().unwrap_or_default();
            head.contains("chip chip-err")
        })
        .count()
}

#[test]
fn the_api_points_at_the_messages_and_refuses_bad_params() {
    let s = served();
    let find = |q: &str| s.get_json(&format!("/api/transcripts/{FIND_ID}/find?{q}"));
    let r = find("q=zebra");
    assert_eq!(at(&r, "matches"), [0, 8]);
    assert_eq!(r["matchCount"], 2);
    assert_eq!(at(&r, "errors"), [2, 6, 9]);
    // A word of a Bash command and of a tool result; the snippet marks it.
    assert_eq!(at(&find("q=quokka"), "matches"), [1]);
    let r = find("q=walrus");
    assert_eq!(at(&r, "matches"), [2]);
    assert!(
        r["matches"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("[walrus]")
    );
    // FTS syntax is searched as typed (percent-encoded in the URL).
    assert_eq!(at(&find("q=NEAR%28alpha"), "matches"), [7]);
    assert_eq!(at(&find("q=col%3Aval"), "matches"), [7]);
    assert_eq!(at(&find("q=%22quoted%22"), "matches"), [7]);
    // Paging after a message, a limit; no words: errors only.
    assert_eq!(at(&find("q=zebra&after=0"), "matches"), [8]);
    let r = find("after=2&limit=1");
    assert_eq!((at(&r, "matches"), at(&r, "errors")), (vec![], vec![6]));
    assert_eq!(r["errorCount"], 2);
    // A short id works as in the CLI.
    assert_eq!(
        at(
            &s.get_json(&format!("/api/transcripts/{}/find?q=zebra", &FIND_ID[..8])),
            "matches"
        ),
        [0, 8]
    );
    // Bad parameters are refused as the other API calls refuse them.
    for bad in [
        "after=-1",
        "limit=x",
        "limit=1.5",
        "after=99999999999999999999",
    ] {
        let r = s.get(&format!("/api/transcripts/{FIND_ID}/find?{bad}"));
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }
    let r = s.get("/api/transcripts/00000000-0000-4000-8000-000000000000/find?q=x");
    assert_eq!(r.status, 404);
    let r = s.get("/api/transcripts/..%2f..%2fsecret/find?q=x");
    assert_eq!(r.status, 404);
}

#[test]
fn the_page_lists_matches_and_errors_as_links() {
    let s = served();
    let r = s.get(&format!("/transcripts/{FIND_ID}?find=zebra&at=0"));
    assert_eq!(r.status, 200, "{}", r.text());
    let html = r.text();
    // A plain form (GET, works without JavaScript), keeping the words.
    assert!(
        html.contains(&format!(
            "<form class=\"find-form\" method=\"get\" action=\"/transcripts/{FIND_ID}\">"
        )),
        "{html}"
    );
    assert!(html.contains("name=\"find\" value=\"zebra\""), "{html}");
    // Each match a link to its page and anchor, the words kept.
    for m in [0, 8] {
        let href = format!("href=\"/transcripts/{FIND_ID}?at={m}&#38;find=zebra#m{m}\"");
        let alt = href.replace("&#38;", "&amp;");
        assert!(html.contains(&href) || html.contains(&alt), "{m}: {html}");
    }
    assert!(html.contains("2 messages say"), "{html}");
    // "Next" is relative to the message shown (?at=0): the match at 8 and
    // the error at 2.
    assert!(
        html.contains(&format!(
            "class=\"next-match\" href=\"/transcripts/{FIND_ID}?at=8"
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "class=\"next-error\" href=\"/transcripts/{FIND_ID}?at=2"
        )),
        "{html}"
    );
    // The errors bar: as many as the cards shown with the error chip, each
    // a link.
    assert!(html.contains("3 errors"), "{html}");
    assert_eq!(error_cards(&html), 3, "{html}");
    assert_eq!(html.matches("class=\"error-link\"").count(), 3);
    for m in [2, 6, 9] {
        assert!(html.contains(&format!("#m{m}\">#{m}</a>")), "{m}: {html}");
    }
    // Past the last error there is no next one; without words, no matches.
    let html = s.get(&format!("/transcripts/{FIND_ID}?at=9")).text();
    assert!(!html.contains("class=\"next-error\""), "{html}");
    assert!(!html.contains("find-matches"), "{html}");
    // Bad parameters are refused.
    for bad in ["at=-3", "at=x"] {
        let r = s.get(&format!("/transcripts/{FIND_ID}?{bad}"));
        assert_eq!(r.status, 400, "{bad}");
    }
}

#[test]
fn the_demo_claude_session_has_its_one_error_on_the_bar() {
    let s = Served::with_agent_logs();
    let id = crate::harness::CLAUDE_ID;
    let html = s.get(&format!("/transcripts/{id}")).text();
    let api = s.get_json(&format!("/api/transcripts/{id}/find"));
    let shown = s.get_json(&format!("/api/transcripts/{id}"));
    // The error is the message whose result the agent flagged.
    let flagged: Vec<u64> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m.to_string().contains("\"isError\":true"))
        .map(|(i, _)| i as u64)
        .collect();
    assert_eq!(at(&api, "errors"), flagged);
    assert_eq!(error_cards(&html), flagged.len(), "{html}");
    assert!(html.contains("1 error<"), "{html}");
}

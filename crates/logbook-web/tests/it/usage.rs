//! The transcript list people scan (agent, repository, models, exact
//! tokens; filters as a plain GET form) and the usage page (server-side
//! SVG), over the CLI tests' fixture of two agents, two models and three
//! days: the numbers are `transcript usage`'s, bad filters are refused with
//! the library's sentence, hostile names stay text, and chromium refuses
//! nothing under the page's policy.

use std::path::{Path, PathBuf};

use logbook::Logbook;
use logbook::ops::transcript::{self, ImportFormat, UsageBy, UsageScope};
use serde_json::Value;

use crate::harness::Served;

const CLAUDE: &str = "7a1d0c5e-0000-4000-8000-0000000a5a9e";
const CODEX: &str = "0199c0de-0000-7000-8000-0000000a5a9e";
const HOSTILE: &str = "<script>alert('x')</script><img src=x onerror=alert(1)>";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../logbook-cli/tests/fixtures/usage")
}

fn import(root: &Path, logs: &Path) {
    let p = Logbook::open(root).unwrap();
    let r = transcript::import_path(&p, logs, ImportFormat::Auto, None).unwrap();
    assert!(!r.imported.is_empty(), "{r:?}");
}

/// The demo project with the fixture's two logs imported, the Claude Code
/// session linked to the demo's work session as its hook would link it.
fn served() -> Served {
    Served::demo_with(None, |root| {
        import(root, &fixture());
        let ws = demo_session_file(root);
        let mut text = std::fs::read_to_string(&ws).unwrap();
        assert!(!text.contains("agent_sessions"), "{text}");
        text.push_str(&format!(
            "agent_sessions:\n- agent: claude-code\n  session_id: {CLAUDE}\n"
        ));
        std::fs::write(&ws, text).unwrap();
    })
}

/// The demo's work session file.
fn demo_session_file(root: &Path) -> PathBuf {
    let p = Logbook::open(root).unwrap();
    std::fs::read_dir(&p.config.sessions_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|f| f.extension().is_some_and(|x| x == "yaml") && !f.ends_with("active-session.yaml"))
        .unwrap()
}

/// The transcript ids a list page shows, in order.
fn ids(html: &str) -> Vec<String> {
    html.split("<tr data-id=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_string)
        .collect()
}

fn row<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<tr data-id=\"{id}\""))
        .unwrap_or_else(|| panic!("no row {id}"));
    let rest = &html[start..];
    &rest[..rest.find("</tr>").unwrap()]
}

fn page(s: &Served, target: &str) -> String {
    let r = s.get(target);
    assert_eq!(r.status, 200, "GET {target}: {}", r.text());
    r.text()
}

#[test]
fn the_list_shows_agent_repository_models_and_measured_tokens() {
    let s = served();
    let html = page(&s, "/transcripts");
    let claude = row(&html, CLAUDE);
    for want in [
        "<td class=\"agent\">Claude Code</td>",
        ">/w/usage<",
        ">claude-opus-4-5, claude-sonnet-4-5<",
        // input + output + cache, not the last context size
        "<span class=\"total\">9,180</span>",
        "cache 9,000",
        "cache read 8,000",
    ] {
        assert!(claude.contains(want), "{want} missing: {claude}");
    }
    let codex = row(&html, CODEX);
    for want in [
        "<td class=\"agent\">Codex</td>",
        ">/w/codex-usage<",
        ">gpt-5-codex<",
        "<span class=\"total\">990</span>",
        "cache 600",
    ] {
        assert!(codex.contains(want), "{want} missing: {codex}");
    }
    let seed = row(&html, &s.demo.transcripts[0]);
    assert!(seed.contains("<td class=\"agent\">seed 003</td>"), "{seed}");
    assert!(seed.contains("not measured"), "{seed}");
    // The JSON list has the same additive fields.
    let api = s.get_json("/api/transcripts?source=codex");
    assert_eq!(api[0]["models"], serde_json::json!(["gpt-5-codex"]));
    assert_eq!(api[0]["usage"]["total_tokens"], 990);
}

#[test]
fn each_filter_of_the_form_narrows_the_list_and_paging_keeps_them() {
    let s = served();
    let demo: Vec<String> = s.demo.transcripts.clone();
    let shown = |q: &str| ids(&page(&s, &format!("/transcripts?{q}")));
    let all = shown("");
    assert!(all.contains(&CLAUDE.to_string()) && all.contains(&CODEX.to_string()));
    assert!(demo.iter().all(|d| all.contains(d)));
    assert_eq!(shown("source=codex"), [CODEX]);
    assert_eq!(shown("source=Claude-Code"), [CLAUDE]);
    let seed = shown("source=logbook");
    assert!(
        !seed.is_empty() && seed.iter().all(|i| demo.contains(i)),
        "{seed:?}"
    );
    assert_eq!(shown("model=SONNET"), [CLAUDE]);
    assert_eq!(shown("model=gpt"), [CODEX]);
    assert!(shown("model=opus&source=codex").is_empty());
    // Active since the 20th: the Codex rollout, not the Claude session.
    let since = shown("since=2026-01-20");
    assert!(since.contains(&CODEX.to_string()) && !since.contains(&CLAUDE.to_string()));
    // Begun before the 19th: the Claude session only.
    assert_eq!(shown("until=2026-01-19T00%3A00%3A00Z"), [CLAUDE]);
    assert_eq!(shown("text=midnight"), [CLAUDE]);
    let subs = shown("kind=subagent");
    assert!(!subs.contains(&CLAUDE.to_string()) && !subs.is_empty());
    // Another repository's: none of these (their folders are not checkouts
    // of it, nor inside the project).
    let other = shown("repo=https%3A%2F%2Fexample.com%2Fnobody%2Fnothing");
    assert!(!other.contains(&CLAUDE.to_string()) && !other.contains(&CODEX.to_string()));
    // The form shows what was asked, and paging keeps it.
    let html = page(&s, "/transcripts?source=logbook&limit=1");
    assert_eq!(ids(&html).len(), 1, "{html}");
    assert!(
        html.contains("<option value=\"logbook\" selected>"),
        "{html}"
    );
    let next = html
        .split("href=\"")
        .filter_map(|h| h.split('"').next())
        .find(|h| h.contains("offset=1"))
        .unwrap_or_else(|| panic!("no next page: {html}"))
        .replace("&#38;", "&")
        .replace("&amp;", "&");
    assert!(
        next.contains("source=logbook") && next.contains("limit=1"),
        "{next}"
    );
    let second = ids(&page(&s, &next));
    assert_eq!(second.len(), 1);
    assert!(demo.contains(&second[0]) && second != ids(&html));
}

#[test]
fn bad_filter_values_are_refused_with_the_clis_sentence() {
    let s = served();
    let now = logbook::clock::now();
    let sentence = |p: logbook::ops::params::TranscriptParams| {
        let e = p.filter(now).unwrap_err().to_string();
        e.split("; ").next().unwrap().to_string()
    };
    let cases = [
        (
            "source=gpt",
            sentence(logbook::ops::params::TranscriptParams {
                source: Some("gpt".into()),
                ..Default::default()
            }),
        ),
        (
            "since=lately",
            sentence(logbook::ops::params::TranscriptParams {
                since: Some("lately".into()),
                ..Default::default()
            }),
        ),
        (
            "until=soon",
            sentence(logbook::ops::params::TranscriptParams {
                until: Some("soon".into()),
                ..Default::default()
            }),
        ),
        ("kind=both", "kind is main or subagent".to_string()),
    ];
    for (q, want) in cases {
        for base in ["/transcripts", "/api/transcripts"] {
            let r = s.get(&format!("{base}?{q}"));
            assert_eq!(r.status, 400, "{base}?{q}: {}", r.text());
            assert!(
                r.text().contains(&want),
                "{base}?{q}: {} lacks {want}",
                r.text()
            );
        }
    }
    for target in [
        "/api/usage?by=week",
        "/usage?source=gpt",
        "/api/usage?source=x",
    ] {
        let r = s.get(target);
        assert_eq!(r.status, 400, "{target}: {}", r.text());
        assert!(r.text().contains("expected"), "{}", r.text());
    }
}

/// Each day's exact total on the usage page.
fn day_totals(html: &str) -> Vec<(String, u64)> {
    html.split("data-day=\"")
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
        .collect()
}

#[test]
fn the_usage_page_draws_the_numbers_transcript_usage_counts() {
    let s = served();
    let p = s.project();
    let html = page(&s, "/usage");
    let ops = transcript::usage(&p, &UsageScope::All, UsageBy::Day).unwrap();
    let want: Vec<(String, u64)> = ops
        .rows
        .iter()
        .map(|r| (r.key.clone(), r.usage.total_tokens))
        .collect();
    assert_eq!(
        want,
        [
            ("2026-01-18".to_string(), 6120),
            ("2026-01-19".to_string(), 3500),
            ("2026-01-20".to_string(), 550)
        ]
    );
    assert_eq!(day_totals(&html), want);
    // Each bar is titled with its exact count: cache reads apart.
    for title in [
        "<title>2026-01-19 · gpt-5-codex: 140 tokens</title>",
        "<title>2026-01-19 · gpt-5-codex: 300 cache-read tokens</title>",
        "<title>2026-01-18 · claude-opus-4-5: 1,120 tokens</title>",
        "<title>2026-01-18 · claude-opus-4-5: 5,000 cache-read tokens</title>",
        "<title>/w/usage · claude-sonnet-4-5: 60 tokens</title>",
    ] {
        assert!(html.contains(title), "{title} missing");
    }
    assert!(html.contains("<a href=\"/usage\" class=\"on\">Usage</a>"));
    // The work sessions against their budgets.
    let ws = &s.demo.work_session;
    assert!(html.contains(&format!("{ws}: budget ")), "no budget line");
    // What its linked Claude Code session measured.
    let budgets = &html[html.find("id=\"usage-budgets\"").unwrap()..];
    let ws_row = &budgets[budgets.find(ws.as_str()).unwrap()..];
    let ws_row = &ws_row[..ws_row.find("</tr>").unwrap()];
    assert!(ws_row.ends_with("<td class=\"num\">9,180</td>"), "{ws_row}");
    // The API answers what `transcript usage --all --json` prints.
    for by in [
        UsageBy::Day,
        UsageBy::Model,
        UsageBy::Session,
        UsageBy::Repo,
    ] {
        let name = serde_json::to_value(by).unwrap();
        let api = s.get_json(&format!("/api/usage?by={}", name.as_str().unwrap()));
        let ops = transcript::usage(&p, &UsageScope::All, by).unwrap();
        assert_eq!(api, serde_json::to_value(&ops).unwrap(), "by {name}");
    }
    // One agent's.
    let codex: Value = s.get_json("/api/usage?by=day&source=codex");
    assert_eq!(codex["total"]["total_tokens"], 990);
    let codex_page = page(&s, "/usage?source=codex");
    assert_eq!(
        day_totals(&codex_page),
        [
            ("2026-01-19".to_string(), 440),
            ("2026-01-20".to_string(), 550)
        ]
    );
}

/// The fixture plus hostile text in a model's name, a repository's folder,
/// a title and a work session's project.
fn hostile() -> Served {
    Served::demo_with(None, |root| {
        import(root, &fixture());
        let logs = root.join("hostile-logs/claude/-w-h");
        std::fs::create_dir_all(&logs).unwrap();
        let line = serde_json::json!({
            "parentUuid": null, "isSidechain": false, "cwd": "/w/h", "version": "2.0.14",
            "sessionId": "7a1d0c5e-0000-4000-8000-00000000bad1", "type": "assistant",
            "uuid": "00000000-0000-4000-8000-0000000000b1",
            "timestamp": "2026-01-18T12:00:00.000Z", "requestId": "req_h",
            "message": {"id": "msg_h", "type": "message", "role": "assistant", "model": HOSTILE,
                        "content": [{"type": "text", "text": "hi"}],
                        "usage": {"input_tokens": 7, "output_tokens": 3}}
        });
        std::fs::write(
            logs.join("7a1d0c5e-0000-4000-8000-00000000bad1.jsonl"),
            format!("{line}\n"),
        )
        .unwrap();
        import(root, &root.join("hostile-logs"));
        let p = Logbook::open(root).unwrap();
        let seed = serde_json::json!({
            "id": "5eed0003-0000-4000-8000-00000000bad2",
            "messages": [{"role": "user", "blocks": ["hello"]}],
            "metadata": {"workdir": "/w/elsewhere", "startedAt": "2026-01-18T12:00:00.000Z",
                         "lastActiveAt": "2026-01-18T12:30:00.000Z", "latestTotalTokens": 3,
                         "name": HOSTILE,
                         "repository": {"rootCommit": "abc123", "folder": HOSTILE}}
        });
        transcript::import_text(&p, &seed.to_string(), false, None, None).unwrap();
        let demo_ws = demo_session_file(root);
        let text = std::fs::read_to_string(&demo_ws).unwrap();
        let text: String = text
            .lines()
            .map(|l| {
                if l.starts_with("project:") {
                    format!("project: {}", serde_json::to_string(HOSTILE).unwrap())
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&demo_ws, text + "\n").unwrap();
    })
}

#[test]
fn hostile_models_repositories_titles_and_session_names_stay_text() {
    let s = hostile();
    let escaped = "&#60;script&#62;alert(";
    for target in [
        "/transcripts",
        "/transcripts?source=claude-code",
        "/usage",
        "/usage?source=claude-code",
    ] {
        let html = page(&s, target);
        assert!(
            !html.contains("<script>alert") && !html.contains("<img src=x"),
            "{target}: {html}"
        );
        let n = html.matches(escaped).count() + html.matches("&lt;script&gt;alert(").count();
        assert!(n > 0, "{target}: the hostile text is not shown: {html}");
    }
    // The model's name on the list and on the chart, the folder and title
    // on the list, the work session's project on the usage page.
    let list = page(&s, "/transcripts");
    assert!(row(&list, "7a1d0c5e-0000-4000-8000-00000000bad1").contains("alert(1)"));
    assert!(
        row(&list, "5eed0003-0000-4000-8000-00000000bad2")
            .matches("alert(")
            .count()
            >= 3
    );
    let usage = page(&s, "/usage");
    assert!(
        usage.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"),
        "chart titles"
    );
    // The table (escaped by the template) and the chart's label (by the
    // view) both show the work session's hostile project as text.
    assert!(
        usage.contains(" · &#60;script&#62;alert("),
        "session name in the table"
    );
    assert!(
        usage.contains(&format!("{} (", s.demo.work_session))
            && usage.contains("· &lt;script&gt;alert("),
        "session name on the chart"
    );
    let csp = s
        .get("/usage")
        .header("content-security-policy")
        .unwrap()
        .to_string();
    assert!(
        csp.contains("style-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
}

#[test]
fn chromium_opens_the_usage_page_and_a_filtered_list() {
    let Some(b) = crate::browser::browser() else {
        return;
    };
    let s = hostile();
    let base = format!("http://{}", s.addr);
    let usage = b.dom(&format!("{base}/usage"));
    assert!(usage.contains("<svg class=\"chart\""), "no chart");
    assert!(usage.contains("data-day=\"2026-01-19\""));
    assert!(!usage.contains("<script>alert"));
    let list = b.dom(&format!("{base}/transcripts?source=claude-code&model=opus"));
    assert_eq!(ids(&list), [CLAUDE]);
    let list = b.dom(&format!(
        "{base}/transcripts?text=midnight&kind=main&since=2026-01-01"
    ));
    assert_eq!(ids(&list), [CLAUDE]);
}

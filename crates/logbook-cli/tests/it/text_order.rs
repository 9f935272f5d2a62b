//! Text matches in find's one order, page after page: runs written by
//! another tool whose starts share a second or a nanosecond, or lie before
//! 1970 or after 2242 (where the text index's keys no longer tell starts
//! apart), indexed in two waves so that row ids do not follow ids. Paged with
//! and without another filter, on each way a page and its count are made
//! (matches read in the text index's order; their whole set for a long
//! page or past a budget, a common word walked, a rare word joined), a text
//! page always lists exactly what `find` without text lists of the runs
//! holding the word, as the files alone order them, and says how many
//! more match. A run whose start changes on disk moves in the text
//! order, and keeps one text row.

use std::path::Path;

use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::ops::query::Scope;
use serde_json::json;

use crate::freshness::ids_of;
use crate::harness::TestProject;

/// The runs: 160 in the newest second of 2025 (more than a page's first
/// chunk of matches) and 80 in eight older ones, four starts a second
/// repeated (so many share a nanosecond), and five at the edges of the
/// keys' range.
fn starts() -> Vec<String> {
    let mut starts: Vec<String> = (0..240)
        .map(|i| {
            let frac = ["000", "250", "250", "999"][i % 4];
            let second = if i < 160 { 9 } else { (i - 160) / 10 };
            format!("2025-10-05T10:00:{second:02}.{frac}Z")
        })
        .collect();
    starts.extend(
        [
            "1969-12-31T23:59:59.500Z",
            "1950-06-01T00:00:00Z",
            "2300-01-01T00:00:00Z",
            "2400-02-02T00:00:00Z",
            "2400-02-02T00:00:00Z",
        ]
        .map(String::from),
    );
    starts
}

/// The words of run `i`: `quokka` in every run, `harbor` in every other,
/// `ember` in every tenth (rarer than the share a page walks).
fn words(i: usize) -> String {
    let mut w = vec!["quokka"];
    if i.is_multiple_of(2) {
        w.push("harbor");
    }
    if i.is_multiple_of(10) {
        w.push("ember");
    }
    w.join(" ")
}

fn agent(i: usize) -> &'static str {
    if i.is_multiple_of(3) { "alex" } else { "casey" }
}

/// A manifest as another tool writes one.
fn write_run(runs: &Path, i: usize, id: &str, started: &str) {
    let folder = runs.join(id);
    std::fs::create_dir_all(&folder).unwrap();
    let m = json!({
        "version": "1.0.0",
        "session_id": id,
        "agent": {"name": agent(i), "title": "Some Agent"},
        "workflow": {"name": "review", "description": words(i)},
        "execution": {"started_at": started, "status": "completed"},
        "outputs": [],
    });
    std::fs::write(
        folder.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

#[test]
fn text_pages_list_matches_in_finds_order_whatever_their_starts() {
    let t = TestProject::new();
    let runs = t.path("docs/agent-outputs");
    let starts = starts();
    let ids: Vec<String> = (0..starts.len())
        .map(|i| {
            let bits = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835_u128.wrapping_mul(i as u128 + 1);
            uuid::Builder::from_random_bytes(bits.to_le_bytes())
                .into_uuid()
                .to_string()
        })
        .collect();
    // Odd runs first, indexed (row ids in the walk's order, by id), then
    // the even ones, added by a sync: ties of a second and of a
    // nanosecond hold runs whose row ids run against their ids.
    for wave in [1, 0] {
        for (i, started) in starts.iter().enumerate().filter(|(i, _)| i % 2 == wave) {
            write_run(&runs, i, &ids[i], started);
        }
        t.run(&["find"]).ok();
    }
    // The order without text, from the files alone (no index).
    let p = Logbook::open(t.root()).unwrap();
    let order: Vec<String> = crate::harness::found(&p, &RunQuery::default(), Scope::Files)
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    assert_eq!(order.len(), starts.len());
    let index_of = |id: &str| ids.iter().position(|x| x == id).unwrap();
    // With the production budget, and with one so small that most pages
    // and every count turn to the set of matches.
    for budget in [None, Some("64")] {
        for word in ["quokka", "harbor", "ember"] {
            for agent_filter in [None, Some("alex")] {
                let expected: Vec<&String> = order
                    .iter()
                    .filter(|id| words(index_of(id)).contains(word))
                    .filter(|id| agent_filter.is_none_or(|a| agent(index_of(id)) == a))
                    .collect();
                for (limit, offset) in [
                    (1, 0),
                    (7, 0),
                    (30, 0),
                    (31, 29),
                    (40, 55),
                    (100, 150),
                    (7, 240),
                    (6000, 0),
                ] {
                    let (l, o) = (limit.to_string(), offset.to_string());
                    let mut args = vec![
                        "--json", "find", "--text", word, "--limit", &l, "--offset", &o,
                    ];
                    if let Some(a) = agent_filter {
                        args.extend(["--agent", a]);
                    }
                    let mut cmd = t.cmd(&args);
                    if let Some(b) = budget {
                        cmd.env("LOGBOOK_IN_ORDER_BUDGET", b);
                    }
                    let r: crate::harness::Run = cmd.output().unwrap().into();
                    let got = ids_of(&r.json());
                    let want: Vec<String> = expected
                        .iter()
                        .skip(offset)
                        .take(limit)
                        .map(|s| s.to_string())
                        .collect();
                    assert_eq!(got, want, "{budget:?} {args:?}");
                    // Fewer than the 1,000 a text count stops at: exact.
                    let more = expected.len().saturating_sub(offset + want.len());
                    let said = format!("\n{more} more run(s) match");
                    assert_eq!(
                        ("\n".to_string() + &r.stderr).contains(&said),
                        more > 0,
                        "{budget:?} {args:?}: {}",
                        r.stderr
                    );
                }
            }
        }
    }

    // The oldest run starts anew, later than all but the runs past 2262:
    // it moves up the text order as without text, with one text row.
    let oldest = order.last().unwrap().clone();
    write_run(&runs, index_of(&oldest), &oldest, "2100-01-01T00:00:00Z");
    t.run(&["index", "sync"]).ok();
    let order: Vec<String> = crate::harness::found(&p, &RunQuery::default(), Scope::Files)
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    assert_eq!(order[3], oldest, "after the three past 2262");
    let top = ids_of(&t.json(&["find", "--text", "quokka", "--limit", "4"]));
    assert_eq!(top, order[..4]);
    let all = ids_of(&t.json(&["find", "--text", "quokka", "--limit", "6000"]));
    assert_eq!(all, order);
}

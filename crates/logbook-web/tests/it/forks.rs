//! A Codex fork in the viewer: listed under its parent as a subagent is
//! (the parent column, marked as a fork), its page links the session it
//! was forked from, and the parent's page lists its forks; on the library's
//! Codex fork fixtures, imported, with hostile text in a fork's title.

use std::path::{Path, PathBuf};

use logbook::Logbook;

use crate::harness::Served;

const PARENT: &str = "0199bbbb-0000-7000-8000-000000000001";
const SUBAGENT: &str = "0199bbbb-0000-7000-8000-000000000002";
const FORK: &str = "0199bbbb-0000-7000-8000-000000000003";
/// A second fork of the parent, whose title is hostile.
const EVIL_FORK: &str = "0199bbbb-0000-7000-8000-0000000000e1";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../logbook/tests/fixtures/codex_forks/sessions/2026/01/20")
}

/// The fixtures, and a copy of the fork renamed to a second fork whose
/// prompt (its title) is markup.
fn write_logs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for e in std::fs::read_dir(fixtures()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let name = format!("rollout-2026-01-20T10-00-00-{FORK}.jsonl");
    let text = std::fs::read_to_string(fixtures().join(&name)).unwrap();
    assert!(text.contains("Now write the release notes"));
    let evil = text.replacen(FORK, EVIL_FORK, 1).replace(
        "Now write the release notes",
        "Notes <img src=x onerror=alert(7)>",
    );
    std::fs::write(dir.join(name.replace(FORK, EVIL_FORK)), evil).unwrap();
}

fn served() -> Served {
    Served::demo_with(None, |root| {
        let logs = root.join("codex-logs");
        write_logs(&logs);
        let p = Logbook::open(root).unwrap();
        let r = logbook::ops::transcript::import_path(
            &p,
            &logs,
            logbook::ops::transcript::ImportFormat::Auto,
            None,
        )
        .unwrap();
        assert!(r.imported.len() >= 4, "{r:?}");
    })
}

fn page(s: &Served, target: &str) -> String {
    let r = s.get(target);
    assert_eq!(r.status, 200, "{target}: {}", r.text());
    r.text()
}

/// The list's row of transcript `id`.
fn row<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<tr data-id=\"{id}\">"))
        .unwrap_or_else(|| panic!("{id} not listed: {html}"));
    let rest = &html[start..];
    &rest[..rest.find("</tr>").unwrap()]
}

#[test]
fn a_fork_is_listed_under_its_parent_and_each_page_links_the_other() {
    let s = served();
    let list = page(&s, "/transcripts?source=codex");
    let fork = row(&list, FORK);
    assert!(fork.contains("<span class=\"badge\">fork</span>"), "{fork}");
    assert!(
        fork.contains(&format!("fork of</span> <a href=\"/transcripts/{PARENT}\"")),
        "{fork}"
    );
    // The subagent keeps its parent link, not marked as a fork; the
    // parent has neither.
    let sub = row(&list, SUBAGENT);
    assert!(
        sub.contains(&format!("href=\"/transcripts/{PARENT}\"")),
        "{sub}"
    );
    let marked = |r: &str| r.contains("badge\">fork<") || r.contains("fork of<");
    assert!(!marked(sub), "{sub}");
    let parent = row(&list, PARENT);
    assert!(!marked(parent), "{parent}");
    assert!(parent.ends_with("<td class=\"mono\"></td>"), "{parent}");
    // The hostile title is shown as text.
    assert!(!list.contains("<img src=x"), "{list}");
    assert!(
        row(&list, EVIL_FORK).contains("Notes &#60;img src=x onerror=alert(7)&#62;"),
        "{list}"
    );

    // The fork's page: "forked from" the parent's title, linked.
    let fork_page = page(&s, &format!("/transcripts/{FORK}"));
    assert!(
        fork_page.contains(&format!(
            "forked from <a href=\"/transcripts/{PARENT}\">Plan the release</a>"
        )),
        "{fork_page}"
    );
    assert!(!fork_page.contains("forks: "));

    // The parent's page lists both forks, linked, the hostile title as text;
    // not the subagent (a Task's child, not a fork), and it is no fork.
    let parent_page = page(&s, &format!("/transcripts/{PARENT}"));
    assert!(!parent_page.contains("forked from"), "{parent_page}");
    let forks = &parent_page[parent_page.find("forks: ").expect("no forks listed")..];
    let forks = &forks[..forks.find("</div>").unwrap()];
    assert!(
        forks.contains(&format!(
            "<a href=\"/transcripts/{FORK}\">Now write the release notes</a>"
        )),
        "{forks}"
    );
    assert!(
        forks.contains(&format!(
            "<a href=\"/transcripts/{EVIL_FORK}\">Notes &#60;img src=x onerror=alert(7)&#62;</a>"
        )),
        "{forks}"
    );
    assert!(!forks.contains(SUBAGENT), "{forks}");
    assert!(!parent_page.contains("<img src=x"));

    // A transcript that is neither says nothing of forks.
    let sub_page = page(&s, &format!("/transcripts/{SUBAGENT}"));
    assert!(!sub_page.contains("forked from") && !sub_page.contains("forks: "));
}

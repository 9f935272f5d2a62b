//! End to end in a real browser: Debian's headless `chromium` opens the demo
//! project's pages, following the links each page shows, and the test
//! asserts on the DOM after the page's script ran; it also checks that the
//! browser refused nothing under the viewer's Content-Security-Policy, and
//! takes a screenshot. `.ci/run` installs chromium; on CI a missing
//! browser fails the test instead of skipping it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{CLAUDE_ID, CODEX_ID, Served};

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

struct Browser {
    bin: PathBuf,
    profile: tempfile::TempDir,
}

impl Browser {
    fn run(&self, args: &[&str], url: &str) -> (String, String) {
        // Output goes to files, not pipes: chromium's helper processes keep
        // inherited pipes open after the browser exits.
        let dir = self.profile.path();
        let (out_path, err_path) = (dir.join("stdout.txt"), dir.join("stderr.txt"));
        let mut child = Command::new(&self.bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--enable-logging=stderr",
                "--v=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            .args(args)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(File::create(&out_path).unwrap())
            .stderr(File::create(&err_path).unwrap())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("chromium did not finish with {url} within 60 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        (
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            std::fs::read_to_string(&err_path).unwrap_or_default(),
        )
    }

    /// The DOM of `url` after load, asserting the browser refused nothing
    /// under the page's policy (our own pages must fit their strict CSP).
    fn dom(&self, url: &str) -> String {
        let (dom, log) = self.run(&["--dump-dom"], url);
        assert!(dom.contains("<main"), "{url}: no page rendered: {log}");
        assert!(
            !log.contains("Content Security Policy") && !log.contains("Refused to"),
            "{url}: the browser refused something: {log}"
        );
        dom
    }

    fn screenshot(&self, url: &str, to: &Path) {
        self.run(&[&format!("--screenshot={}", to.display())], url);
    }
}

/// The first `href="…"` in `html` that starts with `prefix` and contains
/// `part`.
fn link(html: &str, prefix: &str, part: &str) -> String {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .find(|h| h.starts_with(prefix) && h.contains(part))
        .unwrap_or_else(|| panic!("no link {prefix}…{part}… on the page"))
        .replace("&amp;", "&")
}

/// The browser, or `None` (with a note) where there is none off CI.
// The note is for whoever runs the tests: a skip must not pass silently.
#[allow(clippy::print_stderr)]
fn browser() -> Option<Browser> {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing on CI; .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return None;
    };
    Some(Browser {
        bin,
        profile: tempfile::tempdir().unwrap(),
    })
}

#[test]
fn chromium_walks_the_demo_project() {
    let Some(b) = browser() else { return };
    let s = Served::demo();
    let base = format!("http://{}", s.addr);

    // The run list: agent groups with display names and status badges.
    let list = b.dom(&format!("{base}/"));
    for t in [
        "Alex the Facilitator",
        "Quinn the Auditor",
        "4 runs match",
        "s-running",
    ] {
        assert!(list.contains(t), "run list lacks {t}");
    }
    // Search: the snippet highlights the word.
    let found = b.dom(&format!("{base}/?q=laptops"));
    assert!(
        found.contains("<mark>"),
        "search shows no highlighted snippet"
    );
    // A run, from the list's own link.
    let run_href = link(&list, "/runs/", "");
    let run = b.dom(&format!("{base}{run_href}"));
    assert!(run.contains("Files") && run.contains("Lineage graph"));
    // A Markdown output of a run that has one.
    let casey = link(&list, "/runs/", "");
    let casey_page = b.dom(&format!("{base}{}", link(&found, "/runs/", "")));
    let md = casey_page
        .split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .find(|h| h.contains("/files/") && h.ends_with(".md"))
        .map(str::to_string);
    let md = md.unwrap_or_else(|| {
        let page = b.dom(&format!("{base}{casey}"));
        link(&page, "/runs/", ".md")
    });
    let doc = b.dom(&format!("{base}{md}"));
    assert!(
        doc.contains("<article class=\"doc\"><h1"),
        "Markdown not rendered"
    );
    // The lineage.
    let lineage = b.dom(&format!("{base}{}", link(&run, "/runs/", "/lineage")));
    assert!(lineage.contains("Builds on") && lineage.contains("<svg"));
    // The work session, from the run page's field, and its workflow.
    let ws = s.demo.work_session.clone();
    let session = b.dom(&format!("{base}/sessions/{ws}"));
    assert!(session.contains("tokens saved by isolation") && session.contains("Milestones"));
    let wf = b.dom(&format!(
        "{base}{}",
        link(&session, "/sessions/", "/workflow")
    ));
    assert!(wf.contains("Agent timeline") && wf.contains("compacted"));
    // The page offers its live stream to the script.
    assert!(list.contains("data-live=\"/api/live?view=list"));

    let shot = s.root.join("run-list.png");
    b.screenshot(&format!("{base}/"), &shot);
    let png = std::fs::read(&shot).expect("no screenshot taken");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot too small"
    );
}

/// The page's `<main>`, where the transcript is.
fn main_of(dom: &str) -> &str {
    let start = dom.find("<main").unwrap();
    let end = dom.rfind("</main>").unwrap();
    &dom[start..end]
}

/// What no tool call or result may show: the stored blocks' JSON.
fn assert_no_raw_tool_json(page: &str) {
    for raw in [
        "{\"type\":\"tool",
        "\"type\": \"tool",
        "\"toolUseId\"",
        "\"tool_use_id\"",
        "\"parameters\"",
        "{\"output\":",
    ] {
        assert!(!page.contains(raw), "raw tool JSON {raw:?} on the page");
    }
}

#[test]
fn chromium_reads_a_claude_code_session_as_cards() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    let base = format!("http://{}", s.addr);
    let dom = b.dom(&format!("{base}/transcripts/{CLAUDE_ID}"));
    let main = main_of(&dom);
    assert_no_raw_tool_json(main);
    // What was said: the prompt, the assistant's Markdown rendered, the
    // thinking folded.
    assert!(main.contains("Fix the build"));
    assert!(
        main.contains("Let me <strong>run</strong> the tests."),
        "{main}"
    );
    assert!(main.contains("<details class=\"thinking\"><summary>thinking</summary>"));
    assert!(main.contains("claude-opus-4-5"), "the model is not shown");
    // Bash: the command in a code element, its failure on the card.
    assert!(
        main.contains("<pre class=\"code cmd\"><code>cargo test --quiet # &lt;script&gt;"),
        "the Bash command is not in a code element: {main}"
    );
    assert!(main.contains("<span class=\"chip chip-err\">error</span>"));
    assert!(
        main.contains("<span class=\"muted\">run tests</span>"),
        "{main}"
    );
    // Read: the path.
    assert!(
        main.contains("<span class=\"path mono\">/w/demo/src/&lt;script&gt;"),
        "{main}"
    );
    // Edit: a diff, lines taken out and put in.
    assert!(
        main.contains("<span class=\"d-del\">-    old_call();</span>"),
        "no diff: {main}"
    );
    assert!(main.contains("<span class=\"d-add\">+    new_call();</span>"));
    assert!(main.contains("<span class=\"d-ctx\"> fn a() {</span>"));
    assert!(
        main.contains("<span class=\"d-add\">+    // &lt;script&gt;"),
        "{main}"
    );
    // Results are folded, the long one cut with "show all".
    assert_eq!(
        main.matches("<details class=\"result\">").count(),
        3,
        "{main}"
    );
    assert!(!main.contains("<details class=\"result\" open"));
    assert!(main.contains("show all (28 more lines)"), "{main}");
    // A message of tool results only adds no box of its own.
    assert_eq!(
        main.matches("<div class=\"msg user\">").count(),
        1,
        "{main}"
    );
    // The hostile command, result and path are text, not markup.
    // (The Markdown's own tags are sanitized: no script, no handler, no
    // `javascript:` link.)
    assert!(
        !main.contains("<script") && !main.contains("javascript:"),
        "{main}"
    );
    for img in main.split("<img").skip(1) {
        let tag = img.split('>').next().unwrap_or_default();
        assert!(
            !tag.contains("onerror") && !tag.contains("src="),
            "<img{tag}>"
        );
    }
    assert_eq!(
        main.matches("&lt;img src=x onerror=alert(2)&gt;").count(),
        4,
        "{main}"
    );
    let shot = s.root.join("transcript.png");
    b.screenshot(&format!("{base}/transcripts/{CLAUDE_ID}"), &shot);
    assert!(std::fs::read(&shot).is_ok_and(|png| png.starts_with(b"\x89PNG")));
    if let Some(to) = std::env::var_os("LOGBOOK_SHOT_DIR") {
        let _ = std::fs::copy(&shot, std::path::Path::new(&to).join("transcript.png"));
    }
}

#[test]
fn chromium_reads_a_codex_rollout_as_cards() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    let base = format!("http://{}", s.addr);
    let main = b.dom(&format!("{base}/transcripts/{CODEX_ID}"));
    let main = main_of(&main);
    assert_no_raw_tool_json(main);
    assert!(main.contains("Make it print new"));
    // shell: the command (the script of `bash -lc`) in a code element.
    assert!(
        main.contains("<pre class=\"code cmd\"><code>rg -n println src</code></pre>"),
        "{main}"
    );
    assert!(main.contains("<span class=\"chip chip-ok\">exit 0</span>"));
    // apply_patch: the patch, as a diff, with the file it changes.
    assert!(
        main.contains("<span class=\"path mono\">src/main.rs</span>"),
        "{main}"
    );
    assert!(
        main.contains("<span class=\"d-del\">-    println!(\"old\");</span>"),
        "{main}"
    );
    assert!(main.contains("<span class=\"d-add\">+    println!(\"new\");</span>"));
    assert_eq!(
        main.matches("<details class=\"result\">").count(),
        2,
        "{main}"
    );
    // Codex's `tool` messages of outputs only add no box.
    assert!(!main.contains("<div class=\"msg tool\">"), "{main}");
}

#[test]
fn chromium_jumps_to_matches_and_errors() {
    let Some(b) = browser() else { return };
    let s = crate::find::served();
    let base = format!("http://{}", s.addr);
    let id = crate::find::FIND_ID;
    let dom = b.dom(&format!("{base}/transcripts/{id}?find=zebra"));
    let main = main_of(&dom);
    // The form works without script: it is a GET of the same page.
    assert!(
        main.contains("<form class=\"find-form\" method=\"get\""),
        "{main}"
    );
    // The errors bar counts the cards the page marks with the error chip.
    assert!(main.contains("3 errors"), "{main}");
    assert_eq!(crate::find::error_cards(main), 3, "{main}");
    // Following "next match" keeps the words and moves on from there.
    let next = link(main, "/transcripts/", "find=zebra");
    assert_eq!(next, format!("/transcripts/{id}?at=0&find=zebra#m0"));
    let dom = b.dom(&format!("{base}/transcripts/{id}?at=0&find=zebra"));
    let main = main_of(&dom);
    assert_eq!(
        link(main, "/transcripts/", "at=8"),
        format!("/transcripts/{id}?at=8&find=zebra#m8")
    );
    let next_error = main
        .split("class=\"next-error\" href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    assert_eq!(next_error, format!("/transcripts/{id}?at=2&find=zebra#m2"));
}

//! End to end in a real browser: headless Chromium (Debian's `chromium`,
//! or Chromium or Chrome on macOS) opens the demo project's pages,
//! following the links each page shows, and the test asserts on the DOM
//! after the page's script ran; it also checks that the browser refused
//! nothing under the viewer's Content-Security-Policy, and takes a
//! screenshot. `.ci/run` installs chromium; on CI a missing browser fails
//! the test instead of skipping it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::harness::{CLAUDE_ID, CODEX_ID, Served};

/// Chromium or Chrome: on `PATH` (Debian's `chromium`), else where macOS
/// installs the apps, whose binaries are never on `PATH`.
fn chromium() -> Option<PathBuf> {
    let on_path = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        });
    on_path.or_else(|| {
        [
            "/Applications/Chromium.app/Contents/MacOS/Chromium",
            "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
        ]
        .map(PathBuf::from)
        .into_iter()
        .find(|p| p.is_file())
    })
}

pub(crate) struct Browser {
    pub(crate) bin: PathBuf,
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
        // Its exit is the signal, taken on a thread of its own so that the
        // wait has a deadline.
        let pid = child.id().to_string();
        let (sender, exited) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(child.wait());
        });
        match exited.recv_timeout(Duration::from_secs(60)) {
            Ok(status) => drop(status.unwrap()),
            Err(_) => {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
                panic!("chromium did not finish with {url} within 60 s");
            }
        }
        (
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            std::fs::read_to_string(&err_path).unwrap_or_default(),
        )
    }

    /// The DOM of `url` after load, asserting the browser refused nothing
    /// under the page's policy (our own pages must fit their strict CSP).
    pub(crate) fn dom(&self, url: &str) -> String {
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
pub(crate) fn browser() -> Option<Browser> {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing on CI; .ci/run installs it (apt-get install chromium)"
        );
        eprintln!(
            "skipped: chromium is not installed (apt-get install chromium; on macOS, Chromium or Google Chrome in /Applications)"
        );
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
    // A Markdown output of a run that has one: the first found run with
    // one, in the search's order (newest first).
    let hrefs = |html: &str| -> Vec<String> {
        html.split("href=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .map(|h| h.replace("&amp;", "&"))
            .collect()
    };
    let md = hrefs(&found)
        .into_iter()
        .filter(|h| h.starts_with("/runs/") && h.matches('/').count() == 2)
        .find_map(|run| {
            hrefs(&b.dom(&format!("{base}{run}")))
                .into_iter()
                .find(|h| h.contains("/files/") && h.ends_with(".md"))
        })
        .expect("a run found for 'laptops' has a Markdown output");
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
    // Results are folded, the long one cut with "show all" (the two
    // Task calls' too).
    assert_eq!(
        main.matches("<details class=\"result\"").count(),
        5,
        "{main}"
    );
    assert!(!main.contains("<details class=\"result\" open"));
    assert!(main.contains("show all (28 more lines)"), "{main}");
    // A message of tool results only adds no box of its own (the second
    // box is the prompt after the compaction).
    assert_eq!(
        main.matches("<div class=\"msg user\">").count(),
        2,
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
    // The command, the result, the path, the edit, a Task's description
    // and another's subagent type (on their cards and in their arguments)
    // and the compaction's summary.
    assert_eq!(
        main.matches("&lt;img src=x onerror=alert(2)&gt;").count(),
        9,
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
        main.matches("<details class=\"result\"").count(),
        2,
        "{main}"
    );
    // Codex's `tool` messages of outputs only add no box.
    assert!(!main.contains("<div class=\"msg tool\">"), "{main}");
}

/// The tokens each turn of a transcript page shows, in page order:
/// input, output, cache write, cache read, total.
fn turn_tokens(main: &str) -> Vec<[u64; 5]> {
    main.split("<span class=\"tokens\"")
        .skip(1)
        .map(|span| {
            let n = |class: &str| {
                let at = span
                    .find(&format!("class=\"{class}\">"))
                    .unwrap_or_else(|| panic!("no {class} in {span}"));
                let digits: String = span[at + class.len() + 9..]
                    .chars()
                    .take_while(|c| *c != '<')
                    .filter(char::is_ascii_digit)
                    .collect();
                digits.parse::<u64>().unwrap()
            };
            [n("t-in"), n("t-out"), n("t-cw"), n("t-cr"), n("t-total")]
        })
        .collect()
}

/// What `transcript usage ID --json` reports as the transcript's own usage
/// (its subagents apart), as the same fields.
fn usage_of(s: &Served, id: &str) -> [u64; 5] {
    use logbook::ops::transcript::{UsageBy, UsageScope, usage};
    let report = usage(&s.project(), &UsageScope::One(id.into()), UsageBy::Model).unwrap();
    let json = serde_json::to_value(&report).unwrap();
    let own = json["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {json}"))["usage"]
        .clone();
    let n = |k: &str| own[k].as_u64().unwrap();
    [
        n("input_tokens"),
        n("output_tokens"),
        n("cache_creation_input_tokens"),
        n("cache_read_input_tokens") + n("cached_input_tokens"),
        n("total_tokens"),
    ]
}

fn sum(turns: &[[u64; 5]]) -> [u64; 5] {
    let mut t = [0; 5];
    for turn in turns {
        for (a, b) in t.iter_mut().zip(turn) {
            *a += b;
        }
    }
    t
}

#[test]
fn chromium_follows_a_task_to_its_subagent_and_marks_the_compaction() {
    use crate::harness::HOSTILE;
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    let base = format!("http://{}", s.addr);
    let dom = b.dom(&format!("{base}/transcripts/{CLAUDE_ID}"));
    let main = main_of(&dom);
    assert_no_raw_tool_json(main);
    assert!(main.contains("<pre class=\"code cmd\"><code>cargo test --quiet"));
    assert!(main.contains("<span class=\"d-add\">+    new_call();</span>"));
    // Each assistant turn: its model and its tokens, which add up to what
    // `transcript usage` counts (a streamed reply and its repeat once).
    let turns = turn_tokens(main);
    assert_eq!(
        turns.len(),
        main.matches("<div class=\"msg assistant\">").count(),
        "{main}"
    );
    assert!(turns.len() >= 2, "{main}");
    assert_eq!(sum(&turns), usage_of(&s, CLAUDE_ID), "{main}");
    // The streamed reply: 3 + 9 + 1,200 + 4,000, not twice nor thrice.
    assert_eq!(turns.last().unwrap(), &[3, 9, 1_200, 4_000, 5_212]);
    // The first Task links its subagent; following the link opens it.
    let cards = main.matches("<div class=\"subagent\">").count();
    assert_eq!(cards, 2, "{main}");
    let href = main
        .split("<a class=\"subagent-link\" href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no subagent link: {main}"))
        .to_string();
    assert_eq!(main.matches("class=\"subagent-link\"").count(), 1);
    assert!(
        main.contains("the subagent&#39;s transcript is not in the store")
            || main.contains("the subagent's transcript is not in the store")
    );
    let sub = b.dom(&format!("{base}{href}"));
    let sub_main = main_of(&sub);
    assert!(
        sub_main.contains("The flaky ones: tests/net.rs and tests/clock.rs"),
        "{sub_main}"
    );
    assert!(sub_main.contains(&format!("href=\"/transcripts/{CLAUDE_ID}\"")));
    assert_eq!(
        sum(&turn_tokens(sub_main)),
        usage_of(&s, href.trim_start_matches("/transcripts/"))
    );
    // The subagent's hostile model name is text.
    assert!(!sub_main.contains("<script") && sub_main.contains("haiku &lt;script&gt;"));
    // The compaction: one marker, its summary folded in it, not a prompt.
    assert_eq!(
        main.matches("class=\"note compaction\"").count(),
        1,
        "{main}"
    );
    let marker = main
        .split("<details class=\"note compaction\">")
        .nth(1)
        .and_then(|m| m.split("</details>").next())
        .unwrap();
    assert!(
        marker.contains("Summary: the build was fixed &lt;script&gt;"),
        "{marker}"
    );
    assert!(!main.contains("<pre class=\"said\">This session is being continued"));
    assert!(main.contains("<pre class=\"said\">Now run them again</pre>"));
    assert!(!main.contains(HOSTILE) && !main.contains("<script"));
}

#[test]
fn chromium_shows_a_codex_rollouts_tokens_per_turn() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    let base = format!("http://{}", s.addr);
    let dom = b.dom(&format!("{base}/transcripts/{CODEX_ID}"));
    let main = main_of(&dom);
    assert!(main.contains("gpt-5-codex"));
    let turns = turn_tokens(main);
    // The count after the patch (and its repeat) goes to the turn of the
    // shell call and the patch; the last to the turn it follows.
    assert_eq!(
        turns,
        [[250, 30, 0, 180, 280], [150, 15, 0, 120, 165]],
        "{main}"
    );
    assert_eq!(sum(&turns), usage_of(&s, CODEX_ID));
    // Its compaction: the marker, the summary folded in it, as text.
    let marker = main
        .split("<details class=\"note compaction\">")
        .nth(1)
        .and_then(|m| m.split("</details>").next())
        .unwrap_or_else(|| panic!("no compaction marker: {main}"));
    assert!(
        marker.contains("<pre>Summary: main.rs prints new &lt;script&gt;"),
        "{marker}"
    );
    assert!(!main.contains("<script"));
}

#[test]
fn chromium_opens_the_page_of_a_message_link() {
    let Some(b) = browser() else { return };
    let s = crate::paging::served();
    let base = format!("http://{}", s.addr);
    let id = crate::paging::ID;
    // The link shape find and jump-to-error build: `?at=N#mN`.
    let dom = b.dom(&format!("{base}/transcripts/{id}?at=737#m737"));
    let main = main_of(&dom);
    assert!(main.contains("id=\"m737\""), "{main}");
    assert!(main.contains("messages 601–800 of 1,050"));
    assert_no_raw_tool_json(main);
    // A message of results only lands on its result, under its call.
    let dom = b.dom(&format!("{base}/transcripts/{id}?at=601#m601"));
    assert!(main_of(&dom).contains("<details class=\"result\" id=\"m601\">"));
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

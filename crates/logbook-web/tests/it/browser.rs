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

use crate::harness::Served;

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

#[test]
fn chromium_walks_the_demo_project() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is missing on CI; .ci/run installs it (apt-get install chromium)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let s = Served::demo();
    let b = Browser {
        bin,
        profile: tempfile::tempdir().unwrap(),
    };
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

//! What people see: the human (non `--json`) output of the commands, kept
//! inline as snapshots so that a change in the library cannot change the
//! text without a test failing.
//!
//! The clock is pinned with `LOGBOOK_NOW` at every step, so times, ages and
//! display names stay literal; [`settings`] replaces only what differs from
//! one run to the next (the temp root, random ids, the real clock, elapsed
//! seconds, the index's size).
//!
//! To change an expected text, set it to `@""` and run
//! `cargo insta test --accept -p logbook-cli --test it -- snapshots`, then read
//! what it wrote.

use insta::{Settings, assert_snapshot};

use crate::harness::{TestProject, shared_text};

/// The filters every snapshot here goes through. `names` turns known ids
/// into labels first, so a snapshot still shows which run is which; any
/// other UUID becomes `[UUID]`.
fn settings(t: &TestProject, names: &[(&str, &str)]) -> Settings {
    // Not `clone_current`: a test that binds again (with more names) must
    // not inherit the `[UUID]` filter ahead of its new names.
    let mut s = Settings::new();
    for (id, label) in names {
        s.add_filter(&regex::escape(id), *label);
    }
    let root = t.root().to_string_lossy().into_owned();
    // The canonical form too: on macOS the temp dir is reached through a symlink.
    if let Ok(canonical) = t.root().canonicalize() {
        let canonical = canonical.to_string_lossy().into_owned();
        if canonical != root {
            s.add_filter(&regex::escape(&canonical), "[ROOT]");
        }
    }
    s.add_filter(&regex::escape(&root), "[ROOT]");
    s.add_filter(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        "[UUID]",
    );
    s.add_filter(r"\bagent-[0-9a-f]{8}\b", "agent-[ID]");
    // Pinned times are in 2025 and the fixtures' in January 2026, so a
    // timestamp dated around the real today came from the real clock.
    let today = logbook::clock::Clock::SYSTEM
        .now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let days: Vec<String> = [-1i64, 0, 1]
        .iter()
        .filter_map(|d| today.checked_add(jiff::Span::new().days(*d)).ok())
        .map(|d| d.to_string())
        .collect();
    s.add_filter(
        &format!(
            r"(?:{})T\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?(?:Z|[+-]\d{{2}}:\d{{2}})",
            days.join("|")
        ),
        "[TIMESTAMP]",
    );
    s.add_filter(r"\bin \d+\.\d+s\b", "in [SECONDS]s");
    s.add_filter(r"Size: +\d+\.\d MiB", "Size:          [SIZE] MiB");
    s
}

/// Runs `logbook ARGS`, asserts success and returns stdout, followed by
/// stderr when there is any (warnings are part of what people see).
#[track_caller]
fn human(t: &TestProject, args: &[&str]) -> String {
    let r = t.run(args);
    let mut out = r.ok().to_string();
    if !r.stderr.is_empty() {
        out.push_str("--- stderr ---\n");
        out.push_str(&r.stderr);
    }
    out
}

/// Runs a command that prints its report and then fails (exit 1), as
/// `doctor` does while anything is wrong: stdout, then stderr.
fn failing_report(t: &TestProject, args: &[&str]) -> String {
    let r = t.run(args);
    assert_eq!(r.code, 1, "{r:?}");
    format!("{}--- stderr ---\n{}", r.stdout, r.stderr)
}

/// Runs `logbook ARGS`, asserts it exits with `code` and prints nothing on
/// stdout, and returns stderr.
#[track_caller]
fn failure(t: &TestProject, code: i32, args: &[&str]) -> String {
    let r = t.run(args);
    assert_eq!(r.code, code, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    r.stderr
}

/// Sets the clock of the commands that follow.
fn at(t: &mut TestProject, now: &str) {
    t.now = Some(now.to_string());
}

/// The run id in `run start`'s first line, `Started run {id}`.
fn started_id(out: &str) -> String {
    out.lines()
        .next()
        .and_then(|l| l.strip_prefix("Started run "))
        .unwrap_or_else(|| panic!("no `Started run ID` line:\n{out}"))
        .to_string()
}

#[test]
fn work_session_commands() {
    let mut t = TestProject::new();
    let _s = settings(&t, &[]).bind_to_scope();

    at(&mut t, "2025-01-15T10:30:00Z");
    assert_snapshot!(
        human(&t, &[
            "start", "--client", "ACME", "--project", "AUDIT", "--max-tokens", "200000", "--yes",
        ]),
        @"
    Started session SES202501-ACME-AUDIT 🟢
    Client: ACME  Project: AUDIT
    Token budget: 200,000
    File: [ROOT]/.logbook/sessions/SES202501-ACME-AUDIT.yaml
    "
    );
    assert_snapshot!(
        human(&t, &["milestone", "add", "Requirements Complete"]),
        @"- [ ] Requirements Complete"
    );
    assert_snapshot!(
        human(&t, &["milestone", "add", "Architecture Approved"]),
        @"- [ ] Architecture Approved"
    );
    at(&mut t, "2025-01-15T11:10:00Z");
    assert_snapshot!(
        human(&t, &["milestone", "done", "Requirements Complete"]),
        @"- [x] Requirements Complete"
    );
    assert_snapshot!(
        human(&t, &["artifact", "add", "docs/prd.md", "--agent", "pm"]),
        @"Recorded artifact docs/prd.md"
    );
    assert_snapshot!(
        human(&t, &["usage", "--add", "45000"]),
        @"SES202501-ACME-AUDIT: 45,000/200,000 tokens (23%), peak 45,000 🟢"
    );
    let spawned = human(&t, &["agent", "spawn", "analyst"]);
    assert_snapshot!(spawned, @"agent-[ID]");
    at(&mut t, "2025-01-15T11:40:00Z");
    assert_snapshot!(
        human(&t, &[
            "agent", "done", spawned.trim(), "--tokens", "32000", "--output", "out/analyst.md",
        ]),
        @"Agent agent-[ID] done: 32,000 tokens kept out of the main context (session total 32,000)"
    );
    assert_snapshot!(
        human(&t, &["note", "Client prefers OAuth2 over JWT"]),
        @"Noted in SES202501-ACME-AUDIT"
    );

    at(&mut t, "2025-01-15T12:45:00Z");
    assert_snapshot!(human(&t, &["status"]), @"
    Session: SES202501-ACME-AUDIT 🟢
    Status: active
    Duration: 2h 15m
    Tokens: 45,000/200,000 (23%)
    Progress Bar: [██░░░░░░░░] 23%

    Milestones:
    - [x] Requirements Complete
    - [ ] Architecture Approved

    Recent Artifacts:
    - docs/prd.md (created 1h ago)

    Agents Spawned This Session: 1
    Token Savings from Isolation: 32,000
    ");
    assert_snapshot!(human(&t, &["tokens"]), @"
    Token Usage Report: SES202501-ACME-AUDIT

    Main Session:
      Used: 45,000 / 200,000 (23%)
      Remaining: 155,000
      Peak: 45,000

    Subprocess Agents:
      analyst: 32,000 tokens (isolated)

    Total Consumed (if no isolation): 77,000
    Actual Main Session: 45,000
    Tokens Saved: 32,000 (42% savings)
    ");
    assert_snapshot!(human(&t, &["savings"]), @"
    Token Isolation Savings

    Without Isolation:
      All agent work in main context: 77,000 tokens
      Within limit, 123,000 tokens to spare

    With Isolation:
      Main session: 45,000 tokens
      Agents in subprocesses: 32,000 tokens (not counted)

    Savings: 32,000 tokens (42%)
    Status: 🟢 Within budget
    ");
    assert_snapshot!(human(&t, &["list"]), @"
    Active Sessions:
      SES202501-ACME-AUDIT 🟢 (2h) (active)

    Archived Sessions:
      (none)
    ");

    at(&mut t, "2025-01-15T13:00:00Z");
    assert_snapshot!(
        human(&t, &["close", "--summary", "PRD done; next: story 1-2"]),
        @"
    Closed session SES202501-ACME-AUDIT ✅
    Duration: 2h 30m
    Milestones: 1/2 done
    Artifacts: 1
    Agents spawned: 1
    Tokens: 45,000/200,000 main, 32,000 saved by isolation
    Archived to: [ROOT]/.logbook/sessions/archive/SES202501-ACME-AUDIT.yaml

    Context Summary:
    PRD done; next: story 1-2
    "
    );
    assert_snapshot!(human(&t, &["list"]), @"
    Active Sessions:
      (none)

    Archived Sessions:
      SES202501-ACME-AUDIT ✅ (closed 2025-01-15)
    ");
}

#[test]
fn token_reports_over_the_budget() {
    let mut t = TestProject::new();
    let _s = settings(&t, &[]).bind_to_scope();
    at(&mut t, "2025-02-01T09:00:00Z");
    human(
        &t,
        &[
            "start",
            "--client",
            "ACME",
            "--project",
            "BIG",
            "--max-tokens",
            "100000",
        ],
    );
    human(&t, &["usage", "--add", "97000"]);
    human(&t, &["agent", "spawn", "architect", "--id", "agent-arch"]);
    human(&t, &["agent", "done", "agent-arch", "--tokens", "60000"]);
    assert_snapshot!(human(&t, &["status"]), @"
    Session: SES202502-ACME-BIG 🔴
    Status: active
    Duration: 0m
    Tokens: 97,000/100,000 (97%)
    Progress Bar: [██████████] 97%

    Agents Spawned This Session: 1
    Token Savings from Isolation: 60,000
    ");
    assert_snapshot!(human(&t, &["tokens"]), @"
    Token Usage Report: SES202502-ACME-BIG

    Main Session:
      Used: 97,000 / 100,000 (97%)
      Remaining: 3,000
      Peak: 97,000

    Subprocess Agents:
      architect: 60,000 tokens (isolated)

    Total Consumed (if no isolation): 157,000
    Actual Main Session: 97,000
    Tokens Saved: 60,000 (38% savings)
    ");
    assert_snapshot!(human(&t, &["savings"]), @"
    Token Isolation Savings

    Without Isolation:
      All agent work in main context: 157,000 tokens
      Would exceed limit by: 57,000 tokens

    With Isolation:
      Main session: 97,000 tokens
      Agents in subprocesses: 60,000 tokens (not counted)

    Savings: 60,000 tokens (38%)
    Status: 🔴 Critical: over 95% of budget
    ");
}

#[test]
fn run_commands() {
    let mut t = TestProject::new();
    at(&mut t, "2025-10-06T17:00:00Z");
    human(&t, &["start", "--client", "ACME", "--project", "LAPTOPS"]);

    at(&mut t, "2025-10-06T17:09:00Z");
    let casey = human(
        &t,
        &[
            "run",
            "start",
            "--agent",
            "casey",
            "--title",
            "Casey",
            "--workflow",
            "deep-dive-app",
            "--description",
            "Deep dive into the request",
            "--bundle",
            "bmad/bmm",
            "--input",
            "project_name=Laptops",
            "--tag",
            "q4",
            "--user",
            "bryan",
        ],
    );
    let casey_id = started_id(&casey);
    t.write(
        &format!("docs/agent-outputs/{casey_id}/requirements.md"),
        "# Requirements\n\nTen laptops with a budget of 1,200 each.\n",
    );
    let s = settings(&t, &[(casey_id.as_str(), "[RUN-CASEY]")]).bind_to_scope();
    assert_snapshot!(casey, @"
    Started run [RUN-CASEY]
      Agent:    Casey
      Workflow: deep-dive-app
      Folder:   [ROOT]/docs/agent-outputs/[RUN-CASEY]
      Work session: SES202510-ACME-LAPTOPS
    Register outputs with `logbook run output [RUN-CASEY] FILE --type document --description …`
    ");
    at(&mut t, "2025-10-06T17:20:00Z");
    assert_snapshot!(
        human(&t, &[
            "run", "output", &casey_id, "requirements.md", "--type", "document",
            "--description", "Detailed requirements",
        ]),
        @"Registered requirements.md (document) in run [RUN-CASEY]"
    );
    at(&mut t, "2025-10-06T17:25:00Z");
    assert_snapshot!(
        human(&t, &["run", "finish", &casey_id]),
        @"Run [RUN-CASEY] completed (1 outputs)"
    );
    assert_snapshot!(human(&t, &["run", "show", &casey_id]), @"
    Casey - deep-dive-app (Oct 6, 2025, 5:25 PM)
      5:09p - deep-dive-app: Laptops
      Id:       [RUN-CASEY]
      Status:   completed
      Started:  2025-10-06 17:09:00 UTC
      Finished: 2025-10-06 17:25:00 UTC
      User:     bryan
      Folder:   [ROOT]/docs/agent-outputs/[RUN-CASEY]
      Tags:     q4
      Work session: SES202510-ACME-LAPTOPS
    Outputs (1):
      requirements.md [document] Detailed requirements
    ");
    assert_snapshot!(human(&t, &["run", "env", &casey_id]), @"
    export LOGBOOK_SESSION_ID='[RUN-CASEY]'
    export LOGBOOK_SESSION_FOLDER='[ROOT]/docs/agent-outputs/[RUN-CASEY]'
    export LOGBOOK_MANIFEST_FILE='[ROOT]/docs/agent-outputs/[RUN-CASEY]/manifest.json'
    export LOGBOOK_DEFAULT_OUTPUT_FILE='[ROOT]/docs/agent-outputs/[RUN-CASEY]/output.md'
    ");
    drop(s);

    at(&mut t, "2025-10-07T09:30:00Z");
    let pixel = human(
        &t,
        &[
            "run",
            "start",
            "--agent",
            "pixel",
            "--workflow",
            "build-stories",
            "--related",
            &casey_id,
            "--user",
            "bryan",
            "--bundle",
            "bmad/bmm",
            "--description",
            "Stories from the requirements",
        ],
    );
    let pixel_id = started_id(&pixel);
    let names = [
        (casey_id.as_str(), "[RUN-CASEY]"),
        (pixel_id.as_str(), "[RUN-PIXEL]"),
    ];
    let _s = settings(&t, &names).bind_to_scope();
    assert_snapshot!(pixel, @"
    Started run [RUN-PIXEL]
      Agent:    pixel
      Workflow: build-stories
      Folder:   [ROOT]/docs/agent-outputs/[RUN-PIXEL]
      Work session: SES202510-ACME-LAPTOPS
    Register outputs with `logbook run output [RUN-PIXEL] FILE --type document --description …`
    ");
    assert_snapshot!(human(&t, &["run", "show", &pixel_id]), @"
    pixel - build-stories (In Progress)
      9:30a - build-stories
      Id:       [RUN-PIXEL]
      Status:   running
      Started:  2025-10-07 09:30:00 UTC
      User:     bryan
      Folder:   [ROOT]/docs/agent-outputs/[RUN-PIXEL]
      Work session: SES202510-ACME-LAPTOPS
      Builds on: [RUN-CASEY]
    Outputs (0):
    ");

    at(&mut t, "2025-10-07T10:00:00Z");
    assert_snapshot!(human(&t, &["find"]), @"
    [RUN-PIXEL]  running    pixel - build-stories (In Progress)
        9:30a - build-stories · 0 output(s)
    [RUN-CASEY]  completed  Casey - deep-dive-app (Oct 6, 2025, 5:25 PM)
        Yday 5:09p - deep-dive-app: Laptops · 1 output(s)
    ");
    assert_snapshot!(
        human(&t, &["find", "--agent", "casey", "--status", "completed"]),
        @"
    [RUN-CASEY]  completed  Casey - deep-dive-app (Oct 6, 2025, 5:25 PM)
        Yday 5:09p - deep-dive-app: Laptops · 1 output(s)
    "
    );
    assert_snapshot!(human(&t, &["find", "--text", "laptops budget"]), @"
    [RUN-CASEY]  completed  Casey - deep-dive-app (Oct 6, 2025, 5:25 PM)
        Yday 5:09p - deep-dive-app: Laptops · 1 output(s)
        …dive into the request 5:09p - deep-dive-app: [Laptops] bryan project_name: [Laptops] work_session: SES202510-ACME-[LAPTOPS] q4 Detailed…
    ");
    assert_snapshot!(human(&t, &["find", "--text", "nothing-like-this"]), @"No runs match.");
    assert_snapshot!(
        human(&t, &[
            "latest-output", "--agent", "casey", "--workflow", "^deep-", "--type", "document",
        ]),
        @"[ROOT]/docs/agent-outputs/[RUN-CASEY]/requirements.md"
    );
}

/// A finished run's manifest. Lineage lists edges in id order, so the
/// lineage test writes runs with fixed ids instead of starting them.
fn manifest(id: &str, agent: &str, workflow: &str, at: &str, related: &[&str]) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "version": "1.0.0",
        "session_id": id,
        "agent": { "name": agent, "title": agent },
        "workflow": { "name": workflow, "description": "" },
        "execution": {
            "started_at": at,
            "completed_at": at,
            "status": "completed",
            "user": "bryan",
        },
        "outputs": [],
        "inputs": {},
        "related_sessions": related,
        "metadata": {},
    }))
    .unwrap()
}

#[test]
fn lineage_formats() {
    let mut t = TestProject::new();
    at(&mut t, "2025-10-08T12:00:00Z");
    let a = "aaaaaaaa-0000-4000-8000-00000000000a";
    let b = "bbbbbbbb-0000-4000-8000-00000000000b";
    let c = "cccccccc-0000-4000-8000-00000000000c";
    let gone = "dddddddd-0000-4000-8000-00000000000d";
    for (id, agent, workflow, started, related) in [
        (a, "alex", "intake-app", "2025-10-05T23:01:45Z", vec![]),
        (b, "casey", "deep-dive-app", "2025-10-06T17:09:00Z", vec![]),
        (
            c,
            "pixel",
            "build-stories",
            "2025-10-07T09:30:00Z",
            vec![b, gone],
        ),
    ] {
        t.write(
            &format!("docs/agent-outputs/{id}/manifest.json"),
            &manifest(id, agent, workflow, started, &related),
        );
    }
    let names = [
        (a, "[RUN-A]"),
        (b, "[RUN-B]"),
        (c, "[RUN-C]"),
        (gone, "[GONE]"),
    ];
    let _s = settings(&t, &names).bind_to_scope();
    assert_snapshot!(human(&t, &["run", "link", b, a]), @"Run [RUN-B] now builds on [RUN-A]");
    assert_snapshot!(human(&t, &["lineage", b]), @"
    casey - deep-dive-app (Oct 6, 2025, 5:09 PM) [completed] [RUN-B]
    builds on:
    └── alex - intake-app (Oct 5, 2025, 11:01 PM) [completed] [RUN-A]
    built on by:
    └── pixel - build-stories (Oct 7, 2025, 9:30 AM) [completed] [RUN-C]
    ");
    assert_snapshot!(human(&t, &["lineage", b, "--format", "tree"]), @"
    casey - deep-dive-app (Oct 6, 2025, 5:09 PM) [completed] [RUN-B]
    builds on:
    └── alex - intake-app (Oct 5, 2025, 11:01 PM) [completed] [RUN-A]
    built on by:
    └── pixel - build-stories (Oct 7, 2025, 9:30 AM) [completed] [RUN-C]
    ");
    assert_snapshot!(human(&t, &["lineage", b, "--format", "dot"]), @r#"
    digraph lineage {
      rankdir=LR;
      node [shape=box];
      "[RUN-B]" [label="casey - deep-dive-app (Oct 6, 2025, 5:09 PM)
    [RUN-B]", penwidth=2];
      "[RUN-A]" [label="alex - intake-app (Oct 5, 2025, 11:01 PM)
    [RUN-A]"];
      "[RUN-C]" [label="pixel - build-stories (Oct 7, 2025, 9:30 AM)
    [RUN-C]"];
      "[RUN-A]" -> "[RUN-B]";
      "[RUN-B]" -> "[RUN-C]";
    }
    "#);
    assert_snapshot!(human(&t, &["lineage", b, "--format", "mermaid"]), @r#"
    graph LR
      n0["casey - deep-dive-app (Oct 6, 2025, 5:09 PM)<br/>[RUN-B]"]
      n1["alex - intake-app (Oct 5, 2025, 11:01 PM)<br/>[RUN-A]"]
      n2["pixel - build-stories (Oct 7, 2025, 9:30 AM)<br/>[RUN-C]"]
      n1 --> n0
      n0 --> n2
    "#);
    // A run naming an id that has no run: the dangling node.
    assert_snapshot!(human(&t, &["lineage", c]), @"
    pixel - build-stories (Oct 7, 2025, 9:30 AM) [completed] [RUN-C]
    builds on:
    ├── casey - deep-dive-app (Oct 6, 2025, 5:09 PM) [completed] [RUN-B]
    │   └── alex - intake-app (Oct 5, 2025, 11:01 PM) [completed] [RUN-A]
    └── [GONE] (missing: no run with this id)
    dangling: [GONE] is named in related_sessions but has no run
    ");
    assert_snapshot!(human(&t, &["lineage", c, "--format", "mermaid"]), @r#"
    graph LR
      n0["pixel - build-stories (Oct 7, 2025, 9:30 AM)<br/>[RUN-C]"]
      n1["casey - deep-dive-app (Oct 6, 2025, 5:09 PM)<br/>[RUN-B]"]
      n2["[GONE]<br/>[GONE]"]:::missing
      n3["alex - intake-app (Oct 5, 2025, 11:01 PM)<br/>[RUN-A]"]
      n3 --> n1
      n1 --> n0
      n2 --> n0
      classDef missing stroke-dasharray: 5 5
    "#);
}

const MAIN_ID: &str = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
const SUB_ID: &str = "0b7e9d2a-8c1f-4e3d-a6b5-9c8d7e6f5a4b";

#[test]
fn transcript_commands() {
    let mut t = TestProject::new();
    at(&mut t, "2026-01-18T11:00:00.000Z");
    let names = [(MAIN_ID, "[MAIN-ID]"), (SUB_ID, "[SUB-ID]")];
    let _s = settings(&t, &names).bind_to_scope();
    // The fixtures' workdir moved into the project, so `list` shows them.
    let workdir = t.root().join("app").to_string_lossy().into_owned();
    for name in ["transcript-main.json", "transcript-subagent.json"] {
        let text =
            shared_text(&format!("fixtures/{name}")).replace("/home/bryan/projects/acme", &workdir);
        t.write(&format!("in/{name}"), &text);
    }
    assert_snapshot!(
        human(&t, &["transcript", "list"]),
        @"No transcripts for this project."
    );
    assert_snapshot!(
        human(&t, &["transcript", "import", "in/transcript-main.json"]),
        @"Saved main transcript [MAIN-ID] to [ROOT]/.logbook/transcripts/session_3c4d5e6f.json"
    );
    assert_snapshot!(
        human(&t, &["transcript", "import", "in/transcript-subagent.json"]),
        @"Saved subagent transcript [SUB-ID] to [ROOT]/.logbook/transcripts/subagent_session_7e6f5a4b.json"
    );
    assert_snapshot!(human(&t, &["transcript", "list"]), @"
    [MAIN-ID]  main      logbook      2026-01-18 10:42:07 UTC      12m      3 msgs      2,242 tokens           -  -                   I need to purchase 10 laptops for the sales team
    [SUB-ID]  subagent  logbook      2026-01-18 10:36:51 UTC       3m      2 msgs      1,160 tokens           -  -                   Analyse the laptop request: models, budget, delivery. ← 3c4d5e6f
    ");
    assert_snapshot!(
        human(&t, &["transcript", "list", "--subagents"]),
        @"[SUB-ID]  subagent  logbook      2026-01-18 10:36:51 UTC       3m      2 msgs      1,160 tokens           -  -                   Analyse the laptop request: models, budget, delivery. ← 3c4d5e6f"
    );
    assert_snapshot!(human(&t, &["transcript", "show", MAIN_ID]), @"
    [MAIN-ID] (main)
    Title:     I need to purchase 10 laptops for the sales team
    File:      [ROOT]/.logbook/transcripts/session_3c4d5e6f.json
    Workdir:   [ROOT]/app
    Started:   2026-01-18 10:30:00 UTC
    Active:    2026-01-18 10:42:07 UTC
    Tokens:    2,242
    Messages:  3
      user      I need to purchase 10 laptops for the sales team
      assistant I'll gather the requirements first.
      assistant Summary of the earlier conversation: budget approved, 10 laptops…
    ");
    assert_snapshot!(human(&t, &["transcript", "show", "7e6f5a4b"]), @"
    [SUB-ID] (subagent)
    Title:     Analyse the laptop request: models, budget, delivery.
    File:      [ROOT]/.logbook/transcripts/subagent_session_7e6f5a4b.json
    Workdir:   [ROOT]/app
    Started:   2026-01-18 10:33:12 UTC
    Active:    2026-01-18 10:36:51 UTC
    Tokens:    1,160
    Parent:    [MAIN-ID]
    Messages:  2
      user      Analyse the laptop request: models, budget, delivery.
      assistant Recommend 14-inch business laptops, 16 GB RAM.
    ");
}

#[test]
fn workflow_commands() {
    let mut t = TestProject::new();
    let _s = settings(&t, &[]).bind_to_scope();
    at(&mut t, "2025-03-10T09:00:00Z");
    human(&t, &["start", "--client", "ACME", "--project", "FLOW"]);
    assert_snapshot!(human(&t, &["workflow", "show"]), @"
    Workflow state of SES202503-ACME-FLOW  (version 1, nothing recorded yet)
    Mode:      analysis (since 2025-03-10 09:00:00 UTC)
    No agent invoked yet (`logbook workflow invoke AGENT --prompt …`).
    ");

    at(&mut t, "2025-03-10T09:05:00Z");
    assert_snapshot!(
        human(&t, &[
            "workflow", "invoke", "architect", "--prompt", "Design the store",
            "--context", r#"{"run_id":"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f"}"#,
        ]),
        @"Invoked architect (state version 2)"
    );
    at(&mut t, "2025-03-10T09:40:00Z");
    assert_snapshot!(
        human(&t, &[
            "workflow", "complete", "architect", "--summary", "Designed",
            "--artifact", "docs/arch.md",
            "--handoff-to", "implementer", "--reason", "Ready to build",
        ]),
        @"architect completed; active agent: implementer (state version 3)"
    );
    assert_snapshot!(
        human(&t, &[
            "workflow", "decide", "--type", "architectural", "--description", "Files are the truth",
            "--rationale", "Rebuildable", "--by", "architect", "--approved-by", "critic",
        ]),
        @"[UUID]"
    );
    assert_snapshot!(
        human(&t, &[
            "workflow", "verdict", "critic", "--decision", "conditional", "--confidence", "0.8",
            "--reasoning", "Sound, if the index stays derived",
            "--condition", "Index can be deleted",
        ]),
        @"Verdict of critic: conditional (state version 5)"
    );
    assert_snapshot!(
        human(&t, &[
            "workflow", "handoff", "implementer", "qa", "--reason", "Test it",
            "--context", "Run the crash tests",
        ]),
        @"Handoff implementer → qa pending (state version 6)"
    );
    assert_snapshot!(
        human(&t, &["workflow", "phase", "validation"]),
        @"Phase: validation (state version 7)"
    );
    at(&mut t, "2025-03-10T09:45:00Z");
    assert_snapshot!(human(&t, &["mode", "coding"]), @"Mode: coding (state version 8)");
    assert_snapshot!(human(&t, &["workflow", "show"]), @"
    Workflow state of SES202503-ACME-FLOW  (version 8)
    Mode:      coding (since 2025-03-10 09:45:00 UTC)
    Phase:     validation
    Active:    implementer
    History:   1 invocations (1 current, 0 compacted in 0 archives)
      ✓ architect            completed   2025-03-10 09:05:00 UTC  Designed
    Decisions:
      [architectural] Files are the truth — architect [UUID]
    Verdicts:
      critic conditional (0.80): Sound, if the index stays derived
          conditions: Index can be deleted
    Pending handoffs:
      architect → implementer: Ready to build
      implementer → qa: Test it
    ");

    // Ten more invocations compact the history; only --full shows all of it.
    for n in 1..=10 {
        at(&mut t, &format!("2025-03-10T10:{n:02}:00Z"));
        let (prompt, summary) = (format!("task {n}"), format!("done {n}"));
        human(
            &t,
            &["workflow", "invoke", "implementer", "--prompt", &prompt],
        );
        human(
            &t,
            &["workflow", "complete", "implementer", "--summary", &summary],
        );
    }
    at(&mut t, "2025-03-10T11:00:00Z");
    human(
        &t,
        &[
            "workflow",
            "invoke",
            "qa",
            "--prompt",
            "Run the crash tests",
        ],
    );
    assert_snapshot!(human(&t, &["workflow", "show"]), @"
    Workflow state of SES202503-ACME-FLOW  (version 29)
    Mode:      coding (since 2025-03-10 09:45:00 UTC)
    Phase:     validation
    Active:    qa
    History:   12 invocations (4 current, 8 compacted in 1 archives)
      ✓ implementer          completed   2025-03-10 10:08:00 UTC  done 8
      ✓ implementer          completed   2025-03-10 10:09:00 UTC  done 9
      ✓ implementer          completed   2025-03-10 10:10:00 UTC  done 10
      … qa                   in_progress 2025-03-10 11:00:00 UTC  Run the crash tests
    Decisions:
      [architectural] Files are the truth — architect [UUID]
    Verdicts:
      critic conditional (0.80): Sound, if the index stays derived
          conditions: Index can be deleted
    ");
    assert_snapshot!(human(&t, &["workflow", "show", "--full"]), @"
    Workflow state of SES202503-ACME-FLOW  (version 29)
    Mode:      coding (since 2025-03-10 09:45:00 UTC)
    Phase:     validation
    Active:    qa
    History:   12 invocations (4 current, 8 compacted in 1 archives)
      ✓ architect            completed   2025-03-10 09:05:00 UTC  Designed
      ✓ implementer          completed   2025-03-10 10:01:00 UTC  done 1
      ✓ implementer          completed   2025-03-10 10:02:00 UTC  done 2
      ✓ implementer          completed   2025-03-10 10:03:00 UTC  done 3
      ✓ implementer          completed   2025-03-10 10:04:00 UTC  done 4
      ✓ implementer          completed   2025-03-10 10:05:00 UTC  done 5
      ✓ implementer          completed   2025-03-10 10:06:00 UTC  done 6
      ✓ implementer          completed   2025-03-10 10:07:00 UTC  done 7
      ✓ implementer          completed   2025-03-10 10:08:00 UTC  done 8
      ✓ implementer          completed   2025-03-10 10:09:00 UTC  done 9
      ✓ implementer          completed   2025-03-10 10:10:00 UTC  done 10
      … qa                   in_progress 2025-03-10 11:00:00 UTC  Run the crash tests
    Decisions:
      [architectural] Files are the truth — architect [UUID]
    Verdicts:
      critic conditional (0.80): Sound, if the index stays derived
          conditions: Index can be deleted
    ");
}

#[test]
fn index_and_doctor() {
    let mut t = TestProject::new();
    at(&mut t, "2025-10-06T17:00:00Z");
    human(&t, &["start", "--client", "ACME", "--project", "IDX"]);
    let started = human(
        &t,
        &[
            "run",
            "start",
            "--agent",
            "casey",
            "--workflow",
            "deep-dive-app",
            "--bundle",
            "bmad/bmm",
            "--description",
            "Deep dive into the request",
        ],
    );
    let id = started_id(&started);
    t.write(&format!("docs/agent-outputs/{id}/notes.md"), "notes\n");
    human(
        &t,
        &[
            "run",
            "output",
            &id,
            "notes.md",
            "--type",
            "document",
            "--description",
            "Notes",
        ],
    );
    // Sorts before any random id: doctor lists run folders by name.
    let broken = "00000000-0000-4000-8000-000000000000";
    let names = [(id.as_str(), "[RUN]"), (broken, "[BROKEN]")];
    let _s = settings(&t, &names).bind_to_scope();

    at(&mut t, "2025-10-06T17:30:00Z");
    assert_snapshot!(human(&t, &["doctor"]), @"No problems found (1 runs checked)");
    assert_snapshot!(human(&t, &["index", "status"]), @"
    Index: [ROOT]/.logbook/index.db (schema 16)
      Size:          [SIZE] MiB
      Runs:          1
      Outputs:       1
      Lineage edges: 0
      Work sessions: 1
      Transcripts:   0
      Workflows:     0
      Corrupt files: 0
      Pending:       0
      Last sync:     2025-10-06T17:00:00.000Z
      Full text:     complete
      Up to date with the files.
      Schema history:
         16  built                            2025-10-06T17:00:00.000Z  (logbook 0.1.0)
    ");

    // A manifest another tool broke, and the run left running for a day.
    t.write(
        &format!("docs/agent-outputs/{broken}/manifest.json"),
        "{ not json",
    );
    at(&mut t, "2025-10-08T09:00:00Z");
    assert_snapshot!(human(&t, &["index", "status"]), @"
    Index: [ROOT]/.logbook/index.db (schema 16)
      Size:          [SIZE] MiB
      Runs:          1
      Outputs:       1
      Lineage edges: 0
      Work sessions: 1
      Transcripts:   0
      Workflows:     0
      Corrupt files: 0
      Pending:       0
      Last sync:     2025-10-06T17:00:00.000Z
      Full text:     complete
      Stale: 1 new, 0 changed, 0 deleted file(s); run `logbook index sync`.
      Schema history:
         16  built                            2025-10-06T17:00:00.000Z  (logbook 0.1.0)
    ");
    assert_snapshot!(human(&t, &["index", "sync"]), @"
    Synced the index in [SECONDS]s: 3 file(s) scanned, 1 read, 0 removed, 1 corrupt.
    --- stderr ---
    warning: skipped [ROOT]/docs/agent-outputs/[BROKEN]/manifest.json: not a valid manifest: key must be a string at line 1 column 3 (`logbook doctor` checks every file)
    ");
    assert_snapshot!(failing_report(&t, &["doctor"]), @"
    corrupt-manifest [ROOT]/docs/agent-outputs/[BROKEN]/manifest.json: not a valid manifest: key must be a string at line 1 column 3; listings skip this run until the file is repaired
    abandoned-run [ROOT]/docs/agent-outputs/[RUN]/manifest.json: run [RUN] (casey - deep-dive-app) has been running since 2025-10-06T17:00:00.000Z (1 day ago); `logbook doctor --fix` marks it failed
    --- stderr ---
    error: 2 problem(s) found; `logbook doctor --fix` repairs what it can
    ");
    assert_snapshot!(human(&t, &["find"]), @"
    [RUN]  running    casey - deep-dive-app (In Progress)
        Mon 5:00p - deep-dive-app · 1 output(s)
    --- stderr ---
    warning: skipped 1 invalid manifest(s); `logbook doctor` names them
    ");
}

#[test]
fn typical_errors() {
    let mut t = TestProject::new();
    let _s = settings(&t, &[]).bind_to_scope();
    at(&mut t, "2025-10-06T17:00:00Z");
    // No active work session: not found (exit 4).
    assert_snapshot!(
        failure(&t, 4, &["status"]),
        @"error: no active work session; start one with `logbook start`, or resume a paused one with `logbook resume ID` (`logbook list` shows them)"
    );
    assert_snapshot!(
        failure(&t, 4, &["note", "nowhere to go"]),
        @"error: no active work session; start one with `logbook start`, or resume a paused one with `logbook resume ID` (`logbook list` shows them)"
    );
    // Unknown (exit 4) and malformed (exit 1) run ids.
    assert_snapshot!(
        failure(&t, 4, &["run", "show", "11111111-2222-4333-8444-555555555555"]),
        @"error: run [UUID] not found; `logbook find` lists the runs there are"
    );
    assert_snapshot!(
        failure(&t, 1, &["run", "finish", "not-a-run"]),
        @r#"error: invalid run id "not-a-run": expected a UUID such as [UUID], or its first 8 or more characters; `logbook find` lists runs"#
    );
    // Invalid enum values are bad usage (exit 2).
    assert_snapshot!(failure(&t, 2, &["mode", "sleeping"]), @r#"
    error: invalid value 'sleeping' for '<MODE>': invalid mode "sleeping": expected one of: analysis, planning, coding, disabled

    For more information, try '--help'.
    "#);
    // A query value is checked by the library, as MCP and the web API
    // check it (exit 1).
    assert_snapshot!(
        failure(&t, 1, &["find", "--status", "done"]),
        @r#"error: invalid status "done": expected one of: running, completed, failed, cancelled, unknown"#
    );
    assert_snapshot!(
        failure(&t, 2, &["run", "finish", "x", "--status", "weird"]),
        @"
    error: invalid value 'weird' for '--status <STATUS>': expected one of: completed, failed, cancelled

    For more information, try '--help'.
    "
    );
}

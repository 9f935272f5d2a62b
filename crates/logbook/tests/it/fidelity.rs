//! Rewrites keep what they do not own (issue 14, items 2, 5, 7, 12 and
//! seed 003's timestamp): big integers, nulls, wrong-typed known fields,
//! every YAML scalar kind, byte order marks, bool-like YAML keys.

use std::path::Path;

use logbook::Logbook;
use logbook::model::text;
use logbook::model::work_session::{MAX_TOKENS, Usage};
use logbook::ops::{doctor, transcript, work_session as ws};
use logbook_store as store;
use serde_json::Value;
use tempfile::TempDir;

const RUN_ID: &str = "a3f2c9d1-4b5e-4789-81ab-cdef12345678";

fn project() -> (TempDir, Logbook) {
    let dir = tempfile::tempdir().unwrap();
    let p = Logbook::open(dir.path()).unwrap();
    (dir, p)
}

fn manifest_text(extra: &str) -> String {
    format!(
        r#"{{
  "version": "1.0.0",
  "session_id": "{RUN_ID}",
  "agent": {{"name": "alex", "title": null}},
  "workflow": {{"name": "intake"}},
  "execution": {{"started_at": "2025-10-05T23:01:45.123Z", "completed_at": null, "status": "running"}},
  "outputs": [],
  "inputs": null,
  {extra}
  "big": 12345678901234567890123
}}"#
    )
}

fn write_manifest(p: &Logbook, id: &str, text: &str) {
    let folder = p.config.agent_outputs_folder.join(id);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("manifest.json"), text).unwrap();
}

fn json(path: &Path) -> Value {
    text::parse_json(path, "test", &std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn run_output_keeps_big_integers_nulls_and_wrong_typed_fields() {
    let (_dir, p) = project();
    let text = manifest_text(
        r#""messageCount": 8.5, "huge": -98765432109876543210987654321098765432109876543210, "ratio": 1.50, "nested": {"n": null, "i": 340282366920938463463374607431768211456},"#,
    );
    write_manifest(&p, RUN_ID, &text);
    let folder = p.config.agent_outputs_folder.join(RUN_ID);
    std::fs::write(folder.join("a.md"), "# a").unwrap();
    logbook::ops::run::register_output(
        &p,
        RUN_ID,
        "a.md",
        logbook::model::run::OutputType::Document,
        "d",
    )
    .unwrap();
    let written = std::fs::read_to_string(folder.join("manifest.json")).unwrap();
    for kept in [
        r#""big": 12345678901234567890123"#,
        r#""huge": -98765432109876543210987654321098765432109876543210"#,
        r#""i": 340282366920938463463374607431768211456"#,
        r#""ratio": 1.50"#,
        r#""messageCount": 8.5"#,
        r#""inputs": null"#,
        r#""completed_at": null"#,
        r#""title": null"#,
        r#""n": null"#,
    ] {
        assert!(written.contains(kept), "{kept} lost:\n{written}");
    }
    let v = json(&folder.join("manifest.json"));
    assert_eq!(v["outputs"][0]["file"], "a.md");
}

#[test]
fn a_bom_or_a_wrong_typed_field_does_not_hide_a_run() {
    let (_dir, p) = project();
    let bom_id = "b4e3d8c2-5c6f-4890-92bc-def123456789";
    write_manifest(&p, bom_id, &format!("\u{feff}{}", manifest_text("")));
    write_manifest(
        &p,
        RUN_ID,
        &manifest_text(
            r#""messageCount": 8.5, "displayName": 3, "tags": "one", "outputs2": [], "related_sessions": {"x": 1},"#,
        ),
    );
    let scan = store::run::scan(&p).unwrap();
    assert!(scan.corrupt.is_empty(), "{:?}", scan.corrupt);
    assert_eq!(scan.runs.len(), 2);
    let page = logbook::ops::query::find(
        &p,
        &Default::default(),
        logbook::ops::query::FindOptions::new(logbook::ops::query::Scope::Local),
    )
    .unwrap();
    assert_eq!(page.hits.len(), 2, "both runs are listed");

    let report = doctor::check(&p, &doctor::Options::default()).unwrap();
    let wrong: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind == "wrong-type-field")
        .map(|f| (f.path.clone(), f.message.clone()))
        .collect();
    for field in ["messageCount", "displayName", "tags", "related_sessions"] {
        assert!(
            wrong
                .iter()
                .any(|(path, m)| m.starts_with(field) && path.ends_with("manifest.json")),
            "{field} not reported: {wrong:?}"
        );
    }
    assert_eq!(wrong.len(), 4, "{wrong:?}");
}

#[test]
fn doctor_names_wrong_typed_fields_of_sessions_states_and_transcripts() {
    let (_dir, p) = project();
    let s = ws::start(&p, ws::StartOptions::default()).unwrap();
    let path = store::work_session::live_path(&p, &s.session_id.parse().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("context_summary: \"\"", "context_summary: {a: 1}"),
    )
    .unwrap();
    let state = p
        .config
        .sessions_dir
        .join(format!("{}.state.json", s.session_id));
    std::fs::write(
        &state,
        "\u{feff}{\"currentMode\": \"coding\", \"activeFeature\": 7, \"version\": 3}",
    )
    .unwrap();
    let tdir = &p.config.transcripts_dir;
    std::fs::create_dir_all(tdir).unwrap();
    std::fs::write(
        tdir.join("session_3c4d5e6f.json"),
        "\u{feff}{\"id\": \"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f\", \"timestamp\": 5, \"messages\": [], \"metadata\": {\"latestTotalTokens\": 8.5}}",
    )
    .unwrap();
    let report = doctor::check(&p, &doctor::Options::default()).unwrap();
    let wrong: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind == "wrong-type-field")
        .map(|f| {
            format!(
                "{} {}",
                f.path.file_name().unwrap().to_string_lossy(),
                f.message.split(' ').next().unwrap()
            )
        })
        .collect();
    let others: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind.starts_with("corrupt"))
        .collect();
    assert!(others.is_empty(), "{others:?}");
    for expected in [
        format!("{}.yaml context_summary", s.session_id),
        format!("{}.state.json activeFeature", s.session_id),
        "session_3c4d5e6f.json timestamp".to_string(),
        "session_3c4d5e6f.json metadata.latestTotalTokens".to_string(),
    ] {
        assert!(wrong.contains(&expected), "{expected} missing: {wrong:?}");
    }
    // Still listed, and a rewrite keeps the odd values.
    assert_eq!(ws::list(&p).unwrap().sessions.len(), 1);
    ws::add_note(&p, None, "n").unwrap();
    let raw = text::parse_yaml_raw(&path, "t", &std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(raw["context_summary"]["a"], 1);
    let t = transcript::list(
        &p,
        &transcript::ListOptions {
            within: None,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t.transcripts.len(), 1, "{:?}", t.corrupt);
}

const SESSION_EXTRAS: &str = "viewport: {x: 10, y: 20}
flags: {y: yes, n: no, on: off, off: on, yes: y, no: n, true: false}
big: 12345678901234567890123
negbig: -170141183460469231731687303715884105728
float: 1e30
precise: 0.1
inf: .inf
ninf: -.inf
nan: .nan
tilde: ~
empty:
ts: 2001-12-14t21:59:43.10-05:00
date: 2002-12-14
octal: 0o17
hex: 0xFF
quoted: '123'
quoted_float: \"1e30\"
quoted_bool: 'true'
plain_yes: yes
";

#[test]
fn session_yaml_keeps_every_scalar_kind_and_bool_like_keys() {
    let (_dir, p) = project();
    let s = ws::start(&p, ws::StartOptions::default()).unwrap();
    let path = store::work_session::live_path(&p, &s.session_id.parse().unwrap());
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(SESSION_EXTRAS);
    std::fs::write(&path, format!("\u{feff}{text}")).unwrap();

    // Every command still reads it (item 12), and it is listed.
    assert_eq!(ws::list(&p).unwrap().sessions.len(), 1);
    let before = text::parse_yaml_raw(&path, "t", &text).unwrap();
    ws::add_note(&p, None, "a note").unwrap();
    let after_text = std::fs::read_to_string(&path).unwrap();
    let after = text::parse_yaml_raw(&path, "t", &after_text).unwrap();
    for key in [
        "viewport",
        "flags",
        "big",
        "negbig",
        "float",
        "precise",
        "inf",
        "ninf",
        "nan",
        "tilde",
        "empty",
        "ts",
        "date",
        "octal",
        "hex",
        "quoted",
        "quoted_float",
        "quoted_bool",
        "plain_yes",
    ] {
        assert!(
            crate::arb::same(&after[key], &before[key]),
            "{key}: {} became {}:\n{after_text}",
            before[key],
            after[key]
        );
    }
    assert_eq!(after["viewport"]["y"], 20);
    assert_eq!(after["flags"]["yes"], "y");
    assert_eq!(after["flags"]["on"], "off");
    assert_eq!(after["flags"]["true"], false);
    assert_eq!(after["big"].to_string(), "12345678901234567890123");
    assert_eq!(
        after["negbig"].to_string(),
        "-170141183460469231731687303715884105728"
    );
    assert_eq!(after["quoted"], "123");
    assert_eq!(after["quoted_bool"], "true");
    assert_eq!(after["plain_yes"], "yes");
    assert_eq!(after["tilde"], Value::Null);
    assert!(after_text.contains(": .inf\n"), "{after_text}");
    assert!(after_text.contains(": -.inf\n"), "{after_text}");
    assert!(after_text.contains(": .nan\n"), "{after_text}");
    assert_eq!(after["notes"][0], "a note");
}

#[test]
fn token_counts_are_checked_against_a_stated_maximum() {
    let (_dir, p) = project();
    let s = ws::start(&p, ws::StartOptions::default()).unwrap();
    let err = ws::record_usage(&p, None, Usage::Current(u64::MAX)).unwrap_err();
    assert!(
        matches!(err, logbook::Error::TokensOutOfRange { .. }),
        "{err}"
    );
    assert!(err.hint().is_some());
    ws::record_usage(&p, None, Usage::Current(MAX_TOKENS - 5)).unwrap();
    let err = ws::record_usage(&p, None, Usage::Add(10)).unwrap_err();
    assert!(err.to_string().contains("usage --add"), "{err}");
    ws::record_usage(&p, None, Usage::Current(1000)).unwrap();
    let (_, agent) = ws::spawn_agent(&p, None, "analyst", None, None).unwrap();
    let err = ws::finish_agent(
        &p,
        None,
        &agent,
        u64::MAX,
        None,
        logbook::model::work_session::AgentOutcome::Completed,
    )
    .unwrap_err();
    assert!(matches!(err, logbook::Error::TokensOutOfRange { .. }));
    ws::finish_agent(
        &p,
        None,
        &agent,
        10,
        None,
        logbook::model::work_session::AgentOutcome::Completed,
    )
    .unwrap();
    let report = ws::get(&p, None).unwrap().token_report();
    assert_eq!(report.total_without_isolation, 1010);
    assert!(report.savings_percentage <= 100.0);
    assert!((report.savings_percentage - 1000.0 / 1010.0).abs() < 1e-9);

    // The same error for a count in the file, naming file and field.
    let path = store::work_session::live_path(&p, &s.session_id.parse().unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    for bad in [
        "1e30",
        "18446744073709551615",
        "'2,000,000,000,000,000'",
        ".inf",
    ] {
        std::fs::write(
            &path,
            text.replace("current: 1000", &format!("current: {bad}")),
        )
        .unwrap();
        let err = ws::get(&p, None).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, logbook::Error::TokensOutOfRange { .. }),
            "{bad}: {msg}"
        );
        assert!(
            msg.contains("tokens.current") && msg.contains(&s.session_id),
            "{msg}"
        );
    }
}

const TRANSCRIPT: &str = r#"{
  "id": "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f",
  "timestamp": "2025-01-02T03:04:05.678Z",
  "version": "1.0.0",
  "messages": [
    {"role": "user", "blocks": [{"type": "text", "text": "hi", "n": 12345678901234567890123, "z": null}]}
  ],
  "metadata": {"workdir": "/w", "startedAt": "s", "lastActiveAt": "l", "latestTotalTokens": 3, "parentSessionId": null, "x": -1e400}
}
"#;

#[test]
fn transcript_import_keeps_timestamp_big_integers_and_nulls() {
    let (dir, p) = project();
    let file = dir.path().join("in.json");
    std::fs::write(&file, format!("\u{feff}{TRANSCRIPT}")).unwrap();
    let stored = transcript::import(&p, &file, false, None, None).unwrap();
    let written = std::fs::read_to_string(&stored.path).unwrap();
    for kept in [
        r#""timestamp": "2025-01-02T03:04:05.678Z""#,
        r#""n": 12345678901234567890123"#,
        r#""z": null"#,
        r#""parentSessionId": null"#,
    ] {
        assert!(written.contains(kept), "{kept} lost:\n{written}");
    }
    let back: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        back["metadata"]["x"],
        serde_json::from_str::<Value>("-1e400").unwrap(),
        "a float beyond f64 keeps its digits"
    );
    assert_eq!(
        transcript::load(&p, "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f")
            .unwrap()
            .transcript
            .timestamp,
        "2025-01-02T03:04:05.678Z"
    );
}

//! Property tests of the agents' hook settings files (Claude Code's
//! `settings*.json`, Codex's `hooks.json`), which people and other tools
//! write: reading never panics, and install then uninstall gives back every
//! value Logbook does not own.

use std::path::Path;

use logbook::model::hook::settings::{self, HookAgent, logbook_program};
use logbook_store::agent_settings::{parse, render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::arb;

/// Another tool's handler: a command that is not Logbook's, sometimes with
/// keys Logbook does not know.
fn foreign_handler() -> impl Strategy<Value = Value> {
    (
        arb::text().prop_filter("not Logbook's", |c| logbook_program(c).is_none()),
        arb::unknowns(),
    )
        .prop_map(|(command, extra)| {
            let mut h = json!({"type": "command", "command": command});
            if let Value::Object(m) = &mut h {
                m.extend(extra);
            }
            h
        })
}

/// A non-empty list of matcher groups of other tools (Logbook removes the
/// lists its uninstall empties, so an empty one would not come back).
fn foreign_groups() -> impl Strategy<Value = Value> {
    proptest::collection::vec(
        (
            proptest::option::of(arb::text()),
            proptest::collection::vec(foreign_handler(), 0..3),
        )
            .prop_map(|(matcher, hooks)| {
                let mut g = Map::new();
                if let Some(m) = matcher {
                    g.insert("matcher".into(), Value::String(m));
                }
                g.insert("hooks".into(), Value::Array(hooks));
                Value::Object(g)
            }),
        1..3,
    )
    .prop_map(Value::Array)
}

/// A settings object: unknown keys with any values, and maybe a non-empty
/// `hooks` of other tools' entries under the agents' event names and others.
fn settings() -> impl Strategy<Value = Map<String, Value>> {
    let event = prop::sample::select(vec![
        "SessionStart",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SubagentStop",
        "SessionEnd",
        "PreToolUse",
        "Notification",
    ]);
    (
        arb::unknowns(),
        proptest::option::of(proptest::collection::vec((event, foreign_groups()), 1..4)),
        arb::unknowns(),
    )
        .prop_map(|(before, hooks, after)| {
            let mut m = before;
            if let Some(hooks) = hooks {
                let hooks: Map<String, Value> =
                    hooks.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                m.insert("hooks".into(), Value::Object(hooks));
            }
            m.extend(after);
            m
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn install_then_uninstall_gives_back_what_logbook_does_not_own(
        original in settings(),
        claude in any::<bool>(),
        path in "/[a-z ']{1,12}/logbook",
    ) {
        let agent = if claude { HookAgent::ClaudeCode } else { HookAgent::Codex };
        let command = settings::hook_command(Path::new(&path));
        let mut s = original.clone();
        prop_assert_eq!(settings::install(&mut s, agent, &command), Ok(true));
        let events: Vec<String> = settings::find(&s).unwrap().into_iter().map(|f| f.event).collect();
        prop_assert_eq!(events.len(), agent.events().len());
        // What is written reads back as the same value.
        let text = render(&s, None).unwrap();
        let reread = parse(Path::new("settings.json"), &text).unwrap();
        prop_assert_eq!(&reread, &s);
        // A second install changes nothing.
        let mut again = reread.clone();
        prop_assert_eq!(settings::install(&mut again, agent, &command), Ok(false));
        prop_assert_eq!(&again, &s);
        prop_assert_eq!(settings::uninstall(&mut again), Ok(true));
        prop_assert_eq!(again, original);
    }

    #[test]
    fn reading_any_text_never_panics(text in "\\PC{0,64}", value in arb::value()) {
        let _ = parse(Path::new("settings.json"), &text);
        let as_text = serde_json::to_string(&value).unwrap();
        let parsed = parse(Path::new("settings.json"), &as_text);
        prop_assert_eq!(parsed.is_ok(), value.is_object());
        if let Ok(mut m) = parsed {
            // Whatever shape `hooks` has, an edit refuses or succeeds: never panics.
            let _ = settings::install(&mut m.clone(), HookAgent::Codex, "logbook hook");
            let _ = settings::uninstall(&mut m);
        }
    }
}

//! Property tests of the MCP server's framing, on stdio and over HTTP:
//! random bytes and random JSON-RPC objects, each answered exactly once
//! (notifications never), and the server still answers a `ping` after.

use std::cell::{Cell, RefCell};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};

use crate::mcp::Mcp;
use crate::mcp_http::{initialize, ping, post, served};

/// One line a client might send.
#[derive(Debug, Clone)]
enum Sent {
    /// Bytes that are not one JSON value.
    Garbage(Vec<u8>),
    /// A JSON object shaped more or less like JSON-RPC.
    Object(Value),
}

/// What JSON-RPC promises for a line: no answer, or one with this id.
#[derive(Debug, Clone, PartialEq)]
enum Owed {
    Nothing,
    Answer(Value),
}

fn garbage() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>().prop_filter("one line", |b| *b != b'\n'), 1..200)
        .prop_filter("not one JSON value, not blank", |b| {
            serde_json::from_slice::<Value>(b).is_err() && !b.iter().all(u8::is_ascii_whitespace)
        })
}

/// Methods that may be called any number of times without writing.
const METHODS: [&str; 8] = [
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "prompts/list",
    "resources/templates/list",
    "no/such/method",
    "notifications/cancelled",
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\\\\\"/ ]{0,8}".prop_map(Value::from),
    ]
}

fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(json!({}))),
        scalar().prop_map(Some),
        Just(Some(json!([1, 2]))),
        prop::sample::select(vec!["find_runs", "session_status", "no_such_tool"])
            .prop_map(|name| Some(json!({"name": name, "arguments": {}}))),
        prop::collection::btree_map("[a-z]{1,6}", scalar(), 0..4)
            .prop_map(|m| Some(Value::Object(m.into_iter().collect()))),
    ]
}

/// The id field: absent, a valid one (the caller makes it unique), or one
/// JSON-RPC cannot carry back.
#[derive(Debug, Clone)]
enum IdKind {
    Absent,
    Number,
    Text,
    Other(Value),
}

fn object() -> impl Strategy<Value = (Value, IdKind)> {
    (
        prop_oneof![Just(Some("2.0")), Just(Some("1.0")), Just(None)],
        prop_oneof![
            Just(IdKind::Absent),
            Just(IdKind::Number),
            Just(IdKind::Text),
            prop_oneof![
                Just(Value::Null),
                Just(json!(1.5)),
                Just(json!({})),
                Just(json!([]))
            ]
            .prop_map(IdKind::Other),
        ],
        prop_oneof![
            prop::sample::select(METHODS.to_vec()).prop_map(Value::from),
            scalar(),
        ],
        params(),
    )
        .prop_map(|(version, id, method, params)| {
            let mut m = Map::new();
            if let Some(v) = version {
                m.insert("jsonrpc".into(), v.into());
            }
            if let IdKind::Other(v) = &id {
                m.insert("id".into(), v.clone());
            }
            m.insert("method".into(), method);
            if let Some(p) = params {
                m.insert("params".into(), p);
            }
            (Value::Object(m), id)
        })
}

fn sent() -> impl Strategy<Value = (Sent, IdKind)> {
    prop_oneof![
        garbage().prop_map(|g| (Sent::Garbage(g), IdKind::Absent)),
        object().prop_map(|(o, id)| (Sent::Object(o), id)),
    ]
}

/// Gives the line its unique id, and says what it is owed, by JSON-RPC's
/// rules rather than the server's code: unparseable or not a request
/// object, an answer with a null id; a request, an answer with its id; a
/// notification, nothing.
fn prepare(sent: Sent, id: IdKind, n: u64) -> (Vec<u8>, Owed) {
    let mut o = match sent {
        Sent::Garbage(g) => return (g, Owed::Answer(Value::Null)),
        Sent::Object(o) => o,
    };
    let id = match id {
        IdKind::Number => Some(json!(n)),
        IdKind::Text => Some(json!(format!("s{n}"))),
        _ => None,
    };
    if let (Some(id), Some(m)) = (&id, o.as_object_mut()) {
        m.insert("id".into(), id.clone());
    }
    let valid = o["jsonrpc"] == "2.0" && o["method"].is_string();
    let owed = match (valid, o.get("id"), id) {
        (true, None, _) => Owed::Nothing,
        (true, Some(_), Some(id)) => Owed::Answer(id),
        _ => Owed::Answer(Value::Null),
    };
    (o.to_string().into_bytes(), owed)
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

#[test]
fn on_stdio_every_line_is_answered_once_and_the_server_survives() {
    let t = crate::mcp::project();
    let m = RefCell::new(Mcp::start(&t));
    let n = Cell::new(1000);
    let mut runner = TestRunner::new(config(48));
    runner
        .run(&prop::collection::vec(sent(), 1..6), |lines| {
            let mut m = m.borrow_mut();
            for (sent, id) in lines {
                n.set(n.get() + 2);
                let (line, owed) = prepare(sent, id, n.get());
                m.send_bytes(&line);
                // A ping after each line: what comes before its answer is
                // the line's, and nothing may come after.
                let probe = json!(format!("probe{}", n.get()));
                m.send_raw(&json!({"jsonrpc": "2.0", "id": probe, "method": "ping"}).to_string());
                let mut got = vec![];
                let mut probed = false;
                while !probed || got.len() < usize::from(owed != Owed::Nothing) {
                    let msg = m.read_message();
                    if msg["id"] == probe {
                        prop_assert!(msg["result"].is_object(), "ping: {msg}");
                        probed = true;
                    } else {
                        got.push(msg);
                    }
                    prop_assert!(
                        got.len() <= 1,
                        "two answers to {:?}: {got:?}",
                        String::from_utf8_lossy(&line)
                    );
                }
                match &owed {
                    Owed::Nothing => prop_assert!(got.is_empty()),
                    Owed::Answer(id) => {
                        prop_assert_eq!(
                            &got[0]["id"],
                            id,
                            "{:?}: {}",
                            String::from_utf8_lossy(&line),
                            got[0]
                        );
                        prop_assert!(got[0].as_object().is_some_and(|o| o.contains_key("id")));
                        if id.is_null() {
                            prop_assert!(got[0]["error"]["code"].is_i64(), "{}", got[0]);
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let r = m.borrow_mut().request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
}

#[test]
fn over_http_every_request_is_answered_once_and_the_server_survives() {
    let (_t, _serving, a) = served(&[]);
    let session = initialize(&a);
    let n = Cell::new(1000);
    let mut runner = TestRunner::new(config(64));
    runner
        .run(&sent(), |(sent, id)| {
            n.set(n.get() + 1);
            let (body, owed) = prepare(sent, id, n.get());
            let r = post(&a, Some(&session), &[], &body);
            let text = String::from_utf8_lossy(&body).into_owned();
            match owed {
                Owed::Nothing => {
                    prop_assert!(
                        r.status == 202 || r.status == 400,
                        "{text}: {} {}",
                        r.status,
                        r.text()
                    );
                }
                Owed::Answer(id) => {
                    let msgs = r.messages();
                    prop_assert_eq!(msgs.len(), 1, "{}: {} {}", text, r.status, r.text());
                    prop_assert_eq!(&msgs[0]["id"], &id, "{}: {}", text, msgs[0]);
                    if id.is_null() {
                        prop_assert_eq!(r.status, 400, "{}: {}", text, r.text());
                    } else {
                        prop_assert!(r.status == 200 || r.status == 400, "{text}: {}", r.status);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    let alive = ping(&a, &session);
    assert_eq!(alive.status, 200, "{}", alive.text());
}

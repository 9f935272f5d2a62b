//! What the transcript page shows of a session: turns of what was said,
//! thinking folded, and each tool call as a card (its key input as what it
//! is, its result folded under it). The library decides what a call's key
//! input is ([`card::key_input`]); this only shapes it for the template,
//! which escapes every field except the sanitized Markdown.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use logbook::model::agent_log::{SUMMARY_FLAG, Usage};
use logbook::model::transcript::Message;
use logbook::model::transcript::card::{self, KeyInput, LineKind};
use logbook::model::transcript::tools::{self, ToolCall, ToolResult};
use serde_json::{Map, Value};

/// A result's first lines shown when its card is unfolded; the rest waits
/// behind "show all".
const HEAD_LINES: usize = 12;
/// At most this many characters before "show all", however few the lines.
const HEAD_CHARS: usize = 2_000;
/// At most this many characters of one text on the page (a result, a
/// written file, a diff); the JSON API has the rest.
const MAX_CHARS: usize = 100_000;

/// Consecutive messages of one role, shown as one box.
pub(crate) struct Turn {
    /// `user`, `assistant`, `tool`…
    pub(crate) role: String,
    /// The model that answered, for an assistant turn that names it.
    pub(crate) model: String,
    /// The tokens its messages were charged with, as `transcript usage`
    /// counts them; `None` when none were measured.
    pub(crate) tokens: Option<Tokens>,
    /// What the turn holds, in order.
    pub(crate) items: Vec<Item>,
    /// The sum behind `tokens`.
    charged: Option<Usage>,
}

/// A turn's tokens, formatted. Codex's cached input is its cache read
/// (and is part of its input, as Codex counts it).
pub(crate) struct Tokens {
    /// Prompt tokens.
    pub(crate) input: String,
    /// Completion tokens.
    pub(crate) output: String,
    /// Prompt tokens written to the cache.
    pub(crate) cache_write: String,
    /// Prompt tokens read from the cache.
    pub(crate) cache_read: String,
    /// Everything counted.
    pub(crate) total: String,
}

impl Tokens {
    fn of(u: &Usage) -> Tokens {
        let n = crate::view::thousands;
        Tokens {
            input: n(u.input_tokens),
            output: n(u.output_tokens),
            cache_write: n(u.cache_creation_input_tokens),
            cache_read: n(u.cache_read_input_tokens + u.cached_input_tokens),
            total: n(u.total_tokens),
        }
    }
}

/// What the library found beside the messages, for [`page_turns`].
#[derive(Default)]
pub(crate) struct Extras {
    /// The tokens each message is charged with, by index
    /// (`ops::transcript::links::charged_in`).
    pub(crate) charged: Vec<Option<Usage>>,
    /// The subagents of Task calls, by `agentId`: their transcript id, or
    /// `None` when it is not in the store (`links::subagents`).
    pub(crate) subagents: BTreeMap<String, Option<String>>,
}

/// The subagent a Task call ran.
pub(crate) struct Subagent {
    /// Its type (`subagent_type`), or empty.
    pub(crate) kind: String,
    /// What it was asked to do, in short (`description`), or empty.
    pub(crate) description: String,
    /// Its transcript's page; empty when the store does not have it.
    pub(crate) href: String,
}

/// One thing said or done in a turn.
pub(crate) enum Item {
    /// Plain text (a user's prompt), escaped by the template.
    Text(String),
    /// Assistant Markdown, already sanitized HTML.
    Markdown(String),
    /// The model's thinking, folded.
    Thinking(String),
    /// A tool call and its result.
    Tool(Box<Card>),
    /// A marker (a compaction, a subagent), with its text folded.
    Note {
        /// What it is.
        label: String,
        /// Its text, if any.
        text: String,
        /// A page it links to, if any.
        href: String,
    },
    /// Where message N of the whole transcript begins: `id="mN"`, the
    /// target of `?at=N#mN` links (find, jump to an error).
    Anchor(String),
    /// A block the viewer does not know, as coloured JSON, folded.
    Other {
        /// Its `type`.
        label: String,
        /// The JSON as HTML (built from escaped text by `json_html`).
        json: String,
    },
}

/// A tool call as a card.
pub(crate) struct Card {
    /// The tool's name; empty for a result whose call is not in the
    /// transcript.
    pub(crate) name: String,
    /// Its key input.
    pub(crate) input: Input,
    /// Its result; `None` while it is pending.
    pub(crate) result: Option<Output>,
    /// For a Task call, the subagent it ran.
    pub(crate) subagent: Option<Subagent>,
}

/// A card's key input, laid out by the template.
pub(crate) enum Input {
    /// A command line, in a code block.
    Command {
        /// The command.
        command: String,
        /// The folder it ran in, or empty.
        workdir: String,
        /// What it is for, as the agent said, or empty.
        description: String,
    },
    /// A path, with a note (the lines read).
    Path {
        /// The file.
        path: String,
        /// A note after it, or empty.
        note: String,
    },
    /// A file written whole: its path, and its content folded.
    Write {
        /// The file.
        path: String,
        /// What was written (cut at [`MAX_CHARS`]).
        content: String,
        /// Its line count.
        lines: usize,
    },
    /// A diff or a patch: the files, and its lines with their classes.
    Diff {
        /// The files, joined.
        path: String,
        /// The lines.
        lines: Vec<Line>,
    },
    /// A search pattern and where it looked.
    Pattern {
        /// The pattern.
        pattern: String,
        /// The folder or glob, or empty.
        within: String,
    },
    /// Arguments as coloured JSON (HTML from `json_html`), folded.
    Arguments(String),
    /// Nothing known: a result whose call is not in the transcript.
    Unknown,
}

/// One diff line and its CSS class.
pub(crate) struct Line {
    /// `d-add`, `d-del`, `d-hunk`, `d-file` or `d-ctx`.
    pub(crate) class: &'static str,
    /// The line, its sign first.
    pub(crate) text: String,
}

/// A tool's result, folded under its card.
pub(crate) struct Output {
    /// The status chip: `error`, `exit 2`, `exit 0`, `ok`.
    pub(crate) chip: String,
    /// Whether the tool failed.
    pub(crate) error: bool,
    /// How many lines it has.
    pub(crate) lines: usize,
    /// The first lines.
    pub(crate) head: String,
    /// The rest, behind "show all"; empty when the head is all.
    pub(crate) rest: String,
    /// How many lines the rest has.
    pub(crate) rest_lines: usize,
    /// Whether the text was cut at [`MAX_CHARS`].
    pub(crate) capped: bool,
    /// `mN` when this result is all message N shows (its anchor), or empty.
    pub(crate) anchor: String,
}

/// The turns of the first `shown` messages, without the anchors a page
/// puts in ([`page_turns`]): what tests of the layout compare. Tool results
/// are shown under their calls, so a message of results only adds no box.
#[cfg(test)]
pub(crate) fn turns(messages: &[Message], shown: usize) -> Vec<Turn> {
    let mut out = page_turns(messages, 0, 0..shown, &Extras::default());
    for t in &mut out {
        t.items.retain(|i| !matches!(i, Item::Anchor(_)));
    }
    out.retain(|t| !t.items.is_empty() || t.tokens.is_some());
    out
}

/// The turns of `messages[shown]`, one page of a transcript whose message
/// `first` is `messages[0]`, each with the tokens its messages were charged
/// with and Task cards linked to their subagents, as `extras` (indexed like
/// `messages`) says. The messages around `shown` (read before and after the
/// page) only pair calls and results across its edges: a call near the
/// page's end shows its result from the next page's messages, and a result
/// whose call is on the previous page is shown as that call's card. Each
/// shown message's first item is an anchor `m{N}` (N its index in the whole
/// transcript); a message of results only has it on the first of its
/// results, under its call's card.
pub(crate) fn page_turns(
    messages: &[Message],
    first: usize,
    shown: Range<usize>,
    extras: &Extras,
) -> Vec<Turn> {
    let end = shown.end.min(messages.len());
    let start = shown.start.min(end);
    let on_page = start..end;
    let pairing = tools::pair(messages);
    // Calls made on the page, and the results they answer.
    let mut calls: HashMap<(usize, usize), ToolCall> = HashMap::new();
    let mut answered: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    // Results on the page whose call came before it.
    let mut earlier: HashMap<(usize, usize), ToolCall> = HashMap::new();
    for c in pairing.calls {
        let result = c.result.as_ref().map(|r| (r.message, r.block));
        if c.message < start {
            if let Some(r) = result.filter(|r| on_page.contains(&r.0)) {
                earlier.insert(r, c);
            }
        } else if c.message < end {
            if let Some(r) = result {
                answered.insert(r, (c.message, c.block));
            }
            calls.insert((c.message, c.block), c);
        }
    }
    let orphans: HashMap<(usize, usize), ToolResult> = pairing
        .orphans
        .into_iter()
        .filter(|r| on_page.contains(&r.message))
        .map(|r| ((r.message, r.block), r))
        .collect();
    let card = |call: &ToolCall| {
        let mut card = card_of(call);
        card.subagent = subagent_of(call, messages, extras);
        Item::Tool(Box::new(card))
    };
    // Each message's items, and where each call's card went.
    let mut per: Vec<(usize, Vec<Item>)> = vec![];
    let mut card_at: HashMap<(usize, usize), (usize, usize)> = HashMap::new();
    let mut results_only: Vec<(usize, (usize, usize))> = vec![];
    for at in on_page.clone() {
        let Some(m) = messages.get(at) else { break };
        let mut items = vec![Item::Anchor(format!("m{}", first.saturating_add(at)))];
        let mut first_result = None;
        for (bi, b) in m.blocks.iter().enumerate() {
            let key = (at, bi);
            if let Some(call) = calls.remove(&key) {
                card_at.insert(key, (per.len(), items.len()));
                items.push(card(&call));
            } else if let Some(call) = earlier.remove(&key) {
                items.push(card(&call));
            } else if let Some(r) = orphans.get(&key) {
                items.push(Item::Tool(Box::new(Card {
                    name: String::new(),
                    input: Input::Unknown,
                    result: Some(output_of(r)),
                    subagent: None,
                })));
            } else if let Some(call) = answered.get(&key) {
                first_result.get_or_insert(*call);
            } else if b.get(SUMMARY_FLAG).and_then(Value::as_bool) == Some(true) {
                // The summary after a compaction goes under its boundary's
                // marker, when that is the last thing shown before it.
                let text = capped(&text_in(b.as_object().unwrap_or(&Map::new()))).0;
                let shown = |i: &&mut Item| !matches!(i, Item::Anchor(_));
                let last = match items.iter_mut().rev().find(shown) {
                    Some(i) => Some(i),
                    None => per
                        .last_mut()
                        .and_then(|(_, items)| items.iter_mut().rev().find(shown)),
                };
                match last {
                    Some(Item::Note {
                        label, text: said, ..
                    }) if label == "compaction" => {
                        *said = text;
                    }
                    _ => items.push(Item::Note {
                        label: "compaction".into(),
                        text,
                        href: String::new(),
                    }),
                }
            } else {
                items.extend(item_of(&m.role, b));
            }
        }
        if items.len() == 1
            && let Some(call) = first_result
        {
            items.clear();
            results_only.push((per.len(), call));
        }
        per.push((at, items));
    }
    // A message of results only: its anchor goes on its first result.
    for (i, call) in results_only {
        let Some(at) = per.get(i).map(|(at, _)| *at) else {
            continue;
        };
        if let Some((pi, ii)) = card_at.get(&call)
            && let Some((_, items)) = per.get_mut(*pi)
            && let Some(Item::Tool(card)) = items.get_mut(*ii)
            && let Some(r) = &mut card.result
        {
            r.anchor = format!("m{}", first.saturating_add(at));
        }
    }
    let mut out: Vec<Turn> = vec![];
    // Anchors of messages that show nothing, waiting for a box to go in.
    let mut pending: Vec<Item> = vec![];
    for (at, items) in per {
        let Some(m) = messages.get(at) else { break };
        let charged = extras.charged.get(at).copied().flatten();
        // A message with nothing to show still shows what it was charged
        // with, so that the turns add up to the transcript's usage.
        if charged.is_none() && items.iter().all(|i| matches!(i, Item::Anchor(_))) {
            match out.last_mut() {
                Some(t) => t.items.extend(items),
                None => pending.extend(items),
            }
            continue;
        }
        let items: Vec<Item> = pending.drain(..).chain(items).collect();
        let model = m
            .metadata
            .as_ref()
            .and_then(|v| v.get("model"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match out.last_mut() {
            Some(t) if t.role == m.role => {
                if t.model.is_empty() {
                    t.model = model.to_string();
                }
                t.items.extend(items);
                if let Some(u) = charged {
                    *t.charged.get_or_insert_with(Usage::default) += u;
                }
            }
            _ => out.push(Turn {
                role: m.role.clone(),
                model: model.to_string(),
                tokens: None,
                items,
                charged,
            }),
        }
    }
    if !pending.is_empty() {
        // A page of empty messages still has its anchors.
        out.push(Turn {
            role: String::new(),
            model: String::new(),
            tokens: None,
            items: pending,
            charged: None,
        });
    }
    for t in &mut out {
        t.tokens = t.charged.as_ref().map(Tokens::of);
    }
    out
}

/// The subagent a Task call ran, linked when its transcript is stored.
fn subagent_of(call: &ToolCall, all: &[Message], extras: &Extras) -> Option<Subagent> {
    if !call.is_subagent() {
        return None;
    }
    let href = call
        .subagent_agent_id(all)
        .and_then(|agent| extras.subagents.get(&agent).cloned().flatten())
        .and_then(|id| crate::api::transcript_id(&id).ok())
        .map(|id| format!("/transcripts/{id}"))
        .unwrap_or_default();
    Some(Subagent {
        kind: call.param("subagent_type").unwrap_or_default().to_string(),
        description: call.param("description").unwrap_or_default().to_string(),
        href,
    })
}

/// A block that is not a tool call or a paired result.
fn item_of(role: &str, b: &Value) -> Option<Item> {
    let o = match b {
        Value::String(s) if s.trim().is_empty() => return None,
        Value::String(s) => return Some(said(role, s)),
        Value::Object(o) => o,
        other => {
            return Some(Item::Other {
                label: "block".into(),
                json: crate::view::json_html(&other.to_string()),
            });
        }
    };
    let text = text_in(o);
    let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
    match ty {
        "text" => (!text.trim().is_empty()).then(|| said(role, &text)),
        "thinking" | "reasoning" => {
            (!text.trim().is_empty()).then(|| Item::Thinking(capped(&text).0))
        }
        "compress" | "compaction" | "summary" => Some(Item::Note {
            label: "compaction".into(),
            text: capped(&text).0,
            href: String::new(),
        }),
        "subagent" => {
            let field = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default();
            let id = field("subagentId");
            let name = match field("subagentName") {
                "" => id,
                n => n,
            };
            let status = field("status");
            Some(Item::Note {
                label: "subagent".into(),
                text: if status.is_empty() {
                    name.to_string()
                } else {
                    format!("{name} · {status}")
                },
                href: crate::api::transcript_id(id)
                    .map(|id| format!("/transcripts/{id}"))
                    .unwrap_or_default(),
            })
        }
        "image" => Some(Item::Note {
            label: "image".into(),
            text: "(not shown)".into(),
            href: String::new(),
        }),
        _ if !text.is_empty() && o.len() <= 2 => Some(said(role, &text)),
        _ => Some(Item::Other {
            label: if ty.is_empty() { "block" } else { ty }.to_string(),
            json: crate::view::json_html(&capped(&b.to_string()).0),
        }),
    }
}

/// A block's text: its `content`, `text` or `thinking` string.
fn text_in(o: &Map<String, Value>) -> String {
    ["content", "text", "thinking"]
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_str))
        .unwrap_or_default()
        .to_string()
}

/// What a role said: an assistant's Markdown rendered, anyone else's text
/// as written.
fn said(role: &str, text: &str) -> Item {
    let (text, _) = capped(text);
    if role == "assistant" {
        Item::Markdown(crate::view::markdown_loose(&text))
    } else {
        Item::Text(text)
    }
}

fn card_of(call: &ToolCall) -> Card {
    let lines = |ls: Vec<card::DiffLine>| {
        let all = ls.len();
        let mut budget = MAX_CHARS;
        let mut out: Vec<Line> = ls
            .into_iter()
            .take_while(|l| {
                budget = budget.saturating_sub(l.text.len() + 1);
                budget > 0
            })
            .map(|l| Line {
                class: match l.kind {
                    LineKind::Added => "d-add",
                    LineKind::Removed => "d-del",
                    LineKind::Hunk => "d-hunk",
                    LineKind::File => "d-file",
                    LineKind::Context => "d-ctx",
                },
                text: l.text,
            })
            .collect();
        if out.len() < all {
            out.push(Line {
                class: "d-file",
                text: format!(
                    "… {} more lines; the JSON API has the whole diff",
                    all - out.len()
                ),
            });
        }
        out
    };
    let input = match card::key_input(call) {
        KeyInput::Command {
            command,
            workdir,
            description,
        } => Input::Command {
            command: capped(&command).0,
            workdir: workdir.unwrap_or_default(),
            description: description.unwrap_or_default(),
        },
        KeyInput::Read { path, range } => Input::Path {
            path,
            note: range.unwrap_or_default(),
        },
        KeyInput::Write { path, content } => Input::Write {
            path,
            lines: content.lines().count(),
            content: capped(&content).0,
        },
        KeyInput::Diff { path, lines: ls } => Input::Diff {
            path,
            lines: lines(ls),
        },
        KeyInput::Patch { paths, lines: ls } => Input::Diff {
            path: paths.join(", "),
            lines: lines(ls),
        },
        KeyInput::Pattern { pattern, within } => Input::Pattern {
            pattern,
            within: within.unwrap_or_default(),
        },
        KeyInput::Arguments { text } => Input::Arguments(crate::view::json_html(&capped(&text).0)),
    };
    Card {
        name: call.name.clone(),
        input,
        result: call.result.as_ref().map(output_of),
        subagent: None,
    }
}

fn output_of(r: &ToolResult) -> Output {
    let chip = match (r.exit_code, r.is_error) {
        (Some(c), _) => format!("exit {c}"),
        (None, true) => "error".into(),
        (None, false) => "ok".into(),
    };
    let (text, capped) = capped(&r.text);
    let lines = text.lines().count();
    // The head is the first HEAD_LINES lines, cut sooner (at a line break
    // if there is one) when they run past HEAD_CHARS.
    let mut end = text
        .match_indices('\n')
        .nth(HEAD_LINES - 1)
        .map_or(text.len(), |(i, _)| i + 1);
    if end > HEAD_CHARS {
        let at = (0..=HEAD_CHARS)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        end = text[..at].rfind('\n').map_or(at, |i| i + 1);
    }
    let (head, rest) = text.split_at(end);
    Output {
        chip,
        error: r.is_error,
        lines,
        rest_lines: rest.lines().count(),
        head: head.to_string(),
        rest: rest.to_string(),
        capped,
        anchor: String::new(),
    }
}

/// `text` cut at [`MAX_CHARS`] characters, and whether it was.
fn capped(text: &str) -> (String, bool) {
    match text.char_indices().nth(MAX_CHARS) {
        Some((i, _)) => (format!("{}…", &text[..i]), true),
        None => (text.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(v: Value) -> Vec<Message> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn results_go_under_their_calls_and_messages_of_results_vanish() {
        let m = msgs(json!([
            {"role": "user", "blocks": [{"type": "text", "content": "fix it"}]},
            {"role": "assistant", "metadata": {"model": "m1"}, "blocks": [
                {"type": "thinking", "content": "hmm"},
                {"type": "tool", "id": "a", "name": "Bash", "parameters": "{\"command\":\"make\"}"}]},
            {"role": "user", "blocks": [{"type": "tool_result", "toolUseId": "a", "result": "bad", "isError": true}]},
            {"role": "assistant", "blocks": [{"type": "text", "content": "**done**"}]},
            {"role": "user", "blocks": [{"type": "tool_result", "toolUseId": "zz", "result": "stray"}]}
        ]));
        let t = turns(&m, 100);
        assert_eq!(
            t.iter().map(|t| t.role.as_str()).collect::<Vec<_>>(),
            ["user", "assistant", "user"]
        );
        assert_eq!(t[1].model, "m1");
        assert_eq!(t[1].items.len(), 3);
        let Item::Tool(c) = &t[1].items[1] else {
            panic!("no card")
        };
        assert!(matches!(&c.input, Input::Command { command, .. } if command == "make"));
        let r = c.result.as_ref().unwrap();
        assert!(r.error && r.chip == "error" && r.head == "bad");
        assert!(matches!(&t[1].items[2], Item::Markdown(h) if h.contains("<strong>done</strong>")));
        let Item::Tool(orphan) = &t[2].items[0] else {
            panic!("orphan lost")
        };
        assert!(orphan.name.is_empty() && orphan.result.is_some());
    }

    #[test]
    fn a_page_pairs_across_its_edges_and_anchors_every_message() {
        let call = |id: &str, cmd: &str| {
            json!({"role": "assistant", "blocks": [{"type": "tool", "id": id, "name": "Bash",
                "parameters": json!({"command": cmd}).to_string()}]})
        };
        let result = |id: &str, out: &str| json!({"role": "user", "blocks": [{"type": "tool_result", "toolUseId": id, "result": out}]});
        // Messages 10..16 read; the page is 12..14 (slice 2..4).
        let m = msgs(json!([
            {"role": "user", "blocks": ["before the page"]},
            call("early", "ls"),
            result("early", "a.txt"),
            call("late", "make"),
            result("late", "built"),
            {"role": "assistant", "blocks": ["after the page"]}
        ]));
        let t = page_turns(&m, 10, 2..4, &Extras::default());
        let anchors: Vec<&str> = t
            .iter()
            .flat_map(|t| &t.items)
            .filter_map(|i| match i {
                Item::Anchor(a) => Some(a.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(anchors, ["m12", "m13"]);
        let cards: Vec<&Card> = t
            .iter()
            .flat_map(|t| &t.items)
            .filter_map(|i| match i {
                Item::Tool(c) => Some(&**c),
                _ => None,
            })
            .collect();
        // The result whose call is on the previous page shows the call;
        // the call at the page's end shows its result from the next page.
        assert_eq!(cards.len(), 2);
        assert!(matches!(&cards[0].input, Input::Command { command, .. } if command == "ls"));
        assert_eq!(
            cards[0].result.as_ref().map(|r| r.head.as_str()),
            Some("a.txt")
        );
        assert!(matches!(&cards[1].input, Input::Command { command, .. } if command == "make"));
        assert_eq!(
            cards[1].result.as_ref().map(|r| r.head.as_str()),
            Some("built")
        );
        // Nothing of the messages around the page is shown.
        let page = page_turns(&m, 10, 3..5, &Extras::default());
        let items: Vec<&Item> = page.iter().flat_map(|t| &t.items).collect();
        assert!(matches!(items[0], Item::Anchor(a) if a == "m13"));
        // A message of results only: its anchor is on its result.
        let Item::Tool(c) = items[1] else {
            panic!("no card")
        };
        assert_eq!(c.result.as_ref().map(|r| r.anchor.as_str()), Some("m14"));
        assert_eq!(items.len(), 2);
        // A page of empty messages keeps its anchors.
        let empty =
            msgs(json!([{"role": "user", "blocks": []}, {"role": "user", "blocks": [" "]}]));
        let t = page_turns(&empty, 0, 0..2, &Extras::default());
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].items.len(), 2);
    }

    #[test]
    fn odd_blocks_are_shown_not_dropped_and_never_panic() {
        let m = msgs(json!([
            {"role": "assistant", "blocks": [
                "bare text", 7, null, {"type": 3}, {"no": "type"},
                {"type": "tool"}, {"type": "tool", "name": "Edit", "parameters": "not json"},
                {"type": "tool_result"}, {"type": "image", "source": {"data": "AAAA"}},
                {"type": "subagent", "subagentId": "../../etc", "subagentName": "<b>x</b>"},
                {"type": "compress", "content": "summary"}]},
            {"role": "assistant", "blocks": []}
        ]));
        let t = turns(&m, 100);
        assert_eq!(t.len(), 1);
        // The bare text, 7, null, the two odd objects, two calls, the
        // orphan result, the image, the subagent and the compaction.
        assert_eq!(t[0].items.len(), 11);
        assert!(t[0].items.iter().any(|i| matches!(i,
            Item::Note { href, .. } if href.is_empty())));
        let huge = "x\n".repeat(MAX_CHARS);
        let m = msgs(
            json!([{"role": "assistant", "blocks": [{"type": "tool", "name": "Edit",
            "parameters": json!({"file_path": "a", "old_string": "", "new_string": huge}).to_string()}]}]),
        );
        let Item::Tool(c) = &turns(&m, 1)[0].items[0] else {
            panic!("no card")
        };
        let Input::Diff { lines, .. } = &c.input else {
            panic!("no diff")
        };
        assert!(lines.len() < MAX_CHARS / 2 + 2);
        assert!(lines.last().is_some_and(|l| l.text.contains("more lines")));
    }

    #[test]
    fn turns_add_up_their_messages_tokens_and_a_summary_joins_its_marker() {
        let m = msgs(json!([
            {"role": "user", "blocks": [{"type": "text", "content": "go"}]},
            {"role": "assistant", "blocks": [{"type": "text", "content": "a"}]},
            {"role": "assistant", "blocks": []},
            {"role": "system", "blocks": [{"type": "compress", "content": "Conversation compacted"}]},
            {"role": "system", "blocks": [{"type": "compress", "content": "the <b>summary</b>", "compactSummary": true}]},
            {"role": "assistant", "blocks": [{"type": "text", "content": "b"}]}
        ]));
        let u = |i, o| Usage {
            input_tokens: i,
            output_tokens: o,
            total_tokens: i + o,
            ..Usage::default()
        };
        let extras = Extras {
            charged: vec![
                None,
                Some(u(10, 1)),
                Some(u(0, 4)),
                None,
                None,
                Some(u(7, 2)),
            ],
            subagents: BTreeMap::new(),
        };
        let mut t = page_turns(&m, 0, 0..100, &extras);
        for turn in &mut t {
            turn.items.retain(|i| !matches!(i, Item::Anchor(_)));
        }
        let roles: Vec<&str> = t.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "system", "assistant"]);
        // The empty message's tokens stay with its turn.
        let k = t[1].tokens.as_ref().unwrap();
        assert_eq!(
            (k.input.as_str(), k.output.as_str(), k.total.as_str()),
            ("10", "5", "15")
        );
        assert!(t[0].tokens.is_none() && t[2].tokens.is_none());
        assert_eq!(t[3].tokens.as_ref().unwrap().total, "9");
        // One marker, holding the summary.
        assert_eq!(t[2].items.len(), 1);
        assert!(matches!(&t[2].items[0],
            Item::Note { label, text, .. } if label == "compaction" && text == "the <b>summary</b>"));
    }

    #[test]
    fn long_output_is_cut_at_a_line_and_kept_whole_behind_show_all() {
        let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let o = output_of(&ToolResult {
            tool_use_id: None,
            text: text.clone(),
            is_error: false,
            exit_code: Some(0),
            message: 0,
            block: 0,
        });
        assert_eq!(o.chip, "exit 0");
        assert_eq!(o.head.lines().count(), HEAD_LINES);
        assert_eq!(format!("{}{}", o.head, o.rest), text);
        assert_eq!(o.rest_lines, 40 - HEAD_LINES);
        let long = "é".repeat(HEAD_CHARS * 2);
        let o = output_of(&ToolResult {
            tool_use_id: None,
            text: long.clone(),
            is_error: false,
            exit_code: None,
            message: 0,
            block: 0,
        });
        assert!(o.head.len() <= HEAD_CHARS + 2 && !o.rest.is_empty());
        assert_eq!(format!("{}{}", o.head, o.rest), long);
    }
}

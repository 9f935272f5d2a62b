//! A session as one file to share (`logbook transcript export ID --html |
//! --markdown`): the viewer's rendering of every page of a transcript in
//! one self-contained HTML page (the stylesheet inline, no script, a
//! Content-Security-Policy that loads nothing, links and images inert),
//! or Markdown. What is written is redacted unless the caller says not to
//! ([`logbook::ops::share`]), and streamed page by page.
//!
//! ```no_run
//! let p = logbook::Logbook::open(std::path::Path::new("."))?;
//! let mut out = std::io::stdout().lock();
//! logbook_web::share::write(&p, "5e0c7a1b", logbook_web::share::Format::Html, true, &mut out)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;

use askama::Template;
use logbook::model::transcript::Message;
use logbook::model::transcript::tools;
use logbook::ops::share::{self, Head, Page};
use serde_json::Value;

use crate::view::transcript::{Extras, Input, Item, Turn, page_turns};
use crate::view::{thousands, when};

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One self-contained HTML page.
    Html,
    /// Markdown, for a pull request or an issue.
    Markdown,
}

/// Why a share failed: the library's error, or the output's.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// Finding or reading the transcript.
    #[error(transparent)]
    Logbook(#[from] logbook::Error),
    /// Writing the page.
    #[error("cannot write the page: {0}")]
    Write(#[from] std::io::Error),
}

/// The page's policy: nothing is loaded, nothing runs, nothing is sent.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'; base-uri 'none'";

#[derive(Template)]
#[template(path = "share_head.html")]
struct SharedHead<'a> {
    policy: &'a str,
    css: &'a str,
    id: String,
    title: String,
    kind: String,
    workdir: String,
    started: String,
    active: String,
    total: String,
    redacted: bool,
}

#[derive(Template)]
#[template(path = "share_turns.html")]
struct SharedTurns {
    turns: Vec<Turn>,
    inert: bool,
}

const TAIL: &str = "</main>\n<footer>Exported by Logbook · links and images in this page are inert</footer>\n</body>\n</html>\n";

fn io(e: std::io::Error) -> logbook::Error {
    logbook::Error::io(std::path::Path::new("(output)"), e)
}

/// [`write`] to the file at `path`, replaced only once the page is whole.
pub fn write_to(
    p: &logbook::Logbook,
    id: &str,
    format: Format,
    redact: bool,
    path: &std::path::Path,
) -> Result<(), ShareError> {
    share::write_file(path, |out| match write(p, id, format, redact, out) {
        Ok(()) => Ok(()),
        Err(ShareError::Logbook(e)) => Err(e),
        Err(ShareError::Write(e)) => Err(logbook::Error::io(path, e)),
    })?;
    Ok(())
}

/// Writes transcript `id` to `out` as `format`, redacted when `redact`.
pub fn write(
    p: &logbook::Logbook,
    id: &str,
    format: Format,
    redact: bool,
    out: &mut dyn Write,
) -> Result<(), ShareError> {
    let out = std::cell::RefCell::new(std::io::BufWriter::with_capacity(1 << 16, out));
    let put = |text: &str| out.borrow_mut().write_all(text.as_bytes()).map_err(io);
    let mut any = false;
    share::each_page(
        p,
        id,
        redact,
        &mut |h| match format {
            Format::Html => put(&shared_head(h, redact).render().map_err(render_error)?),
            Format::Markdown => put(&markdown_head(h, redact)),
        },
        &mut |page| {
            any = true;
            match format {
                Format::Html => put(&html_page(page).map_err(render_error)?),
                Format::Markdown => put(&markdown_page(page)),
            }
        },
    )?;
    match format {
        Format::Html => {
            if !any {
                put("<div class=\"panel empty\">No messages.</div>\n")?;
            }
            put(TAIL)?;
        }
        Format::Markdown => {}
    }
    out.into_inner().flush()?;
    Ok(())
}

fn render_error(e: askama::Error) -> logbook::Error {
    io(std::io::Error::other(e))
}

fn shared_head(h: &Head, redact: bool) -> SharedHead<'static> {
    let t = &h.transcript;
    let title = logbook::model::transcript::title(&t.metadata, None);
    SharedHead {
        policy: POLICY,
        css: include_str!("../assets/style.css"),
        id: t.id.clone(),
        title: if redact {
            logbook::model::secrets::redact(&title).into_owned()
        } else {
            title
        },
        kind: h.kind.as_str().to_string(),
        workdir: t.metadata.workdir.clone(),
        started: when(&t.metadata.started_at),
        active: when(&t.metadata.last_active_at),
        total: thousands(h.total as u64),
        redacted: redact,
    }
}

/// One page's turns as the viewer draws them, with nothing that loads or
/// leads anywhere: Markdown's links become text and its images go.
fn html_page(page: &Page<'_>) -> Result<String, askama::Error> {
    let extras = Extras {
        charged: page.charged.clone(),
        subagents: Default::default(),
    };
    let mut turns = page_turns(page.messages, page.first, page.shown.clone(), &extras);
    for t in &mut turns {
        for i in &mut t.items {
            if let Item::Markdown(html) = i {
                *html = inert(html);
            }
        }
    }
    SharedTurns { turns, inert: true }.render()
}

/// Sanitized HTML without links or images: an `<a>` keeps its text, an
/// `<img>` goes.
fn inert(html: &str) -> String {
    ammonia::Builder::default()
        .rm_tags(&["img", "a"])
        .clean(html)
        .to_string()
}

fn markdown_head(h: &Head, redact: bool) -> String {
    let t = &h.transcript;
    let title = logbook::model::transcript::title(&t.metadata, None);
    let title = if title.is_empty() {
        t.id.clone()
    } else {
        title
    };
    let title = if redact {
        logbook::model::secrets::redact(&title).into_owned()
    } else {
        title
    };
    format!(
        "# {}\n\n{} session `{}` · {} · started {} · last active {} · {} messages{}\n\n",
        md_text(&title),
        h.kind.as_str(),
        t.id,
        md_text(&t.metadata.workdir),
        t.metadata.started_at,
        t.metadata.last_active_at,
        thousands(h.total as u64),
        if redact { " · secrets redacted" } else { "" }
    )
}

/// Text from a session as Markdown that shows it and does nothing: no
/// HTML, no image, no link (`![`, `](`, `<` are escaped).
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = '\0';
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '[' | ']' | '(' | ')' | '`' | '*' | '_' | '#' | '|' | '\\' | '!' => {
                out.push('\\');
                out.push(c);
            }
            ':' if prev.is_ascii_alphanumeric() => out.push_str("&#58;"),
            _ => out.push(c),
        }
        prev = c;
    }
    out
}

/// A fenced block that `text` cannot close early.
fn fenced(info: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat((longest + 1).max(3));
    format!(
        "{fence}{info}\n{}\n{fence}\n\n",
        text.trim_end_matches('\n')
    )
}

fn markdown_page(page: &Page<'_>) -> String {
    let mut out = String::new();
    let pairing = tools::pair(page.messages);
    let result_of = |at: usize, block: usize| {
        pairing
            .calls
            .iter()
            .find(|c| c.message == at && c.block == block)
            .and_then(|c| c.result.as_ref())
            .map(|r| (r.message, r.block))
    };
    // Results shown under their calls are not shown again.
    let mut shown_results = std::collections::BTreeSet::new();
    for c in &pairing.calls {
        if let Some(r) = &c.result {
            shown_results.insert((r.message, r.block));
        }
    }
    for at in page.shown.clone() {
        let Some(m) = page.messages.get(at) else {
            break;
        };
        let mut body = String::new();
        for (bi, b) in m.blocks.iter().enumerate() {
            if shown_results.contains(&(at, bi)) {
                continue;
            }
            body.push_str(&markdown_block(
                m,
                b,
                result_of(at, bi)
                    .and_then(|(rm, rb)| page.messages.get(rm).and_then(|m| m.blocks.get(rb))),
            ));
        }
        if body.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "### {} · message {}\n\n{body}",
            md_text(&m.role),
            page.first + at + 1
        ));
    }
    out
}

fn text_of(b: &Value) -> Option<String> {
    match b {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(text_of).collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        Value::Object(o) => ["text", "content", "output", "thinking"]
            .iter()
            .find_map(|k| o.get(*k).and_then(text_of)),
        _ => None,
    }
}

fn markdown_block(_m: &Message, b: &Value, result: Option<&Value>) -> String {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "text" | "input_text" | "output_text" => text_of(b)
            .map(|t| format!("{}\n\n", md_text(&t)))
            .unwrap_or_default(),
        "thinking" | "reasoning" => text_of(b)
            .map(|t| {
                format!(
                    "<details><summary>thinking</summary>\n\n{}</details>\n\n",
                    fenced("", &t)
                )
            })
            .unwrap_or_default(),
        "tool_use" | "function_call" | "tool" | "custom_tool_call" => {
            let name = b.get("name").and_then(Value::as_str).unwrap_or("tool");
            let input = ["input", "arguments", "parameters"]
                .iter()
                .find_map(|k| b.get(*k))
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    v => serde_json::to_string_pretty(v).unwrap_or_default(),
                })
                .unwrap_or_default();
            let mut s = format!("**{}**\n\n{}", md_text(name), fenced("json", &input));
            let out = result
                .and_then(text_of)
                .or_else(|| b.get("result").and_then(text_of));
            if let Some(out) = out {
                s.push_str(&format!(
                    "<details><summary>result</summary>\n\n{}</details>\n\n",
                    fenced("", &out)
                ));
            }
            s
        }
        "tool_result" | "function_call_output" => text_of(b)
            .map(|t| {
                format!(
                    "<details><summary>result</summary>\n\n{}</details>\n\n",
                    fenced("", &t)
                )
            })
            .unwrap_or_default(),
        _ => text_of(b)
            .map(|t| format!("{}\n\n", md_text(&t)))
            .unwrap_or_default(),
    }
}

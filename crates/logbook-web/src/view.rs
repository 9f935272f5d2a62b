//! What the pages show, computed in Rust so the templates only lay it out:
//! status badges, highlighted snippets, Markdown made safe, JSON coloured,
//! the lineage graph and the token bar as inline SVG. Everything that
//! reaches a template unescaped (`|safe`) is built here from escaped text.

use std::collections::HashMap;
use std::fmt::Write as _;

use logbook::model::lineage::{Lineage, LineageNode};

pub(crate) mod transcript;
pub(crate) mod usage;

/// Escapes text for HTML element content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// What a URL part keeps as it is: RFC 3986's unreserved characters.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes a query value or a path part.
pub(crate) fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()
}

/// Percent-encodes a relative file path, keeping its `/` separators.
pub(crate) fn enc_path(path: &str) -> String {
    path.split('/').map(enc).collect::<Vec<_>>().join("/")
}

/// The CSS class of a run status badge.
pub(crate) fn status_class(status: &str) -> &'static str {
    match status {
        "running" => "s-running",
        "completed" => "s-completed",
        "failed" => "s-failed",
        "cancelled" => "s-cancelled",
        _ => "s-other",
    }
}

/// A search snippet (hits in `[…]`) as HTML with the hits in `<mark>`.
pub(crate) fn snippet_html(snippet: &str) -> String {
    let mut out = String::new();
    let mut rest = snippet;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        out.push_str(&esc(&rest[..open]));
        let _ = write!(out, "<mark>{}</mark>", esc(&rest[open + 1..open + close]));
        rest = &rest[open + close + 1..];
    }
    out.push_str(&esc(rest));
    out
}

pub(crate) use logbook::model::naming::thousands;

/// A byte count for people.
pub(crate) fn size(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0)),
    }
}

/// A stored timestamp in local time, or as stored when it is not one.
pub(crate) fn when(stored: &str) -> String {
    if stored.is_empty() {
        String::new()
    } else {
        logbook::clock::display(stored)
    }
}

/// Joins a relative link found in a Markdown file at `dir` (the file's
/// folder inside the run) into a run path; `None` when it leaves the run
/// or is not relative.
fn join_relative(dir: &str, link: &str) -> Option<String> {
    if link.is_empty()
        || link.starts_with('/')
        || link.starts_with('#')
        || link.contains("://")
        || link.contains(':')
    {
        return None;
    }
    let link = link.split(['#', '?']).next().unwrap_or_default();
    let mut parts: Vec<String> = dir
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    for part in link.split('/') {
        let part = percent_encoding::percent_decode_str(part)
            .decode_utf8_lossy()
            .into_owned();
        match part.as_str() {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p.to_string()),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Markdown rendered to HTML and sanitized (ammonia: no script, no event
/// handlers, no `javascript:` links). Relative links and images are
/// pointed at the run's file pages and raw files; images from elsewhere
/// are dropped by the page's policy anyway.
pub(crate) fn markdown(text: &str, run: &str, dir: &str) -> String {
    sanitized_markdown(text, Some((run, dir)))
}

/// Markdown an agent wrote in a transcript, sanitized as [`markdown`]; its
/// relative links and images are dropped, as they point at nothing the
/// viewer serves.
pub(crate) fn markdown_loose(text: &str) -> String {
    sanitized_markdown(text, None)
}

/// Markdown to sanitized HTML; relative links rewritten into `run`'s files
/// (`Some((run, dir))`) or dropped (`None`).
fn sanitized_markdown(text: &str, within: Option<(&str, &str)>) -> String {
    use pulldown_cmark::{Options, Parser, html};
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let mut raw = String::new();
    // A task list's box is drawn as a character, so no `<input>` need pass
    // the sanitizer: one an agent wrote could be any kind of form field.
    let events = Parser::new_ext(text, opts).map(|e| match e {
        pulldown_cmark::Event::TaskListMarker(done) => {
            pulldown_cmark::Event::Text(if done { "☑ " } else { "☐ " }.into())
        }
        e => e,
    });
    html::push_html(&mut raw, events);
    let within = within.map(|(run, dir)| (run.to_string(), dir.to_string()));
    ammonia::Builder::default()
        .attribute_filter(move |element, attribute, value| {
            if !matches!((element, attribute), ("img", "src") | ("a", "href")) {
                return Some(value.into());
            }
            let Some((run, dir)) = &within else {
                // A relative link of a transcript leads nowhere: dropped.
                let absolute = ["http://", "https://", "mailto:"]
                    .iter()
                    .any(|p| value.starts_with(p));
                return absolute.then(|| value.into());
            };
            let rewritten = match element {
                "img" => join_relative(dir, value)
                    .map(|p| format!("/api/runs/{run}/files/{}", enc_path(&p))),
                _ => {
                    join_relative(dir, value).map(|p| format!("/runs/{run}/files/{}", enc_path(&p)))
                }
            };
            Some(rewritten.map_or_else(|| value.into(), Into::into))
        })
        .clean(&raw)
        .to_string()
}

/// JSON pretty-printed (key order kept) with keys, strings, numbers and
/// literals in their own colours; text that is not JSON comes back escaped.
pub(crate) fn json_html(text: &str) -> String {
    let pretty = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok());
    let Some(pretty) = pretty else {
        return esc(text);
    };
    let mut out = String::with_capacity(pretty.len() * 2);
    let chars: Vec<char> = pretty.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' {
            let start = i;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            let s: String = chars[start..=i.min(chars.len() - 1)].iter().collect();
            let mut j = i + 1;
            while j < chars.len() && chars[j] == ' ' {
                j += 1;
            }
            let class = if chars.get(j) == Some(&':') {
                "j-key"
            } else {
                "j-str"
            };
            let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(&s));
            i += 1;
        } else if c == '-' || c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "+-.".contains(chars[i]))
            {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            let _ = write!(out, "<span class=\"j-num\">{}</span>", esc(&s));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            let _ = write!(out, "<span class=\"j-lit\">{}</span>", esc(&s));
        } else {
            out.push_str(&esc(&c.to_string()));
            i += 1;
        }
    }
    out
}

/// Truncates `s` to `n` characters with an ellipsis.
pub(crate) fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A lineage box's width and height, and the gaps between boxes.
const BOX_W: i64 = 230;
const BOX_H: i64 = 46;
const GAP_X: i64 = 70;
const GAP_Y: i64 = 22;

/// The lineage as an SVG drawn on the server: one column per generation
/// (earliest left), each run a box linking to its page, the asked-about run
/// outlined, edges from the earlier run to the later one.
pub(crate) fn lineage_svg(g: &Lineage) -> String {
    let placed = Placement::of(g);
    let (width, height) = (placed.width, placed.height);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"Lineage graph\">\
         <defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path class=\"arrow\" d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>"
    );
    for e in &g.edges {
        if let (Some(from), Some(to)) = (placed.at(&e.from), placed.at(&e.to)) {
            svg.push_str(&edge_path(from, to));
        }
    }
    for n in &g.nodes {
        if let Some(at) = placed.at(&n.session_id) {
            svg.push_str(&node_box(n, n.session_id == g.root, at));
        }
    }
    svg.push_str("</svg>");
    svg
}

/// Where each run's box sits, and the size of the whole drawing.
struct Placement<'a> {
    pos: HashMap<&'a str, (i64, i64)>,
    width: i64,
    height: i64,
}

impl<'a> Placement<'a> {
    /// Each generation a column, its runs stacked in the order given.
    fn of(g: &'a Lineage) -> Placement<'a> {
        let level = generations(g);
        let mut rows: HashMap<i64, i64> = HashMap::new();
        let mut pos: HashMap<&str, (i64, i64)> = HashMap::new();
        for n in &g.nodes {
            let col = level.get(n.session_id.as_str()).copied().unwrap_or(0);
            let row = rows.entry(col).or_insert(0);
            pos.insert(
                n.session_id.as_str(),
                (10 + col * (BOX_W + GAP_X), 10 + *row * (BOX_H + GAP_Y)),
            );
            *row += 1;
        }
        let cols = rows.keys().max().copied().unwrap_or(0) + 1;
        let max_rows = rows.values().max().copied().unwrap_or(1);
        Placement {
            pos,
            width: 20 + cols * BOX_W + (cols - 1) * GAP_X,
            height: 20 + max_rows * BOX_H + (max_rows - 1) * GAP_Y,
        }
    }

    fn at(&self, id: &str) -> Option<(i64, i64)> {
        self.pos.get(id).copied()
    }
}

/// Each run's generation: the longest chain of parents (bounded by the
/// node count, so a cycle cannot loop forever).
fn generations(g: &Lineage) -> HashMap<&str, i64> {
    let mut level: HashMap<&str, i64> =
        g.nodes.iter().map(|n| (n.session_id.as_str(), 0)).collect();
    for _ in 0..g.nodes.len() {
        let mut changed = false;
        for e in &g.edges {
            let from = level.get(e.from.as_str()).copied().unwrap_or(0);
            if let Some(to) = level.get_mut(e.to.as_str())
                && *to < from + 1
                && from < g.nodes.len() as i64
            {
                *to = from + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    level
}

/// The curve from the right edge of the earlier run's box to the left edge
/// of the later one's.
fn edge_path((x1, y1): (i64, i64), (x2, y2): (i64, i64)) -> String {
    let (sx, sy, tx, ty) = (x1 + BOX_W, y1 + BOX_H / 2, x2, y2 + BOX_H / 2);
    let mx = (sx + tx) / 2;
    format!(
        "<path class=\"edge\" marker-end=\"url(#arr)\" d=\"M{sx},{sy} C{mx},{sy} {mx},{ty} {tx},{ty}\"/>"
    )
}

/// One run's box at `(x, y)`: a link to its page, its status as a dot, its
/// name and its status line.
fn node_box(n: &LineageNode, root: bool, (x, y): (i64, i64)) -> String {
    let mut class = String::from("node");
    if root {
        class.push_str(" root");
    }
    if n.missing {
        class.push_str(" missing");
    }
    let dot = match n.status.as_str() {
        "completed" => "dot-completed",
        "running" => "dot-running",
        "failed" => "dot-failed",
        _ => "dot-other",
    };
    let (title, rest) = match n.label.split_once(" (") {
        Some((t, r)) => (t.to_string(), r.trim_end_matches(')').to_string()),
        None => (n.label.clone(), String::new()),
    };
    let status = if n.missing {
        "missing run".to_string()
    } else {
        format!("{} · {}", n.status, rest)
    };
    format!(
        "<a href=\"/runs/{id}\"><g class=\"{class}\"><title>{label}</title><rect x=\"{x}\" y=\"{y}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"8\"/>\
         <circle class=\"{dot}\" cx=\"{cx}\" cy=\"{cy}\" r=\"4\"/>\
         <text x=\"{tx}\" y=\"{ty1}\">{t}</text><text class=\"st\" x=\"{tx}\" y=\"{ty2}\">{s}</text></g></a>",
        id = esc(&n.session_id),
        label = esc(&n.label),
        cx = x + 14,
        cy = y + 17,
        tx = x + 26,
        ty1 = y + 21,
        ty2 = y + 37,
        t = esc(&clip(&title, 30)),
        s = esc(&clip(&status, 34)),
    )
}

/// A work session's token bar: the used share filled in the indicator's
/// colour, with the 80 % and 95 % thresholds marked.
pub(crate) fn token_bar(percentage: f64, indicator: &str) -> String {
    let fill = percentage.clamp(0.0, 100.0);
    format!(
        "<svg viewBox=\"0 0 1000 28\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{fill:.1}% of the token budget used\">\
         <rect class=\"track\" x=\"0\" y=\"0\" width=\"1000\" height=\"28\" rx=\"6\"/>\
         <rect class=\"fill-{ind}\" x=\"0\" y=\"0\" width=\"{w:.0}\" height=\"28\" rx=\"6\"/>\
         <line class=\"tick\" x1=\"800\" y1=\"0\" x2=\"800\" y2=\"28\"/>\
         <line class=\"tick\" x1=\"950\" y1=\"0\" x2=\"950\" y2=\"28\"/></svg>",
        ind = esc(indicator),
        w = fill * 10.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_sanitized_and_relative_links_stay_in_the_run() {
        let html = markdown(
            "# T\n<script>alert(1)</script>\n[x](javascript:alert(1)) ![p](img/a.png) [n](../b.md) [out](../../x)\n<img src=x onerror=alert(1)>",
            "r",
            "docs",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
        assert!(
            html.contains("src=\"/api/runs/r/files/docs/img/a.png\""),
            "{html}"
        );
        assert!(html.contains("href=\"/runs/r/files/b.md\""), "{html}");
        assert!(!html.contains("/runs/r/files/x"), "{html}");
    }

    #[test]
    fn transcript_markdown_is_sanitized_and_drops_links_that_lead_nowhere() {
        let html = markdown_loose(
            "**b** <script>alert(1)</script>[x](javascript:alert(1)) [r](src/a.rs) ![i](a.png) [w](https://example.com/)\n<img src=x onerror=alert(2)>",
        );
        assert!(html.contains("<strong>b</strong>"), "{html}");
        for bad in [
            "<script",
            "javascript:",
            "onerror",
            "src/a.rs",
            "a.png",
            "src=\"x\"",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("href=\"https://example.com/\""), "{html}");
    }

    #[test]
    fn no_form_field_passes_and_a_task_list_keeps_its_boxes() {
        for html in [
            markdown_loose(
                "<input type=\"text\" name=\"password\">\n\n- [x] shipped\n- [ ] tested",
            ),
            markdown(
                "<input type=checkbox checked>\n\n- [x] shipped\n- [ ] tested",
                "r",
                "docs",
            ),
        ] {
            assert!(!html.contains("<input"), "{html}");
            assert!(
                html.contains("☑ shipped") && html.contains("☐ tested"),
                "{html}"
            );
        }
    }

    #[test]
    fn snippets_mark_hits_and_escape_the_rest() {
        assert_eq!(
            snippet_html("buy <b>ten</b> [laptops] now"),
            "buy &lt;b&gt;ten&lt;/b&gt; <mark>laptops</mark> now"
        );
    }

    #[test]
    fn json_is_coloured_and_escaped() {
        let h = json_html(r#"{"a<":"<b>","n":1.5,"t":true}"#);
        assert!(
            h.contains("<span class=\"j-key\">&quot;a&lt;&quot;</span>"),
            "{h}"
        );
        assert!(
            h.contains("<span class=\"j-str\">&quot;&lt;b&gt;&quot;</span>"),
            "{h}"
        );
        assert!(h.contains("<span class=\"j-num\">1.5</span>"), "{h}");
        assert_eq!(json_html("<not json>"), "&lt;not json&gt;");
    }
}

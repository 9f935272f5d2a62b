//! The usage page's charts as server-side SVG (no chart library, no inline
//! style: colours come from the stylesheet's `series-N` classes, which have
//! a light and a dark value). Every bar carries a `<title>` with its exact
//! numbers; the tables beside the charts carry the same numbers for screen
//! readers and for copying. Text is escaped here ([`esc`]) before any of it
//! reaches the template.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use logbook::model::agent_log::Usage;
use logbook::ops::budget::Budget;

use super::{esc, thousands};

/// How many distinct series colours the stylesheet defines.
const SERIES: usize = 8;

/// A transcript's agent as people call it.
pub(crate) fn agent_name(source: &str) -> &str {
    match source {
        "claude-code" => "Claude Code",
        "codex" => "Codex",
        "logbook" => "seed 003",
        other => other,
    }
}

/// The tokens served from or written to the cache: Claude's cache reads
/// and writes, Codex's cached input.
pub(crate) fn cache_of(u: &Usage) -> u64 {
    u.cache_read_input_tokens + u.cache_creation_input_tokens + u.cached_input_tokens
}

/// The tokens read from the cache (Claude's cache reads, Codex's cached
/// input): the part that dwarfs the rest, drawn apart.
pub(crate) fn cache_reads(u: &Usage) -> u64 {
    u.cache_read_input_tokens + u.cached_input_tokens
}

/// Every count of `u`, for a tooltip.
pub(crate) fn detail(u: &Usage) -> String {
    format!(
        "input {} · output {} · cache write {} · cache read {} · total {}",
        thousands(u.input_tokens),
        thousands(u.output_tokens),
        thousands(u.cache_creation_input_tokens),
        thousands(cache_reads(u)),
        thousands(u.total_tokens)
    )
}

/// The series class of each model, in the order of `models` (sorted), so a
/// model keeps its colour across the charts of one page.
pub(crate) fn series(models: &[String]) -> BTreeMap<String, usize> {
    models
        .iter()
        .enumerate()
        .map(|(i, m)| (m.clone(), i % SERIES))
        .collect()
}

/// One column of a stacked chart: its label and its parts by model.
pub(crate) struct Column {
    pub(crate) label: String,
    pub(crate) parts: Vec<(String, u64)>,
}

const W: f64 = 760.0;
const H: f64 = 240.0;
const LEFT: f64 = 78.0;
const BOTTOM: f64 = 28.0;
const TOP: f64 = 12.0;

/// A vertical stacked bar chart (one column a day), each segment titled
/// with its label, model and exact count.
pub(crate) fn stacked_columns(
    aria: &str,
    columns: &[Column],
    colours: &BTreeMap<String, usize>,
    unit: &str,
) -> String {
    let max = columns
        .iter()
        .map(|c| c.parts.iter().map(|(_, n)| n).sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let plot_w = W - LEFT - 8.0;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / columns.len().max(1) as f64;
    let bar = (slot * 0.7).min(60.0);
    let mut svg = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{}\">",
        esc(aria)
    );
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\"/>\
         <text class=\"tick-label\" x=\"{lx}\" y=\"{ty}\" text-anchor=\"end\">{top}</text>\
         <text class=\"tick-label\" x=\"{lx}\" y=\"{y0}\" text-anchor=\"end\">0</text>",
        y0 = TOP + plot_h,
        x1 = W - 8.0,
        lx = LEFT - 6.0,
        ty = TOP + 10.0,
        top = thousands(max),
    );
    for (i, c) in columns.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut y = TOP + plot_h;
        let total: u64 = c.parts.iter().map(|(_, n)| n).sum();
        for (model, n) in &c.parts {
            if *n == 0 {
                continue;
            }
            let h = plot_h * (*n as f64) / (max as f64);
            y -= h;
            let _ = write!(
                svg,
                "<rect class=\"series-{s}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{h:.1}\"><title>{t}</title></rect>",
                s = colours.get(model).copied().unwrap_or(0),
                t = esc(&format!("{} · {model}: {} {unit}", c.label, thousands(*n))),
            );
        }
        let _ = write!(
            svg,
            "<text class=\"tick-label\" x=\"{cx:.1}\" y=\"{ly}\" text-anchor=\"middle\">{l}<title>{t}</title></text>",
            cx = x + bar / 2.0,
            ly = H - 8.0,
            l = esc(&c.label),
            t = esc(&format!("{}: {} {unit}", c.label, thousands(total))),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Horizontal stacked bars (one a repository), each row labelled.
pub(crate) fn stacked_rows(
    aria: &str,
    rows: &[Column],
    colours: &BTreeMap<String, usize>,
    unit: &str,
) -> String {
    let max = rows
        .iter()
        .map(|c| c.parts.iter().map(|(_, n)| n).sum::<u64>())
        .max()
        .unwrap_or(0)
        .max(1);
    let row_h = 26.0;
    let label_w = 240.0;
    let plot_w = W - label_w - 90.0;
    let h = row_h * rows.len().max(1) as f64 + 8.0;
    let mut svg = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"{}\">",
        esc(aria)
    );
    for (i, c) in rows.iter().enumerate() {
        let y = 4.0 + row_h * i as f64;
        let total: u64 = c.parts.iter().map(|(_, n)| n).sum();
        let _ = write!(
            svg,
            "<text class=\"row-label\" x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"end\">{l}<title>{full}</title></text>",
            lx = label_w - 8.0,
            ty = y + 16.0,
            l = esc(&super::clip(&c.label, 34)),
            full = esc(&c.label),
        );
        let mut x = label_w;
        for (model, n) in &c.parts {
            if *n == 0 {
                continue;
            }
            let w = plot_w * (*n as f64) / (max as f64);
            let _ = write!(
                svg,
                "<rect class=\"series-{s}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bh}\"><title>{t}</title></rect>",
                s = colours.get(model).copied().unwrap_or(0),
                bh = row_h - 8.0,
                t = esc(&format!("{} · {model}: {} {unit}", c.label, thousands(*n))),
            );
            x += w;
        }
        let _ = write!(
            svg,
            "<text class=\"tick-label\" x=\"{vx:.1}\" y=\"{ty:.1}\">{v}</text>",
            vx = x + 6.0,
            ty = y + 16.0,
            v = thousands(total),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Each work session's usage now as a bar against its budget: the bar, a
/// line at the budget and a tick at the peak, each row on its own scale
/// (the larger of budget and usage), so every budget line is visible.
pub(crate) fn budget_rows(budgets: &[Budget]) -> String {
    let row_h = 30.0;
    let label_w = 240.0;
    let plot_w = W - label_w - 120.0;
    let h = row_h * budgets.len().max(1) as f64 + 8.0;
    let mut svg = format!(
        "<svg class=\"chart\" viewBox=\"0 0 {W} {h}\" role=\"img\" aria-label=\"Work sessions' token usage against their budgets\">"
    );
    for (i, b) in budgets.iter().enumerate() {
        let y = 4.0 + row_h * i as f64;
        let scale = b.max.max(b.peak).max(b.current).max(1) as f64;
        let at = |n: u64| label_w + plot_w * (n as f64) / scale;
        let label = if b.name.is_empty() {
            b.id.clone()
        } else {
            format!("{} ({})", b.id, b.name)
        };
        let state = if b.max > 0 && b.current * 100 >= b.max * 95 {
            "critical"
        } else if b.max > 0 && b.current * 100 >= b.max * 80 {
            "warning"
        } else {
            "ok"
        };
        let _ = write!(
            svg,
            "<text class=\"row-label\" x=\"{lx}\" y=\"{ty:.1}\" text-anchor=\"end\">{l}<title>{full}</title></text>\
             <rect class=\"budget-track\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{tw:.1}\" height=\"{bh}\"/>\
             <rect class=\"budget-{state}\" x=\"{label_w}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{bh}\"><title>{t}</title></rect>\
             <line class=\"peak\" x1=\"{px:.1}\" y1=\"{y:.1}\" x2=\"{px:.1}\" y2=\"{yb:.1}\"><title>{pt}</title></line>\
             <line class=\"budget-line\" x1=\"{bx:.1}\" y1=\"{y1:.1}\" x2=\"{bx:.1}\" y2=\"{y2:.1}\"><title>{btitle}</title></line>\
             <text class=\"tick-label\" x=\"{vx:.1}\" y=\"{ty:.1}\">{pct}</text>",
            lx = label_w - 8.0,
            ty = y + 17.0,
            l = esc(&super::clip(&b.id, 34)),
            full = esc(&label),
            tw = at(b.max) - label_w,
            cw = at(b.current) - label_w,
            bh = row_h - 10.0,
            t = esc(&format!(
                "{}: {} of {} tokens used now",
                b.id,
                thousands(b.current),
                thousands(b.max)
            )),
            px = at(b.peak),
            yb = y + row_h - 10.0,
            pt = esc(&format!("{}: peak {} tokens", b.id, thousands(b.peak))),
            bx = at(b.max),
            y1 = y - 2.0,
            y2 = y + row_h - 8.0,
            btitle = esc(&format!("{}: budget {} tokens", b.id, thousands(b.max))),
            vx = label_w + plot_w + 8.0,
            pct = if b.max > 0 {
                format!("{:.0}%", b.current as f64 * 100.0 / b.max as f64)
            } else {
                "-".into()
            },
        );
    }
    svg.push_str("</svg>");
    svg
}

//! What a usage report's tokens cost: each counted call at its own model's
//! price ([`crate::model::price`]), so a session that switched models, or
//! one whose calls passed a long-context tier, is priced call by call.
//!
//! Claude Code's calls are each kept in the usage book ([`Call`]): they are
//! priced one by one, the tier from each call's own prompt. What a book
//! counted only in aggregate (Codex's growth, calls without ids) is priced
//! at the model's base rates, and the report says so where the model has
//! tiers. Cache writes are priced at the 5-minute rate: the counts do not
//! keep Claude Code's 5-minute/1-hour split.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::model::agent_log::{Call, Usage, UsageBook};
use crate::model::price::{Cost, PriceTable, TableId, round_usd};
use crate::model::transcript::Summary;

/// A cost that may not be known: `None` when some of its tokens are of a
/// model the table does not price.
pub type MaybeCost = Option<Cost>;

/// Adds `b` into `a`: unknown once either is.
pub fn add(a: &mut MaybeCost, b: MaybeCost) {
    *a = match (*a, b) {
        (Some(mut x), Some(y)) => {
            x += y;
            Some(x)
        }
        _ => None,
    };
}

/// A cost as JSON shows it: dollars to the billionth, `null` when not priced.
pub fn usd(c: MaybeCost) -> Option<f64> {
    c.map(|c| round_usd(c.usd))
}

/// One usage book's cost, per model and per day and model.
#[derive(Debug, Clone, Default)]
pub struct BookCost {
    /// Per model.
    pub by_model: BTreeMap<String, MaybeCost>,
    /// Per UTC day, then model.
    pub by_day: BTreeMap<String, BTreeMap<String, MaybeCost>>,
}

impl BookCost {
    /// Everything in the book.
    pub fn total(&self) -> MaybeCost {
        let mut t = Some(Cost::default());
        for c in self.by_model.values() {
            add(&mut t, *c);
        }
        t
    }
}

/// What the models of a report that are not priced, and what was assumed
/// to price the rest.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CostNotes {
    /// Models with tokens the table does not price.
    pub not_priced: BTreeSet<String>,
    /// Some cache writes were priced at the 5-minute rate.
    pub cache_write_at_5m: bool,
    /// Some usage of a model with long-context tiers was priced at its base
    /// rates (counted only in aggregate).
    pub tier_unknown: bool,
}

impl CostNotes {
    /// The notes a report prints and its JSON carries as `costNotes`.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![];
        if !self.not_priced.is_empty() {
            out.push(format!(
                "not priced (cost null): {}",
                self.not_priced
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.cache_write_at_5m {
            out.push("cache writes priced at the 5-minute rate: the counts do not say which were 1-hour writes".into());
        }
        if self.tier_unknown {
            out.push("usage counted in aggregate (not call by call) priced at base rates: a long-context tier may be missed".into());
        }
        out
    }

    fn note(&mut self, model: &str, c: MaybeCost) {
        match c {
            None => {
                self.not_priced.insert(model.to_string());
            }
            Some(c) => {
                self.cache_write_at_5m |= c.cache_write_at_5m;
                self.tier_unknown |= c.tier_unknown;
            }
        }
    }
}

/// The cost of `book`: its kept calls one by one, the rest of each model's
/// (and day's) usage in aggregate.
pub fn book_cost(table: &PriceTable, book: &UsageBook, notes: &mut CostNotes) -> BookCost {
    let mut out = BookCost::default();
    for (model, u) in &book.by_model {
        let c = priced(table, model, u, book.calls.iter().filter(|c| c.1 == *model));
        notes.note(model, c);
        out.by_model.insert(model.clone(), c);
    }
    for (day, models) in &book.by_day {
        let row = out.by_day.entry(day.clone()).or_default();
        for (model, u) in models {
            let calls = book.calls.iter().filter(|c| c.1 == *model && c.2 == *day);
            row.insert(model.clone(), priced(table, model, u, calls));
        }
    }
    out
}

/// `total` of `model`, of which `calls` were counted one by one.
fn priced<'a>(
    table: &PriceTable,
    model: &str,
    total: &Usage,
    calls: impl Iterator<Item = &'a Call>,
) -> MaybeCost {
    let mut cost = Some(Cost::default());
    let mut counted = Usage::default();
    for call in calls {
        let u = call.usage();
        counted += u;
        add(&mut cost, table.cost_of_call(model, &u));
    }
    add(
        &mut cost,
        table.cost_of_total(model, &total.minus(&counted)),
    );
    cost
}

/// What one listed transcript's own calls cost: from the index's counts
/// when it used one model without long-context tiers, else from its
/// stored usage book (its head); `None` when it was not measured from a
/// log, its file is not here (another machine's), or a model is not priced.
pub fn of_summary(table: &PriceTable, s: &Summary) -> Option<f64> {
    let usage = s.usage?;
    if let [model] = s.models.as_slice()
        && table.find(model).is_some_and(|(_, p)| p.tiers.is_empty())
    {
        return usd(table.cost_of_total(model, &usage));
    }
    let head = logbook_store::transcript::read_head(&s.file).ok()?;
    let book = crate::model::agent_log::usage_of(&head.metadata)?;
    usd(book_cost(table, &book, &mut CostNotes::default()).total())
}

/// Which table a report's costs were computed with, and what it assumed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostBasis {
    /// The price table's source and date.
    pub prices: TableId,
    /// Models not priced, and the assumptions made (empty when none).
    pub notes: Vec<String>,
}

//! `logbook prices`: the price table costs are computed with, shown, and
//! replaced by a newer copy of LiteLLM's JSON (offline: the file is given).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::Logbook;
use crate::error::{Error, Next, Result};
use crate::model::price::{ModelPrice, PriceTable, TableId};

/// The table this project's costs are computed with: the one `prices
/// update` stored, else the one shipped with Logbook.
pub fn table(p: &Logbook) -> Result<PriceTable> {
    Ok(table_of(p)?.0)
}

/// The table in use, and whether it is `stored` or `shipped`.
fn table_of(p: &Logbook) -> Result<(PriceTable, &'static str)> {
    let Some(text) = logbook_store::prices::read_stored(p)? else {
        return Ok((PriceTable::shipped(), "shipped"));
    };
    let path = logbook_store::prices::path(p);
    PriceTable::from_json(&text, "stored", "")
        .map(|t| (t, "stored"))
        .map_err(|e| {
        Error::invalid("prices", path.display().to_string(), e.0).with_next(Next::say(
            "load a good copy of LiteLLM's table (the prices update command, a person's step), or delete that file to use the shipped table",
        ))
    })
}

/// What `prices update` stored.
#[derive(Debug, Clone, Serialize)]
pub struct PricesUpdated {
    /// The stored file.
    pub path: PathBuf,
    /// The new table's source and date.
    pub table: TableId,
    /// How many models it prices.
    pub models: usize,
}

/// Loads a LiteLLM `model_prices_and_context_window.json` from `file`,
/// keeps the agents' models and stores it as this project's table. Its
/// date is today unless the file names one (a table Logbook wrote).
pub fn update(p: &Logbook, file: &Path) -> Result<PricesUpdated> {
    let text = logbook_store::prices::read_given(file)?.ok_or_else(|| {
        Error::not_found(
            "price file",
            file.display().to_string(),
            Next::say("give the path of LiteLLM's model_prices_and_context_window.json"),
        )
    })?;
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let today: String = p.clock.now_string().chars().take(10).collect();
    let bad = |e: crate::model::price::TableError| {
        Error::invalid("FILE", file.display().to_string(), e.0).with_next(Next::say(
            "give LiteLLM's model_prices_and_context_window.json (in the litellm package on PyPI)",
        ))
    };
    let read = PriceTable::from_json(&text, &format!("LiteLLM {name}"), &today).map_err(bad)?;
    let stored = PriceTable::stored_json(&text, &read.id).map_err(bad)?;
    let path = logbook_store::prices::store(p, &stored)?;
    Ok(PricesUpdated {
        path,
        table: read.id,
        models: read.models.len(),
    })
}

/// One model's prices as `prices show` prints them: US dollars per
/// million tokens.
#[derive(Debug, Clone, Serialize)]
pub struct PriceRow {
    /// The model, as the table lists it.
    pub model: String,
    /// Its prices.
    #[serde(flatten)]
    pub price: ModelPrice,
}

/// What `prices show` prints.
#[derive(Debug, Clone, Serialize)]
pub struct PricesShown {
    /// The table's source and date.
    pub table: TableId,
    /// `stored` (this project's, from `prices update`) or `shipped`.
    pub origin: &'static str,
    /// The models shown (per token, USD).
    pub models: Vec<PriceRow>,
}

/// The table in use, or only the price of `model` (as an agent's log
/// names it); a model the table does not hold is not found.
pub fn show(p: &Logbook, model: Option<&str>) -> Result<PricesShown> {
    let (table, origin) = table_of(p)?;
    let models = match model {
        None => table
            .models
            .iter()
            .map(|(m, price)| PriceRow {
                model: m.clone(),
                price: price.clone(),
            })
            .collect(),
        Some(name) => {
            let (m, price) = table.find(name).ok_or_else(|| {
                Error::not_found(
                    "priced model",
                    name,
                    Next::say("it is not priced: its cost shows as null (\"not priced\"); the prices show command lists the priced models, prices update loads a newer table"),
                )
            })?;
            vec![PriceRow {
                model: m.to_string(),
                price: price.clone(),
            }]
        }
    };
    Ok(PricesShown {
        table: table.id,
        origin,
        models,
    })
}

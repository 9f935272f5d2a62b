//! What the models agents call cost per token, and what a counted call cost
//! at those prices.
//!
//! The table is LiteLLM's public `model_prices_and_context_window.json`
//! (prices are facts; LiteLLM keeps them current), cut down to the models of
//! the agents Logbook reads: Anthropic's Claude, OpenAI's GPT, o-series and
//! codex models, and Google's Gemini (which also cover what GitHub Copilot
//! and OpenCode call). Logbook ships one copy ([`SHIPPED`]);
//! `logbook prices update FILE` loads a newer one. Every table carries its
//! source and date, and every cost says which table it was computed with.
//!
//! Rules (where a guess would be easy and wrong):
//! - a model the table does not hold is *not priced*: its cost is `None`,
//!   never zero;
//! - a cache write whose log does not say whether it was Anthropic's
//!   5-minute or 1-hour write is priced at the 5-minute rate, and the cost
//!   says so ([`Cost::cache_write_at_5m`]);
//! - a long-context tier (`…_above_200k_tokens`) prices a whole call whose
//!   prompt passed it, so it needs the call's own counts: usage counted only
//!   in aggregate is priced at the base rates, and the cost says so
//!   ([`Cost::tier_unknown`]).
//!
//! ```
//! use logbook_model::price::PriceTable;
//! use logbook_model::agent_log::Usage;
//! let table = PriceTable::shipped();
//! let u = Usage { input_tokens: 1_000_000, ..Usage::default() };
//! let cost = table.cost_of_call("claude-sonnet-4-5-20250929", &u).unwrap();
//! assert!((cost.usd - 3.0).abs() < 1e-9);
//! assert!(table.cost_of_call("no-such-model", &u).is_none());
//! ```

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::agent_log::Usage;

/// The table shipped with Logbook: LiteLLM's JSON, cut down to the agents'
/// models, with a `_logbook` member naming its source and date.
pub const SHIPPED: &str = include_str!("../data/prices.json");

/// The member of a stored table that names where it came from and when.
pub const META_KEY: &str = "_logbook";

/// The per-token prices of one model (USD), at one prompt size.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Rates {
    /// A prompt token not read from or written to a cache.
    pub input: f64,
    /// A completion token.
    pub output: f64,
    /// A prompt token written to the cache (Anthropic: the 5-minute write).
    pub cache_write_5m: Option<f64>,
    /// Anthropic: a prompt token written to the 1-hour cache.
    pub cache_write_1h: Option<f64>,
    /// A prompt token read from the cache.
    pub cache_read: Option<f64>,
}

/// A long-context tier: the rates of a call whose prompt passed
/// `above_tokens`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tier {
    /// The prompt size (tokens) past which the whole call takes these rates.
    pub above_tokens: u64,
    /// The rates, the base ones where the tier names none.
    pub rates: Rates,
}

/// One model's prices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPrice {
    /// The provider LiteLLM names (`anthropic`, `openai`, `gemini`…).
    pub provider: String,
    /// The rates of a call below every tier.
    pub base: Rates,
    /// A reasoning token, where it is billed apart from output.
    pub reasoning: Option<f64>,
    /// Long-context tiers, smallest first.
    pub tiers: Vec<Tier>,
}

/// Which table a cost was computed with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableId {
    /// Where the prices came from (LiteLLM's file, which copy).
    pub source: String,
    /// When that copy was taken (`YYYY-MM-DD`).
    pub date: String,
}

/// A price table: the models' prices and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    /// Its source and date.
    pub id: TableId,
    /// Per model name, as LiteLLM names it (provider prefix dropped).
    pub models: BTreeMap<String, ModelPrice>,
}

/// What some usage cost, with what was assumed to price it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// US dollars.
    pub usd: f64,
    /// Cache writes were priced at the 5-minute rate: the counts do not
    /// say which were 1-hour writes.
    pub cache_write_at_5m: bool,
    /// The model has long-context tiers but the usage was priced in
    /// aggregate, at the base rates.
    pub tier_unknown: bool,
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        self.usd += o.usd;
        self.cache_write_at_5m |= o.cache_write_at_5m;
        self.tier_unknown |= o.tier_unknown;
    }
}

/// A table that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TableError(pub String);

/// The LiteLLM keys of a tier's rates: `<key>_above_<N>k_tokens`.
const TIERED: [&str; 5] = [
    "input_cost_per_token",
    "output_cost_per_token",
    "cache_creation_input_token_cost",
    "cache_creation_input_token_cost_above_1hr",
    "cache_read_input_token_cost",
];

/// The providers whose entries are kept, in the order they are read: a
/// later one's entry replaces an earlier one's of the same name (the
/// Gemini API's own prices over Vertex AI's copies).
/// Bedrock's `anthropic.<model>-v1:0` entries come first, so that Claude
/// models Anthropic's own list dropped (claude-opus-4-1, claude-sonnet-4)
/// keep their list price: Bedrock's on-demand price is Anthropic's.
const PROVIDERS: [&str; 5] = [
    "bedrock_converse",
    "vertex_ai-language-models",
    "openai",
    "anthropic",
    "gemini",
];

/// The name an entry of `provider` is listed under, if it is one of the
/// agents' models.
fn listed_name<'a>(provider: &str, key: &'a str) -> Option<&'a str> {
    let name = match provider {
        // A stored table lists them by name already.
        "bedrock_converse" => match key.strip_prefix("anthropic.") {
            Some(rest) => rest
                .strip_suffix("-v1:0")
                .or_else(|| rest.strip_suffix("-v2:0"))?,
            None => key,
        },
        _ => key.strip_prefix("gemini/").unwrap_or(key),
    };
    let family = ["claude-", "gpt-", "o1", "o3", "o4", "codex", "gemini-"]
        .iter()
        .any(|f| name.starts_with(f));
    (family && !name.contains('/') && !name.contains(':')).then_some(name)
}

impl PriceTable {
    /// The table shipped with Logbook.
    pub fn shipped() -> PriceTable {
        // Read once per process: the status line and a hook ask for it
        // several times in one short run.
        static TABLE: std::sync::OnceLock<PriceTable> = std::sync::OnceLock::new();
        TABLE
            .get_or_init(|| {
                // The shipped file is tested (`shipped_table_reads`); an
                // empty table here would price nothing, never wrongly.
                PriceTable::from_json(SHIPPED, "shipped", "").unwrap_or_else(|_| PriceTable {
                    id: TableId {
                        source: "none".into(),
                        date: String::new(),
                    },
                    models: BTreeMap::new(),
                })
            })
            .clone()
    }

    /// Reads a LiteLLM-shaped JSON text. Its `_logbook` member, when there
    /// is one, names source and date; else `source` and `date` do.
    pub fn from_json(text: &str, source: &str, date: &str) -> Result<PriceTable, TableError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| TableError(format!("not JSON: {e}")))?;
        let Value::Object(all) = v else {
            return Err(TableError(
                "not a JSON object of models (LiteLLM's model_prices_and_context_window.json is one)".into(),
            ));
        };
        let kept = kept_entries(&all);
        if kept.is_empty() {
            return Err(TableError(
                "it prices none of the models of the agents Logbook reads (claude-*, gpt-*, o-series, codex, gemini-*): \
                 is it LiteLLM's model_prices_and_context_window.json?"
                    .into(),
            ));
        }
        let meta = all.get(META_KEY);
        let field = |k: &str, or: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or(or)
                .to_string()
        };
        let models = kept
            .iter()
            .filter_map(|(name, e)| Some((name.clone(), model_price(e)?)))
            .collect();
        Ok(PriceTable {
            id: TableId {
                source: field("source", source),
                date: field("date", date),
            },
            models,
        })
    }

    /// The entries of a LiteLLM text this table keeps, with `_logbook`
    /// naming `id`: what `prices update` stores.
    pub fn stored_json(text: &str, id: &TableId) -> Result<String, TableError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| TableError(format!("not JSON: {e}")))?;
        let Value::Object(all) = v else {
            return Err(TableError("not a JSON object of models".into()));
        };
        let mut out = Map::new();
        out.insert(
            META_KEY.into(),
            serde_json::json!({"source": id.source, "date": id.date}),
        );
        for (name, entry) in kept_entries(&all) {
            out.insert(name, Value::Object(entry));
        }
        serde_json::to_string_pretty(&Value::Object(out)).map_err(|e| TableError(e.to_string()))
    }

    /// The price of `model` and the name it is listed under: the name as
    /// the log wrote it, else without a provider prefix (`anthropic/`),
    /// a context suffix (`[1m]`), a date (`-20250929`, `@20250929`), or
    /// with Copilot's dots (`claude-sonnet-4.5`) as dashes.
    pub fn find(&self, model: &str) -> Option<(&str, &ModelPrice)> {
        let names = candidates(model);
        for name in &names {
            if let Some((k, p)) = self.models.get_key_value(name.as_str()) {
                return Some((k.as_str(), p));
            }
        }
        // Listed only with its date (`claude-opus-4-1-20250805`) while the
        // log names the alias: the newest dated entry.
        let bare = names.last()?;
        self.models
            .iter()
            .rev()
            .find(|(k, _)| undated(k).as_deref() == Some(bare.as_str()))
            .map(|(k, p)| (k.as_str(), p))
    }

    /// What one call of `model` with `usage` cost; `None` when the model
    /// is not priced.
    pub fn cost_of_call(&self, model: &str, usage: &Usage) -> Option<Cost> {
        if usage.is_zero() {
            return Some(Cost::default());
        }
        let (_, p) = self.find(model)?;
        Some(p.cost(usage, true))
    }

    /// What `usage` summed over many calls of `model` cost at the base
    /// rates (a long-context tier needs each call's prompt size); `None`
    /// when the model is not priced.
    pub fn cost_of_total(&self, model: &str, usage: &Usage) -> Option<Cost> {
        if usage.is_zero() {
            return Some(Cost::default());
        }
        let (_, p) = self.find(model)?;
        Some(p.cost(usage, false))
    }
}

impl ModelPrice {
    /// The rates of a call whose prompt holds `prompt` tokens.
    pub fn rates_at(&self, prompt: u64) -> Rates {
        self.tiers
            .iter()
            .rev()
            .find(|t| prompt > t.above_tokens)
            .map_or(self.base, |t| t.rates)
    }

    /// What `u` cost: one call (`one_call`, its tier from its prompt), or
    /// several summed (base rates).
    pub fn cost(&self, u: &Usage, one_call: bool) -> Cost {
        // Codex counts cached input inside input_tokens and reasoning
        // inside output_tokens; Claude Code counts cache reads and writes
        // apart from input_tokens.
        let cache_read = u.cache_read_input_tokens + u.cached_input_tokens;
        let fresh = u.input_tokens.saturating_sub(u.cached_input_tokens);
        let write = u.cache_creation_input_tokens;
        let prompt = fresh + cache_read + write;
        let r = if one_call {
            self.rates_at(prompt)
        } else {
            self.base
        };
        let n = |t: u64| t as f64;
        let mut usd = n(fresh) * r.input
            + n(write) * r.cache_write_5m.unwrap_or(r.input)
            + n(cache_read) * r.cache_read.unwrap_or(r.input);
        usd += match self.reasoning {
            Some(rate) => {
                let reasoning = u.reasoning_output_tokens.min(u.output_tokens);
                n(u.output_tokens - reasoning) * r.output + n(reasoning) * rate
            }
            None => n(u.output_tokens) * r.output,
        };
        Cost {
            usd,
            cache_write_at_5m: write > 0,
            tier_unknown: !one_call && !self.tiers.is_empty(),
        }
    }
}

/// The names `model` may be listed under, most exact first.
fn candidates(model: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![model.to_string()];
    let mut name = model.trim().to_ascii_lowercase();
    out.push(name.clone());
    if let Some((_, last)) = name.rsplit_once('/') {
        name = last.to_string();
        out.push(name.clone());
    }
    if let Some(i) = name.find('[') {
        name.truncate(i);
        out.push(name.clone());
    }
    if let Some((head, _)) = name.split_once('@') {
        name = head.to_string();
        out.push(name.clone());
    }
    if let Some(head) = undated(&name) {
        name = head;
        out.push(name.clone());
    }
    if name.starts_with("claude-") && name.contains('.') {
        out.push(name.replace('.', "-"));
    }
    out
}

/// `name` without its date suffix (`-20250929`), when it has one.
fn undated(name: &str) -> Option<String> {
    let (head, tail) = name.rsplit_once('-')?;
    (tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit())).then(|| head.to_string())
}

/// The entries of a LiteLLM object this table keeps, by the name they are
/// listed under: chat models of the agents' families, with a token price.
fn kept_entries(all: &Map<String, Value>) -> BTreeMap<String, Map<String, Value>> {
    let mut kept = BTreeMap::new();
    for provider in PROVIDERS {
        for (key, entry) in all {
            let Value::Object(e) = entry else { continue };
            if e.get("litellm_provider").and_then(Value::as_str) != Some(provider)
                || !matches!(
                    e.get("mode").and_then(Value::as_str),
                    Some("chat" | "responses") | None
                )
                || e.get("input_cost_per_token")
                    .and_then(Value::as_f64)
                    .is_none()
            {
                continue;
            }
            let Some(name) = listed_name(provider, key) else {
                continue;
            };
            let slim: Map<String, Value> = e
                .iter()
                .filter(|(k, _)| is_price_key(k) || *k == "litellm_provider")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            kept.insert(name.to_string(), slim);
        }
    }
    kept
}

/// A key this table reads: a base rate, or a tier's.
fn is_price_key(k: &str) -> bool {
    TIERED.contains(&k) || k == "output_cost_per_reasoning_token" || tier_of(k).is_some()
}

/// `(base key, N)` of a tier key `<base>_above_<N>k_tokens`.
fn tier_of(k: &str) -> Option<(&'static str, u64)> {
    let rest = k.strip_suffix("k_tokens")?;
    let (base, n) = rest.rsplit_once("_above_")?;
    let n: u64 = n.parse().ok()?;
    let base = TIERED.iter().find(|b| **b == base)?;
    Some((base, n * 1000))
}

/// One kept entry's prices.
fn model_price(e: &Map<String, Value>) -> Option<ModelPrice> {
    let f = |k: &str| e.get(k).and_then(Value::as_f64);
    let base = Rates {
        input: f("input_cost_per_token")?,
        output: f("output_cost_per_token").unwrap_or(0.0),
        cache_write_5m: f("cache_creation_input_token_cost"),
        cache_write_1h: f("cache_creation_input_token_cost_above_1hr"),
        cache_read: f("cache_read_input_token_cost"),
    };
    let mut tiers: BTreeMap<u64, Rates> = BTreeMap::new();
    for (k, v) in e {
        let (Some((key, above)), Some(rate)) = (tier_of(k), v.as_f64()) else {
            continue;
        };
        let r = tiers.entry(above).or_insert(base);
        match key {
            "input_cost_per_token" => r.input = rate,
            "output_cost_per_token" => r.output = rate,
            "cache_creation_input_token_cost" => r.cache_write_5m = Some(rate),
            "cache_creation_input_token_cost_above_1hr" => r.cache_write_1h = Some(rate),
            _ => r.cache_read = Some(rate),
        }
    }
    Some(ModelPrice {
        provider: e
            .get("litellm_provider")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        base,
        reasoning: f("output_cost_per_reasoning_token"),
        tiers: tiers
            .into_iter()
            .map(|(above_tokens, rates)| Tier {
                above_tokens,
                rates,
            })
            .collect(),
    })
}

/// US dollars rounded to a billionth, as reports give them: sums of float
/// products carry noise past that, and per-token prices reach a
/// ten-millionth of a dollar.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests;

//! Exact token usage of an agent log: what each call cost ([`Usage`]) and
//! the book that counts each call once however often the log repeats it
//! ([`UsageBook`]), by model and by day.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts as the agents report them. Claude Code fills the first four,
/// Codex `input_tokens` (which includes `cached_input_tokens`),
/// `output_tokens` (which includes `reasoning_output_tokens`) and the two
/// Codex fields; `total_tokens` is what was billed in all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Prompt tokens (Claude: not read from or written to the cache).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Claude: prompt tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Claude: prompt tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Codex: the part of `input_tokens` served from the cache.
    pub cached_input_tokens: u64,
    /// Codex: the part of `output_tokens` spent reasoning.
    pub reasoning_output_tokens: u64,
    /// Everything counted: Claude the sum of its four fields, Codex its own
    /// `total_tokens` (input + output).
    pub total_tokens: u64,
}

impl AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cache_creation_input_tokens += o.cache_creation_input_tokens;
        self.cache_read_input_tokens += o.cache_read_input_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.reasoning_output_tokens += o.reasoning_output_tokens;
        self.total_tokens += o.total_tokens;
    }
}

impl Usage {
    /// Claude Code's `message.usage`, with `total_tokens` the sum of its
    /// four counts; `None` when it is not an object.
    pub fn from_claude(v: &Value) -> Option<Usage> {
        let o = v.as_object()?;
        let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
        let mut u = Usage {
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            cache_creation_input_tokens: n("cache_creation_input_tokens"),
            cache_read_input_tokens: n("cache_read_input_tokens"),
            ..Usage::default()
        };
        u.total_tokens = u.input_tokens
            + u.output_tokens
            + u.cache_creation_input_tokens
            + u.cache_read_input_tokens;
        Some(u)
    }

    /// A Codex `total_token_usage` or `last_token_usage` object; a missing
    /// `total_tokens` is input + output.
    pub fn from_codex(v: &Value) -> Option<Usage> {
        let o = v.as_object()?;
        let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
        let mut u = Usage {
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            cached_input_tokens: n("cached_input_tokens"),
            reasoning_output_tokens: n("reasoning_output_tokens"),
            total_tokens: n("total_tokens"),
            ..Usage::default()
        };
        if u.total_tokens == 0 {
            u.total_tokens = u.input_tokens + u.output_tokens;
        }
        Some(u)
    }

    /// What `self` (a cumulative total) adds to `prev`, field by field;
    /// `None` when nothing moved. A total that went down in any field (the
    /// agent restarted its count) counts in full.
    pub fn growth_over(&self, prev: &Usage) -> Option<Usage> {
        if self == prev {
            return None;
        }
        let (a, b) = (self.counts(), prev.counts());
        if a.iter().zip(b).any(|(x, y)| *x < y) {
            return Some(*self);
        }
        Some(Usage::from_counts(std::array::from_fn(|i| a[i] - b[i])))
    }

    /// The counts in a fixed order: what a checkpoint stores compactly.
    pub fn counts(&self) -> [u64; 7] {
        [
            self.input_tokens,
            self.output_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
            self.cached_input_tokens,
            self.reasoning_output_tokens,
            self.total_tokens,
        ]
    }

    /// The usage [`Usage::counts`] gave.
    pub fn from_counts(n: [u64; 7]) -> Usage {
        Usage {
            input_tokens: n[0],
            output_tokens: n[1],
            cache_creation_input_tokens: n[2],
            cache_read_input_tokens: n[3],
            cached_input_tokens: n[4],
            reasoning_output_tokens: n[5],
            total_tokens: n[6],
        }
    }

    /// `self - other`, field by field, never below zero.
    pub fn minus(&self, o: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_sub(o.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(o.output_tokens),
            cache_creation_input_tokens: self
                .cache_creation_input_tokens
                .saturating_sub(o.cache_creation_input_tokens),
            cache_read_input_tokens: self
                .cache_read_input_tokens
                .saturating_sub(o.cache_read_input_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_sub(o.cached_input_tokens),
            reasoning_output_tokens: self
                .reasoning_output_tokens
                .saturating_sub(o.reasoning_output_tokens),
            total_tokens: self.total_tokens.saturating_sub(o.total_tokens),
        }
    }

    /// The prompt tokens as seed 003's `prompt_tokens` and OpenTelemetry's
    /// `gen_ai.usage.input_tokens` count them: everything the model read,
    /// cache reads and writes included. Claude Code's `input_tokens` leaves
    /// those out, so they are added back; Codex's `input_tokens` already
    /// holds its cached part. With [`Usage::completion_tokens`] it adds up
    /// to `total_tokens`.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// The completion tokens (seed 003's `completion_tokens`): what the
    /// model wrote, reasoning included.
    pub fn completion_tokens(&self) -> u64 {
        self.output_tokens
    }

    /// True when nothing was counted.
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }
}

/// A session's measured usage, per model and per (UTC) day and model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UsageBook {
    /// Per model (`unknown` when the log did not name one).
    pub by_model: BTreeMap<String, Usage>,
    /// Per UTC day (`YYYY-MM-DD`, `unknown` without a timestamp), then model.
    pub by_day: BTreeMap<String, BTreeMap<String, Usage>>,
    /// Claude Code: the part that old versions wrote inline as sidechain
    /// (subagent) lines of the main file; already in the other fields.
    #[serde(skip_serializing_if = "Usage::is_zero")]
    pub sidechain: Usage,
    /// Claude Code: each counted call that has both ids, so that a report
    /// over several sessions counts a call once even when Claude Code wrote
    /// it into more than one file (resumed sessions, worktree copies).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
}

/// One counted Claude Code call: `"{message.id}:{requestId}"`, model, UTC
/// day, input, output, cache-creation and cache-read tokens. Stored as one
/// tab-separated string, so that a session's metadata holding thousands of
/// them stays small to write and to read back (one string each, not eight
/// JSON values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Call(
    pub String,
    pub String,
    pub String,
    pub u64,
    pub u64,
    pub u64,
    pub u64,
);

impl From<Call> for String {
    fn from(c: Call) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            c.0, c.1, c.2, c.3, c.4, c.5, c.6
        )
    }
}

impl TryFrom<String> for Call {
    type Error = String;
    fn try_from(s: String) -> Result<Call, String> {
        let f: Vec<&str> = s.split('\t').collect();
        let n = |i: usize| {
            f.get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| format!("call {s:?}: field {} is not a count", i + 1))
        };
        if f.len() != 7 {
            return Err(format!("call {s:?}: expected 7 tab-separated fields"));
        }
        Ok(Call(
            f[0].to_string(),
            f[1].to_string(),
            f[2].to_string(),
            n(3)?,
            n(4)?,
            n(5)?,
            n(6)?,
        ))
    }
}

impl Call {
    /// The call's key: `"{message.id}:{requestId}"`.
    pub fn key(&self) -> &str {
        &self.0
    }

    /// Its usage, as counted.
    pub fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.3,
            output_tokens: self.4,
            cache_creation_input_tokens: self.5,
            cache_read_input_tokens: self.6,
            total_tokens: self.3 + self.4 + self.5 + self.6,
            ..Usage::default()
        }
    }
}

impl UsageBook {
    /// Takes back a call counted twice (found again in another session's
    /// file): its usage leaves its model and day.
    pub fn remove(&mut self, call: &Call) {
        let u = call.usage();
        let sub = |slot: Option<&mut Usage>| {
            if let Some(t) = slot {
                *t = t.minus(&u);
            }
        };
        sub(self.by_model.get_mut(&call.1));
        sub(self
            .by_day
            .get_mut(&call.2)
            .and_then(|d| d.get_mut(&call.1)));
    }

    /// Counts `u` for `model` on the day of `timestamp`.
    pub fn add(&mut self, model: Option<&str>, timestamp: Option<&str>, u: Usage) {
        let model = model.filter(|m| !m.is_empty()).unwrap_or("unknown");
        *self.by_model.entry(model.to_string()).or_default() += u;
        *self
            .by_day
            .entry(day_of(timestamp))
            .or_default()
            .entry(model.to_string())
            .or_default() += u;
    }

    /// Everything, all models together.
    pub fn total(&self) -> Usage {
        let mut t = Usage::default();
        for u in self.by_model.values() {
            t += *u;
        }
        t
    }

    /// Adds another book (a subagent's, to roll it up into its session).
    pub fn merge(&mut self, other: &UsageBook) {
        for (m, u) in &other.by_model {
            *self.by_model.entry(m.clone()).or_default() += *u;
        }
        for (d, models) in &other.by_day {
            let day = self.by_day.entry(d.clone()).or_default();
            for (m, u) in models {
                *day.entry(m.clone()).or_default() += *u;
            }
        }
        self.sidechain += other.sidechain;
    }
}

/// The UTC day of an RFC 3339 timestamp, `unknown` when there is none.
pub fn day_of(timestamp: Option<&str>) -> String {
    timestamp
        .and_then(crate::clock::parse)
        .map(|ts| ts.to_string().chars().take(10).collect())
        .unwrap_or_else(|| "unknown".to_string())
}

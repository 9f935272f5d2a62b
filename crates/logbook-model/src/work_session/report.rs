//! What a session reports about itself: its indicator, how long it ran,
//! the JSON `status` prints, and the seed's token report.

use jiff::Timestamp;
use serde::Serialize;
use serde_json::Value;

use super::record::{SessionStatus, WorkSession};
use crate::clock;

/// The status indicator of the seed's `status` and `list` layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Indicator {
    /// On track.
    Active,
    /// Blocked or failed: its status says so, or its workflow holds a
    /// blocked or failed invocation not yet taken up again.
    Blocked,
    /// Over 80 % of the budget.
    Warning,
    /// Over 95 % of the budget.
    Critical,
    /// Paused.
    Paused,
    /// Closed.
    Closed,
}

impl Indicator {
    /// The word used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Indicator::Active => "active",
            Indicator::Blocked => "blocked",
            Indicator::Warning => "warning",
            Indicator::Critical => "critical",
            Indicator::Paused => "paused",
            Indicator::Closed => "closed",
        }
    }

    /// The seed's visual indicator.
    pub fn emoji(self) -> &'static str {
        match self {
            Indicator::Active => "🟢",
            Indicator::Blocked => "🔴",
            Indicator::Warning => "🟡",
            Indicator::Critical => "🔴",
            Indicator::Paused => "⏸️",
            Indicator::Closed => "✅",
        }
    }
}

impl WorkSession {
    /// current / max × 100 (0 when there is no budget).
    pub fn percentage(&self) -> f64 {
        if self.tokens.max == 0 {
            0.0
        } else {
            self.tokens.current as f64 * 100.0 / self.tokens.max as f64
        }
    }

    /// The seed's indicator: paused/closed by status; red when blocked or
    /// failed (a `blocked` or `failed` status another tool wrote, or a
    /// blocked or failed invocation in the workflow); else by budget use
    /// (yellow above 80 %, red above 95 %).
    pub fn indicator(&self) -> Indicator {
        match &self.status {
            SessionStatus::Closed => Indicator::Closed,
            SessionStatus::Paused => Indicator::Paused,
            SessionStatus::Other(s)
                if s.eq_ignore_ascii_case("blocked") || s.eq_ignore_ascii_case("failed") =>
            {
                Indicator::Blocked
            }
            _ if self.workflow_blocked => Indicator::Blocked,
            _ => super::cost::level(self.percentage() / 100.0),
        }
    }

    /// How long the session ran: from `created` to now, or to its close
    /// (`last_updated`, the close being its last write) once closed.
    pub fn duration(&self, now: Timestamp) -> Option<String> {
        let created = clock::parse(&self.created)?;
        let end = match self.status {
            SessionStatus::Closed => clock::parse(&self.last_updated).unwrap_or(now),
            _ => now,
        };
        Some(clock::duration(created, end))
    }

    /// The record as JSON plus the computed `indicator` and `percentage`, the
    /// shape `start`, `resume` and `status` print with `--json`.
    pub fn to_json(&self) -> crate::Result<Value> {
        let mut v = crate::to_json("work session", self)?;
        if let Value::Object(m) = &mut v {
            m.insert("indicator".into(), self.indicator().as_str().into());
            m.insert(
                "percentage".into(),
                serde_json::json!((self.percentage() * 10.0).round() / 10.0),
            );
        }
        Ok(v)
    }

    /// The token report behind `tokens` and `savings`.
    pub fn token_report(&self) -> TokenReport {
        let t = &self.tokens;
        // Both are at most MAX_TOKENS, so this cannot overflow.
        let total = t.current.saturating_add(t.saved);
        TokenReport {
            session_id: self.session_id.clone(),
            max: t.max,
            current: t.current,
            peak: t.peak,
            remaining: t.max.saturating_sub(t.current),
            percentage: self.percentage(),
            agents: self
                .agents_spawned
                .iter()
                .map(|a| AgentTokens {
                    id: a.id.clone(),
                    agent_type: a.agent_type.clone(),
                    tokens_used: a.tokens_used,
                })
                .collect(),
            saved: t.saved,
            total_without_isolation: total,
            savings_percentage: if total == 0 {
                0.0
            } else {
                t.saved as f64 * 100.0 / total as f64
            },
            exceeds_limit_by: total.saturating_sub(t.max),
            indicator: self.indicator(),
        }
    }
}

/// Figures of the seed's `tokens` and `savings` reports.
#[derive(Debug, Clone, Serialize)]
pub struct TokenReport {
    /// The session reported on.
    pub session_id: String,
    /// Budget.
    pub max: u64,
    /// Main-session usage.
    pub current: u64,
    /// Highest main-session usage.
    pub peak: u64,
    /// Budget left.
    pub remaining: u64,
    /// current / max × 100.
    pub percentage: f64,
    /// Each spawned agent's isolated usage.
    pub agents: Vec<AgentTokens>,
    /// Tokens kept out of the main context.
    pub saved: u64,
    /// "Total Consumed (if no isolation)": current + saved.
    pub total_without_isolation: u64,
    /// saved / total × 100.
    pub savings_percentage: f64,
    /// How far the total would overrun the budget without isolation (0: fits).
    pub exceeds_limit_by: u64,
    /// The session's indicator.
    pub indicator: Indicator,
}

/// One line of the report's "Subprocess Agents".
#[derive(Debug, Clone, Serialize)]
pub struct AgentTokens {
    /// Agent id.
    pub id: String,
    /// Agent type.
    #[serde(rename = "type")]
    pub agent_type: String,
    /// Its usage.
    pub tokens_used: u64,
}

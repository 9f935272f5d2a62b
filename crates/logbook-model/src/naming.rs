//! Display names of runs, both conventions of seed 000, as pure functions of
//! (manifest, now, time zone) so they are computed fresh at read time and
//! tests can pin the clock:
//!
//! - the folder label (Story 5.2.1):
//!   `Alex the Facilitator - intake-app (Oct 6, 2025, 5:09 PM)` or
//!   `… (In Progress)`;
//! - the `displayName` (Story 6.3): `{smart timestamp} - {summary}`, e.g.
//!   `Yday 2:30p - intake-app: Application Development`.

use jiff::Timestamp;
use jiff::civil::{Date, Weekday};
use jiff::tz::TimeZone;
use serde_json::Value;

use crate::run::{Manifest, Run, RunEntry, RunStatus};

/// Summaries longer than this are cut to [`TRUNCATE_TO`] characters + `...`.
pub const SUMMARY_MAX: usize = 35;
/// How many characters of a long summary are kept before `...`.
pub const TRUNCATE_TO: usize = 32;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month(d: Date) -> &'static str {
    MONTHS[usize::try_from(d.month() - 1).unwrap_or(0)]
}

fn weekday(d: Date) -> &'static str {
    match d.weekday() {
        Weekday::Monday => "Mon",
        Weekday::Tuesday => "Tue",
        Weekday::Wednesday => "Wed",
        Weekday::Thursday => "Thu",
        Weekday::Friday => "Fri",
        Weekday::Saturday => "Sat",
        Weekday::Sunday => "Sun",
    }
}

fn hour12(h: i8) -> i8 {
    match h % 12 {
        0 => 12,
        x => x,
    }
}

/// The folder label shown instead of the UUID: running runs say
/// `(In Progress)`, others carry the local date of `completed_at`, else
/// `started_at`.
pub fn folder_label(m: &Manifest, tz: &TimeZone) -> String {
    let who = m.agent_label();
    if m.execution.status == RunStatus::Running {
        return format!("{who} - {} (In Progress)", m.workflow.name);
    }
    let when = m.completed_at().unwrap_or_else(|| m.started_at());
    format!("{who} - {} ({})", m.workflow.name, long_date(when, tz))
}

/// What `find --json` prints for a run, display names computed for `now`.
pub fn run_entry(run: &Run, now: Timestamp, tz: &TimeZone) -> RunEntry {
    if run.manifest.is_absent() {
        // Seed 000: a folder without a manifest shows as its UUID.
        return RunEntry {
            session_id: run.id.to_string(),
            folder: run.folder.clone(),
            display_name: run.id.to_string(),
            label: run.id.to_string(),
            manifest: run.manifest.clone(),
        };
    }
    RunEntry {
        session_id: run.manifest.session_id.clone(),
        folder: run.folder.clone(),
        display_name: display_name(&run.manifest, now, tz),
        label: folder_label(&run.manifest, tz),
        manifest: run.manifest.clone(),
    }
}

/// `Oct 6, 2025, 5:09 PM` in `tz`.
pub fn long_date(ts: Timestamp, tz: &TimeZone) -> String {
    let z = ts.to_zoned(tz.clone());
    format!(
        "{} {}, {}, {}:{:02} {}",
        month(z.date()),
        z.day(),
        z.year(),
        hour12(z.hour()),
        z.minute(),
        if z.hour() < 12 { "AM" } else { "PM" }
    )
}

/// Story 6.3's smart timestamp of `ts` seen at `now` in `tz`: `2:30p` today,
/// `Yday 2:30p`, `Mon 2:30p` within the current Monday-to-Sunday week,
/// otherwise `Oct 5`.
pub fn smart_timestamp(ts: Timestamp, now: Timestamp, tz: &TimeZone) -> String {
    let z = ts.to_zoned(tz.clone());
    let today = now.to_zoned(tz.clone()).date();
    let day = z.date();
    let time = format!(
        "{}:{:02}{}",
        hour12(z.hour()),
        z.minute(),
        if z.hour() < 12 { "a" } else { "p" }
    );
    if day == today {
        return time;
    }
    if today.yesterday().is_ok_and(|y| y == day) {
        return format!("Yday {time}");
    }
    let from_monday = i64::from(today.weekday().to_monday_zero_offset());
    let monday = today
        .checked_sub(jiff::Span::new().days(from_monday))
        .unwrap_or(today);
    let sunday = monday
        .checked_add(jiff::Span::new().days(6))
        .unwrap_or(today);
    if monday <= day && day <= sunday {
        return format!("{} {time}", weekday(day));
    }
    format!("{} {}", month(day), day.day())
}

/// Story 6.3's summary, untruncated: a non-empty `userSummary`; else, when
/// `inputs` is present, `"{workflow.name}: {x}"` with x the `project_name`,
/// else `category`, else the first non-empty string input (none: the bare
/// workflow name); else `workflow.name`; else `agent.title`.
pub fn summary(m: &Manifest) -> String {
    if let Some(s) = m.user_summary.as_deref().filter(|s| !s.trim().is_empty()) {
        return s.to_string();
    }
    let workflow = m.workflow.name.trim();
    if let Some(inputs) = &m.inputs {
        let non_empty = |v: &Value| {
            v.as_str()
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
        };
        let x = inputs
            .get("project_name")
            .and_then(non_empty)
            .or_else(|| inputs.get("category").and_then(non_empty))
            .or_else(|| inputs.values().find_map(non_empty));
        if !workflow.is_empty() {
            return match x {
                Some(x) => format!("{workflow}: {x}"),
                None => workflow.to_string(),
            };
        }
    }
    if !workflow.is_empty() {
        return workflow.to_string();
    }
    m.agent_label().to_string()
}

/// Cuts text longer than 35 characters to at most its first 32 + `...`,
/// at a word boundary: `I need to purchase 10 laptops...`, not `… laptops
/// fo...`. A cut keeps at least half of the 32 characters, so one very long
/// word is cut inside it rather than leaving almost nothing.
pub fn truncate(s: &str) -> String {
    if s.chars().count() <= SUMMARY_MAX {
        return s.to_string();
    }
    let head: String = s.chars().take(TRUNCATE_TO).collect();
    let next_is_break = s.chars().nth(TRUNCATE_TO).is_some_and(char::is_whitespace);
    let mut out = if next_is_break {
        head.as_str()
    } else {
        match head.rfind(char::is_whitespace) {
            Some(i) if head[..i].chars().count() >= TRUNCATE_TO / 2 => &head[..i],
            _ => head.as_str(),
        }
    }
    .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-'))
    .to_string();
    if out.is_empty() {
        out = head;
    }
    out.push_str("...");
    out
}

/// `190000` → `190,000`: how every face and every summary prints a count
/// of tokens, as the seed's reports do.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first line of `text` in at most `max` characters for a one-line
/// listing (a prompt, a message), cut between words with `…` where text was
/// left out (never inside a word or a UTF-8 character; a single word longer
/// than half the room is the one exception, cut after its first characters).
pub fn shorten(text: &str, max: usize) -> String {
    let mut lines = text.trim().lines();
    let first = lines.next().unwrap_or_default().trim_end();
    let more = lines.any(|l| !l.trim().is_empty());
    if first.chars().count() <= max && !more {
        return first.to_string();
    }
    let room = max.saturating_sub(1).max(1);
    let head: String = first.chars().take(room).collect();
    let whole = head.len() == first.len() || first[head.len()..].starts_with(char::is_whitespace);
    let cut = if whole {
        head.as_str()
    } else {
        match head.rfind(char::is_whitespace) {
            Some(i) if head[..i].chars().count() >= room / 2 => &head[..i],
            _ => head.as_str(),
        }
    };
    let cut = cut.trim_end();
    let trimmed =
        cut.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '-'));
    format!("{}…", if trimmed.is_empty() { cut } else { trimmed })
}

/// `{smart timestamp of started_at} - {summary, truncated}`.
pub fn display_name(m: &Manifest, now: Timestamp, tz: &TimeZone) -> String {
    format!(
        "{} - {}",
        smart_timestamp(m.started_at(), now, tz),
        truncate(&summary(m))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn manifest(extra: Value) -> Manifest {
        let mut base = json!({
            "session_id": "a3f2c9d1-4b5e-6789-01ab-cdef12345678",
            "agent": {"name": "alex", "title": "Alex the Facilitator"},
            "workflow": {"name": "intake-app"},
            "execution": {"started_at": "2025-10-06T17:09:00Z", "status": "running"},
        });
        if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
            for (k, v) in e {
                b.insert(k, v);
            }
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn smart_timestamps() {
        let utc = TimeZone::UTC;
        // Wednesday 2025-10-08 18:00 UTC.
        let now = ts("2025-10-08T18:00:00Z");
        let cases = [
            ("same day afternoon", "2025-10-08T14:30:00Z", "2:30p"),
            ("same day morning", "2025-10-08T09:05:00Z", "9:05a"),
            ("midnight", "2025-10-08T00:00:00Z", "12:00a"),
            ("noon", "2025-10-08T12:00:00Z", "12:00p"),
            ("yesterday", "2025-10-07T14:30:00Z", "Yday 2:30p"),
            ("earlier this week", "2025-10-06T14:30:00Z", "Mon 2:30p"),
            ("later this week", "2025-10-12T23:59:00Z", "Sun 11:59p"),
            ("last week", "2025-10-05T14:30:00Z", "Oct 5"),
            ("next year", "2026-10-07T14:30:00Z", "Oct 7"),
            ("last year same date", "2024-10-08T14:30:00Z", "Oct 8"),
        ];
        for (name, when, want) in cases {
            assert_eq!(smart_timestamp(ts(when), now, &utc), want, "{name}");
        }
        // Monday: yesterday (Sunday) is last week but still "Yday".
        assert_eq!(
            smart_timestamp(ts("2025-10-05T08:00:00Z"), ts("2025-10-06T09:00:00Z"), &utc),
            "Yday 8:00a"
        );
    }

    #[test]
    fn smart_timestamp_uses_the_local_zone() {
        let ny = TimeZone::get("America/New_York").unwrap();
        // 02:30 UTC on the 9th is 22:30 on the 8th in New York.
        let now = ts("2025-10-09T03:00:00Z");
        assert_eq!(
            smart_timestamp(ts("2025-10-09T02:30:00Z"), now, &ny),
            "10:30p"
        );
        assert_eq!(
            smart_timestamp(ts("2025-10-09T02:30:00Z"), now, &TimeZone::UTC),
            "2:30a"
        );
    }

    #[test]
    fn folder_labels() {
        let utc = TimeZone::UTC;
        let cases = [
            (json!({}), "Alex the Facilitator - intake-app (In Progress)"),
            (
                json!({"agent": {"name": "pixel"}}),
                "pixel - intake-app (In Progress)",
            ),
            (
                json!({"execution": {"started_at": "2025-10-06T17:00:00Z", "completed_at": "2025-10-06T17:09:30Z", "status": "completed"}}),
                "Alex the Facilitator - intake-app (Oct 6, 2025, 5:09 PM)",
            ),
            (
                json!({"execution": {"started_at": "2025-10-05T00:05:00Z", "status": "failed"}}),
                "Alex the Facilitator - intake-app (Oct 5, 2025, 12:05 AM)",
            ),
        ];
        for (extra, want) in cases {
            assert_eq!(folder_label(&manifest(extra), &utc), want);
        }
        let ny = TimeZone::get("America/New_York").unwrap();
        let m = manifest(
            json!({"execution": {"started_at": "2025-10-06T21:09:00Z", "status": "completed"}}),
        );
        assert_eq!(
            folder_label(&m, &ny),
            "Alex the Facilitator - intake-app (Oct 6, 2025, 5:09 PM)"
        );
    }

    #[test]
    fn summaries() {
        let cases = [
            (
                "userSummary wins",
                json!({"userSummary": "Buy laptops", "inputs": {"category": "X"}}),
                "Buy laptops",
            ),
            (
                "blank userSummary skipped",
                json!({"userSummary": "  ", "inputs": {"category": "X"}}),
                "intake-app: X",
            ),
            (
                "project_name first",
                json!({"inputs": {"category": "X", "project_name": "Apollo"}}),
                "intake-app: Apollo",
            ),
            (
                "then category",
                json!({"inputs": {"a": "first", "category": "X"}}),
                "intake-app: X",
            ),
            (
                "then first string",
                json!({"inputs": {"n": 3, "a": "", "b": "first"}}),
                "intake-app: first",
            ),
            (
                "inputs without strings",
                json!({"inputs": {"n": 3}}),
                "intake-app",
            ),
            ("no inputs", json!({}), "intake-app"),
            (
                "no workflow name",
                json!({"workflow": {"name": ""}}),
                "Alex the Facilitator",
            ),
        ];
        for (name, extra, want) in cases {
            assert_eq!(summary(&manifest(extra)), want, "{name}");
        }
    }

    #[test]
    fn shortened_lines_end_between_words() {
        assert_eq!(shorten("Research the market", 60), "Research the market");
        assert_eq!(
            shorten("Research the market for ergonomic keyboards", 24),
            "Research the market for…"
        );
        assert_eq!(shorten("Plan\nthen build", 60), "Plan…");
        assert_eq!(
            shorten("budget approved, 10 laptops, sales", 30),
            "budget approved, 10 laptops…"
        );
        // Multi-byte text: whole characters and whole words only.
        let s = shorten("Überprüfung der Lösungsvorschläge für Straßenbäume", 30);
        assert_eq!(s, "Überprüfung der…");
        assert!(s.chars().count() <= 30);
        let long = "x".repeat(100);
        assert_eq!(shorten(&long, 10).chars().count(), 10);
    }

    #[test]
    fn truncation() {
        assert_eq!(truncate("a".repeat(35).as_str()), "a".repeat(35));
        assert_eq!(
            truncate("a".repeat(36).as_str()),
            format!("{}...", "a".repeat(32))
        );
        assert_eq!(truncate("é".repeat(40).as_str()).chars().count(), 35);
        let m = manifest(json!({"userSummary": "I need to purchase 10 laptops for the new team"}));
        assert_eq!(
            display_name(&m, ts("2025-10-06T20:00:00Z"), &TimeZone::UTC),
            "5:09p - I need to purchase 10 laptops..."
        );
        for (text, want) in [
            // The cut falls right before a space: the whole word stays.
            (
                "I need to purchase 10 laptops fo next week",
                "I need to purchase 10 laptops fo...",
            ),
            (
                "Review the vendor list, then call each of them",
                "Review the vendor list, then...",
            ),
            (
                "Budget: 12000 EUR for laptops, monitors and docks",
                "Budget: 12000 EUR for laptops...",
            ),
            (
                "Hi supercalifragilisticexpialidociousness",
                "Hi supercalifragilisticexpialido...",
            ),
        ] {
            let got = truncate(text);
            assert_eq!(got, want, "{text}");
            assert!(got.chars().count() <= SUMMARY_MAX, "{got}");
        }
    }
}

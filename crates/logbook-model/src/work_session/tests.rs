//! Unit tests of the work session rules: token migration, indicators,
//! report figures, prefixes and near-miss milestone names.

use jiff::Timestamp;

use super::*;

#[test]
fn legacy_tokens_migrate() {
    let t: Tokens = serde_saphyr::from_str(
        "saved_by_isolation: 145000\nmax_limit: 200000\ncurrent: 10\npeak: 5\n",
    )
    .unwrap();
    assert_eq!(t.saved, 145_000);
    assert_eq!(t.max, 200_000);
    assert_eq!(t.peak, 10);
    assert!(t.extra.is_empty());
}

#[test]
fn missing_max_is_zero_until_loaded() {
    let t: Tokens = serde_saphyr::from_str("max: null\ncurrent: '45,000'\n").unwrap();
    assert_eq!(t.max, 0);
    assert_eq!(t.current, 45_000);
}

#[test]
fn near_names_are_typos_far_ones_are_not() {
    let names = ["Design", "Requirements Complete", "Ship"];
    assert_eq!(nearest("Desing", names), Some("Design"));
    assert_eq!(nearest("design", names), Some("Design"));
    assert_eq!(
        nearest("requirements compete", names),
        Some("Requirements Complete")
    );
    assert_eq!(nearest("Deploy", names), None);
    assert_eq!(nearest("Shop", names), Some("Ship"));
    assert_eq!(nearest("X", names), None);
}

#[test]
fn a_closed_session_lasts_until_its_close() {
    let mut ws: WorkSession = serde_saphyr::from_str(
        "session_id: SES202501-ACME-AUDIT\ncreated: 2025-01-15T10:00:00Z\nlast_updated: 2025-01-15T10:05:00Z\nstatus: closed\n",
    )
    .unwrap();
    let later: Timestamp = "2025-01-17T10:00:00Z".parse().unwrap();
    assert_eq!(ws.duration(later).as_deref(), Some("5m"));
    ws.status = SessionStatus::Active;
    assert_eq!(ws.duration(later).as_deref(), Some("2d 0h"));
}

#[test]
fn red_means_blocked_or_failed() {
    let mut ws: WorkSession =
        serde_saphyr::from_str("session_id: SES202501-ACME-AUDIT\nstatus: blocked\n").unwrap();
    ws.tokens.max = 100;
    assert_eq!(ws.indicator(), Indicator::Blocked);
    ws.status = SessionStatus::Other("failed".into());
    assert_eq!(ws.indicator(), Indicator::Blocked);
    ws.status = SessionStatus::Active;
    assert_eq!(ws.indicator(), Indicator::Active);
    ws.workflow_blocked = true;
    assert_eq!(ws.indicator(), Indicator::Blocked);
    assert_eq!(ws.indicator().emoji(), "🔴");
    assert_eq!(ws.to_json().unwrap()["indicator"], "blocked");
}

#[test]
fn prefixes() {
    assert!(validate_prefix("ENGX").is_ok());
    assert!(validate_prefix("E").is_err());
}

#[test]
fn seed_report_figures() {
    let mut ws: WorkSession = serde_saphyr::from_str(
        "session_id: SES202501-ACME-AUDIT\ntokens:\n  max: 150000\n  current: 45000\n  saved: 145000\n",
    )
    .unwrap();
    ws.status = SessionStatus::Active;
    let r = ws.token_report();
    assert_eq!(r.total_without_isolation, 190_000);
    assert_eq!(r.exceeds_limit_by, 40_000);
    assert_eq!(r.savings_percentage.round(), 76.0);
    assert_eq!(r.percentage.round(), 30.0);
}

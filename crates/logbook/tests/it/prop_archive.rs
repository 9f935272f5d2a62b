//! Property tests of what the archive reads from files people edit: the
//! ages of `logbook.yaml`'s `retention:` and `--older-than`, and the
//! tombstones of deleted runs, which other tools may read and extend.
//! Reading never panics; a tombstone's unknown keys survive a rewrite.

use logbook::model::archive::{Age, Tombstone};
use proptest::prelude::*;
use serde_json::{Value, json};

fn tombstone() -> Value {
    json!({
        "id": "3f2a9c1d-0000-4000-8000-000000000001",
        "folder": "/p/docs/agent-outputs/3f2a9c1d-0000-4000-8000-000000000001",
        "agent": "casey",
        "workflow": "deep-dive",
        "status": "completed",
        "started_at": "2025-01-01T00:00:00.000Z",
        "completed_at": "2025-01-01T00:01:00.000Z",
        "deleted_at": "2026-01-01T00:00:00.000Z",
        "by": "dana",
        "manifest": {"session_id": "3f2a9c1d-0000-4000-8000-000000000001", "x": [1, 2]}
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_age_never_panics_and_reads_back_as_given(s in "\\PC{0,12}") {
        if let Ok(age) = Age::parse(&s) {
            prop_assert_eq!(Age::parse(&age.to_string()), Ok(age));
            prop_assert!(age.span.as_secs() > 0);
        }
    }

    #[test]
    // Up to 5,000 weeks: within the hundred years an age may span.
    fn a_whole_count_and_unit_is_an_age(n in 1u64..5_000, unit in prop::sample::select(vec!['m', 'h', 'd', 'w'])) {
        let age = Age::parse(&format!("{n}{unit}")).unwrap();
        prop_assert_eq!(age.count, n);
        prop_assert_eq!(age.unit, unit);
    }

    #[test]
    fn a_tombstone_never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = serde_json::from_slice::<Tombstone>(&bytes);
    }

    #[test]
    fn a_tombstones_unknown_keys_survive_a_rewrite(
        key in "[a-z_]{1,12}",
        value in prop_oneof![any::<i64>().prop_map(Value::from), "\\PC{0,20}".prop_map(Value::from)],
    ) {
        let mut t = tombstone();
        prop_assume!(t.get(&key).is_none() && key != "linked_from");
        t[&key] = value.clone();
        let read: Tombstone = serde_json::from_value(t.clone()).unwrap();
        let again = serde_json::to_value(&read).unwrap();
        prop_assert_eq!(&again[&key], &value);
        prop_assert_eq!(&again["manifest"], &t["manifest"]);
    }
}

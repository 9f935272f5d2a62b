//! Costs worked out by hand from the shipped table's rates.

use super::*;

fn usage(input: u64, output: u64, write: u64, read: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        cache_creation_input_tokens: write,
        cache_read_input_tokens: read,
        total_tokens: input + output + write + read,
        ..Usage::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn shipped_table_reads() {
    let t = PriceTable::from_json(SHIPPED, "x", "y").unwrap();
    assert!(t.models.len() > 100, "{}", t.models.len());
    assert!(t.id.source.contains("LiteLLM"), "{:?}", t.id);
    assert_eq!(t.id.date.len(), 10);
    assert_eq!(PriceTable::shipped(), t);
}

#[test]
fn claude_call_with_cache_writes_and_reads() {
    // claude-sonnet-4-5: input $3/M, output $15/M, 5-minute write $3.75/M,
    // cache read $0.30/M.
    let t = PriceTable::shipped();
    let u = usage(1_000, 2_000, 10_000, 100_000);
    let c = t.cost_of_call("claude-sonnet-4-5-20250929", &u).unwrap();
    // 1000*3 + 2000*15 + 10000*3.75 + 100000*0.3 = 3000+30000+37500+30000 = 100500 µ$
    assert!(close(c.usd, 0.1005), "{}", c.usd);
    assert!(c.cache_write_at_5m);
    assert!(!c.tier_unknown);
}

#[test]
fn long_context_tier_prices_the_whole_call() {
    // claude-sonnet-4 (Bedrock's list, Anthropic's price): above 200k
    // prompt tokens input $6/M, output $22.50/M, write $7.50/M, read $0.60/M.
    let t = PriceTable::shipped();
    let below = usage(100_000, 1_000, 0, 100_000);
    let c = t.cost_of_call("claude-sonnet-4-20250514", &below).unwrap();
    // 100000*3 + 1000*15 + 100000*0.3 = 300000+15000+30000 µ$
    assert!(close(c.usd, 0.345), "{}", c.usd);
    let above = usage(100_000, 1_000, 1, 100_000);
    let c = t.cost_of_call("claude-sonnet-4-20250514", &above).unwrap();
    // 100000*6 + 1000*22.5 + 1*7.5 + 100000*0.6 = 600000+22500+7.5+60000 µ$
    assert!(close(c.usd, 0.6825075), "{}", c.usd);
    // The same counts summed over calls cannot say a call passed 200k.
    let c = t.cost_of_total("claude-sonnet-4-20250514", &above).unwrap();
    assert!(c.tier_unknown);
}

#[test]
fn codex_cached_input_and_tiers() {
    // gpt-5.4: input $2.50/M, cache read $0.25/M, output $15/M; above 272k:
    // $5, $0.50, $22.50.
    let t = PriceTable::shipped();
    let u = Usage {
        input_tokens: 300_000,
        cached_input_tokens: 200_000,
        output_tokens: 10_000,
        reasoning_output_tokens: 4_000,
        total_tokens: 310_000,
        ..Usage::default()
    };
    let c = t.cost_of_call("gpt-5.4", &u).unwrap();
    // 100000*5 + 200000*0.5 + 10000*22.5 = 500000+100000+225000 µ$
    assert!(close(c.usd, 0.825), "{}", c.usd);
    assert!(!c.cache_write_at_5m);
}

#[test]
fn names_as_agents_write_them() {
    let t = PriceTable::shipped();
    for name in [
        "claude-opus-4-1",
        "anthropic/claude-opus-4-1-20250805",
        "claude-sonnet-4-5-20250929[1m]",
        "claude-sonnet-4.5",
        "gemini/gemini-2.5-pro",
        "openai/gpt-5-codex",
    ] {
        assert!(t.find(name).is_some(), "{name}");
    }
    assert_eq!(
        t.find("claude-opus-4-1").unwrap().0,
        "claude-opus-4-1-20250805"
    );
    assert!(t.find("unknown").is_none());
    assert!(t.find("<synthetic>").is_none());
}

#[test]
fn unpriced_is_none_but_nothing_costs_nothing() {
    let t = PriceTable::shipped();
    assert!(
        t.cost_of_call("made-up-model", &usage(1, 1, 0, 0))
            .is_none()
    );
    assert_eq!(
        t.cost_of_call("made-up-model", &Usage::default()),
        Some(Cost::default())
    );
}

#[test]
fn a_table_that_prices_nothing_is_refused() {
    let e = PriceTable::from_json(r#"{"some-model": {"input_cost_per_token": 1}}"#, "f", "d");
    assert!(e.unwrap_err().0.contains("LiteLLM"));
    assert!(PriceTable::from_json("[1]", "f", "d").is_err());
    assert!(PriceTable::from_json("{", "f", "d").is_err());
}

#[test]
fn stored_json_keeps_only_prices_and_names_its_source() {
    let text = r#"{"gpt-5": {"litellm_provider": "openai", "mode": "chat",
        "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
        "input_cost_per_token_batches": 5e-7, "max_tokens": 5,
        "input_cost_per_token_above_272k_tokens": 2e-6},
        "dall-e": {"litellm_provider": "openai", "mode": "image_generation"}}"#;
    let id = TableId {
        source: "file.json".into(),
        date: "2026-01-02".into(),
    };
    let stored = PriceTable::stored_json(text, &id).unwrap();
    let t = PriceTable::from_json(&stored, "other", "other").unwrap();
    assert_eq!(t.id, id);
    assert_eq!(t.models.len(), 1);
    let p = &t.models["gpt-5"];
    assert_eq!(p.tiers.len(), 1);
    assert_eq!(p.tiers[0].above_tokens, 272_000);
    assert!(!stored.contains("batches"));
}

proptest::proptest! {
    #[test]
    fn any_text_reads_or_is_refused(text in ".{0,200}") {
        let _ = PriceTable::from_json(&text, "s", "d");
    }

    #[test]
    fn cost_is_never_negative(a in 0u64..1_000_000_000, b in 0u64..1_000_000, c in 0u64..1_000_000, d in 0u64..1_000_000_000, cached in 0u64..2_000_000_000) {
        let t = PriceTable::shipped();
        let mut u = usage(a, b, c, d);
        u.cached_input_tokens = cached;
        for m in ["claude-sonnet-4-5", "gpt-5.4", "gemini-2.5-pro"] {
            let cost = t.cost_of_call(m, &u).unwrap();
            proptest::prop_assert!(cost.usd >= 0.0);
        }
    }
}

use super::samples::{random, sample};
use super::*;

fn kinds(text: &str) -> Vec<Kind> {
    find(text).into_iter().map(|f| f.kind).collect()
}

#[test]
fn every_rule_compiles() {
    // 14 patterns for 12 kinds (OpenAI and GitHub have two shapes each);
    // private keys are found without one.
    assert_eq!(RULES.len(), 14);
}

#[test]
fn a_real_shaped_key_of_each_kind_is_found_in_prose_and_masked() {
    for kind in Kind::ALL {
        for seed in 1..4 {
            let (secret, planted) = sample(kind, seed);
            let text = format!("here it is: {planted}\nand more text after.");
            let found = find(&text);
            assert_eq!(found.len(), 1, "{kind}: {text:?} -> {found:?}");
            assert_eq!(found[0].kind, kind, "{text}");
            assert_eq!(found[0].secret, secret, "{kind}");
            assert_eq!(&text[found[0].range.clone()], secret);
            let masked = mask(&secret);
            assert!(masked.len() <= 4 + 3 + 2, "{masked}");
            assert!(!masked.contains(&secret[4..secret.len() - 2]));
            let redacted = redact(&text);
            assert!(!redacted.contains(&secret), "{kind}: {redacted}");
            assert!(
                redacted.contains(&format!("[REDACTED:{kind}]")),
                "{redacted}"
            );
        }
    }
}

#[test]
fn keys_are_found_in_common_surroundings() {
    let (key, _) = sample(Kind::AnthropicKey, 7);
    for text in [
        format!("ANTHROPIC_API_KEY={key}"),
        format!("export ANTHROPIC_API_KEY=\"{key}\""),
        format!("{{\"apiKey\":\"{key}\"}}"),
        format!("curl -H 'x-api-key: {key}' https://api.anthropic.com"),
        format!("`{key}`"),
        format!("({key})"),
    ] {
        assert_eq!(kinds(&text), [Kind::AnthropicKey], "{text}");
        assert!(!redact(&text).contains(&key));
    }
}

#[test]
fn look_alikes_do_not_match() {
    let cases = [
        // Placeholders and documentation shapes.
        "sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".to_string(),
        "sk-ant-api03-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX".to_string(),
        "sk-ant-api03-...".to_string(),
        "ghp_************************************".to_string(),
        // Names that start like a key.
        "sk-learn-is-a-python-library-for-machine-learning-and-more-stuff".to_string(),
        "task-ant-api03-".to_string() + &random(1, 60, b"abcdef0123456789"),
        "the_sk_live_example".to_string(),
        "AKIAsomethinglowercase1".to_string(),
        "AKIA1234".to_string(),
        // A hash glued to a prefix is part of something longer.
        format!("xghp_{}", random(2, 36, b"abcdef0123456789")),
        // A git commit, a UUID, a base64 blob without a name.
        "cf2bd9e1f0a7c3d4b5e6f708192a3b4c5d6e7f80".to_string(),
        "123e4567-e89b-42d3-a456-426614174000".to_string(),
        // Counters and references are not secrets.
        "max_tokens=4096".to_string(),
        "\"cache_read_input_tokens\": 123456789".to_string(),
        "password: ${DB_PASSWORD}".to_string(),
        "token = os.environ[\"GITHUB_TOKEN\"]".to_string(),
        "password=changeme".to_string(),
        "secret: <your secret here>".to_string(),
        "auth_file: /home/me/.config/auth.json".to_string(),
        "postgres://user:password@localhost/db".to_string(),
        "postgres://user@localhost/db".to_string(),
        "https://example.com/a:b@c".to_string(),
        // A JWT without a signature, a PEM header without a key.
        "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.".to_string(),
        "-----BEGIN RSA PRIVATE KEY----- goes first in the file".to_string(),
        "[REDACTED:anthropic-key]".to_string(),
    ];
    for text in cases {
        assert_eq!(find(&text), vec![], "{text}");
        assert_eq!(redact(&text), text);
    }
}

#[test]
fn a_key_split_across_json_escapes_is_found_and_redacted_whole() {
    let (key, _) = sample(Kind::AnthropicKey, 9);
    // `sk-ant-\u0061pi03…` as a log line holds it, and inside a string that
    // keeps that line (escaped twice).
    let once = key.replacen("api03", "\\u0061pi03", 1);
    let line = format!("{{\"text\":\"key {once} end\"}}");
    let found = find(&line);
    assert_eq!(found.len(), 1, "{line}");
    assert_eq!(found[0].kind, Kind::AnthropicKey);
    assert_eq!(found[0].secret, key);
    assert_eq!(&line[found[0].range.clone()], once);
    assert_eq!(
        redact(&line),
        "{\"text\":\"key [REDACTED:anthropic-key] end\"}"
    );
    let twice = serde_json::to_string(&line).unwrap();
    assert!(twice.contains("\\\\u0061pi03"));
    assert_eq!(kinds(&twice), [Kind::AnthropicKey]);
    assert!(!redact(&twice).contains("pi03"));
    // Every character escaped, surrogate pairs and `\/` included.
    let (gh, _) = sample(Kind::GithubToken, 3);
    let all: String = gh.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    assert_eq!(kinds(&format!("\"{all}\"")), [Kind::GithubToken]);
    let url = format!(
        "mysql:\\/\\/root:{}@db",
        sample(Kind::ConnectionPassword, 1).0
    );
    assert_eq!(kinds(&url), [Kind::ConnectionPassword]);
    // A JSON value decoded by serde holds the key whole.
    let v: Value = serde_json::from_str(&line).unwrap();
    let mut paths = vec![];
    each_string(&v, "", &mut |p, f| paths.push((p.to_string(), f[0].kind)));
    assert_eq!(paths, [("text".to_string(), Kind::AnthropicKey)]);
}

#[test]
fn a_multi_line_private_key_is_one_finding_even_when_cut_short() {
    let (pem, _) = sample(Kind::PrivateKey, 4);
    let text = format!("cat id_ed25519\n{pem}\n$ ls");
    assert_eq!(
        redact(&text),
        "cat id_ed25519\n[REDACTED:private-key]\n$ ls"
    );
    let cut = &pem[..pem.len() - 120];
    let text = format!("head: {cut}");
    assert_eq!(kinds(&text), [Kind::PrivateKey]);
    assert!(!redact(&text).contains(&cut[40..100]));
}

#[test]
fn connection_strings_lose_their_password_only() {
    let (pw, text) = sample(Kind::ConnectionPassword, 2);
    assert_eq!(
        redact(&format!("DATABASE_URL={text}")),
        "DATABASE_URL=postgres://app:[REDACTED:connection-password]@db.internal:5432/prod"
    );
    let url = format!("redis://:{pw}@cache:6379");
    // A user name may be empty in a URL, but then `[^…]+` wants one.
    let _ = find(&url);
    assert_eq!(
        kinds(&format!("https://deploy:{pw}@github.com/org/repo.git")),
        [Kind::ConnectionPassword]
    );
}

#[test]
fn json_values_under_secret_names_are_redacted_whole() {
    let (secret, _) = sample(Kind::AssignedSecret, 5);
    let mut v = serde_json::json!({
        "env": {"DB_PASSWORD": secret, "max_tokens": "8192abcdEFGH!", "user": "alice"},
        "list": [format!("token: {secret}")],
    });
    assert_eq!(redact_value(&mut v), 2);
    assert_eq!(v["env"]["DB_PASSWORD"], "[REDACTED:assigned-secret]");
    assert_eq!(v["env"]["max_tokens"], "8192abcdEFGH!");
    assert_eq!(v["list"][0], "token: [REDACTED:assigned-secret]");
    let text = serde_json::json!({"password": secret}).to_string();
    assert_eq!(
        redact_json_text(&text),
        "{\"password\":\"[REDACTED:assigned-secret]\"}"
    );
    assert!(matches!(redact_json_text("{\"a\":1}"), Cow::Borrowed(_)));
}

#[test]
fn masks_show_at_most_four_and_two_characters() {
    assert_eq!(mask("sk-ant-api03-abcdefghijklmnopqrstuvwxyz"), "sk-a...yz");
    assert_eq!(mask("abcdefghijk"), "ab...");
    assert_eq!(mask("abc"), "...");
}

#[test]
fn several_secrets_in_one_text_are_all_redacted_in_order() {
    let text: String = Kind::ALL
        .iter()
        .map(|k| format!("{} ; ", sample(*k, 11).1))
        .collect();
    let found = kinds(&text);
    let mut want = Kind::ALL.to_vec();
    want.sort_by_key(|k| text.find(&format!("{} ; ", sample(*k, 11).1)));
    assert_eq!(found, want);
    let redacted = redact(&text);
    for k in Kind::ALL {
        assert!(!redacted.contains(&sample(k, 11).0), "{k}: {redacted}");
    }
}

#[test]
fn a_private_key_inside_json_text_is_found_whole() {
    let (pem, _) = sample(Kind::PrivateKey, 31);
    let inner = serde_json::to_string(&format!("my private-key is {pem} ok")).unwrap();
    let attr = serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": format!("my private-key is {pem} ok")}]}]).to_string();
    for text in [inner, attr] {
        assert_eq!(kinds(&text), [Kind::PrivateKey], "{text}");
        let r = redact(&text);
        assert!(r.contains("[REDACTED:private-key] ok"), "{r}");
    }
}

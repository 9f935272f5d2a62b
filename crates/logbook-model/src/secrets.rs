//! Secrets in text: provider API keys, private keys, JWTs, passwords in
//! connection strings and high-entropy values assigned to secret-like
//! names. [`find`] says where they are, [`mask`] shows one without giving
//! it away (its first 4 and last 2 characters at most), and [`redact`] /
//! [`redact_value`] replace each with `[REDACTED:kind]` for whatever leaves
//! the machine (an OTLP export, the team catalog, a shared page).
//!
//! The rules are written from the providers' documented key formats, each
//! with a check that the variable part looks random, so a placeholder
//! (`sk-proj-xxxx…`, `AKIA…EXAMPLE` docs aside) or a kebab-case name that
//! happens to start like a key does not match.
//!
//! The trap: agent logs are JSON inside JSON. A key typed into a prompt
//! lands in a log line as `sk-ant-\u0061pi03…` or behind `\"`, and that
//! line is kept again as a JSON string. Text holding backslash escapes is
//! therefore also scanned decoded (up to [`UNESCAPE_LEVELS`] times), and a
//! secret found there is mapped back onto the escaped bytes, so redaction
//! removes the whole escaped run.
//!
//! ```
//! use logbook_model::secrets;
//! let key = concat!("sk-ant-api03-", "Zq8v3JmT0xWb5LrK9pYc2NdE7sHgA1uQ4iFo6VtMwXy3Rb8Ke5Ln0Pj2Ds7Gh");
//! let text = format!("export ANTHROPIC_API_KEY={key}");
//! assert_eq!(secrets::find(&text)[0].kind, secrets::Kind::AnthropicKey);
//! assert_eq!(secrets::redact(&text), "export ANTHROPIC_API_KEY=[REDACTED:anthropic-key]");
//! ```

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// How many times text is decoded as JSON string escapes to look for a
/// secret split by them (a log line kept as a string inside a string).
pub const UNESCAPE_LEVELS: usize = 3;

/// What a secret is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Anthropic API key (`sk-ant-api03-…`, `sk-ant-admin01-…`).
    AnthropicKey,
    /// OpenAI API key (`sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`, legacy `sk-…`).
    OpenaiKey,
    /// AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKeyId,
    /// AWS secret access key, next to `aws_secret_access_key`.
    AwsSecretKey,
    /// GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// GitLab personal access token (`glpat-…`).
    GitlabToken,
    /// Slack token (`xoxb-…`, `xoxp-…`…).
    SlackToken,
    /// Stripe live key (`sk_live_…`, `rk_live_…`).
    StripeKey,
    /// Google API key (`AIza…`).
    GoogleApiKey,
    /// A PEM private key block.
    PrivateKey,
    /// A signed JSON Web Token.
    Jwt,
    /// The password of a `scheme://user:password@host` URL.
    ConnectionPassword,
    /// A random-looking value assigned to a name like `password`,
    /// `secret` or `token`.
    AssignedSecret,
}

impl Kind {
    /// Every kind, in the order rules are tried.
    pub const ALL: [Kind; 13] = [
        Kind::PrivateKey,
        Kind::AnthropicKey,
        Kind::OpenaiKey,
        Kind::AwsAccessKeyId,
        Kind::AwsSecretKey,
        Kind::GithubToken,
        Kind::GitlabToken,
        Kind::SlackToken,
        Kind::StripeKey,
        Kind::GoogleApiKey,
        Kind::Jwt,
        Kind::ConnectionPassword,
        Kind::AssignedSecret,
    ];

    /// Its name in output and in `[REDACTED:…]`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AnthropicKey => "anthropic-key",
            Kind::OpenaiKey => "openai-key",
            Kind::AwsAccessKeyId => "aws-access-key-id",
            Kind::AwsSecretKey => "aws-secret-key",
            Kind::GithubToken => "github-token",
            Kind::GitlabToken => "gitlab-token",
            Kind::SlackToken => "slack-token",
            Kind::StripeKey => "stripe-key",
            Kind::GoogleApiKey => "google-api-key",
            Kind::PrivateKey => "private-key",
            Kind::Jwt => "jwt",
            Kind::ConnectionPassword => "connection-password",
            Kind::AssignedSecret => "assigned-secret",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One secret in a text: its kind and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// What it is.
    pub kind: Kind,
    /// Where it is in the text scanned (escapes included when it was found
    /// decoded).
    pub range: Range<usize>,
    /// The secret itself, decoded: what [`mask`] shows a little of.
    pub secret: String,
}

/// A rule: a pattern, the group holding the secret (0: all of it) and
/// the check the secret must pass.
struct Rule {
    kind: Kind,
    re: Regex,
    group: usize,
    check: fn(&str) -> bool,
}

fn rule(kind: Kind, pattern: &str, group: usize, check: fn(&str) -> bool) -> Option<Rule> {
    // The patterns are constants: a bad one is a bug the unit tests catch,
    // and it only loses its rule.
    Regex::new(pattern).ok().map(|re| Rule {
        kind,
        re,
        group,
        check,
    })
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    [
        rule(
            Kind::AnthropicKey,
            r"sk-ant-(?:api|admin|oat|ort)[0-9]{2}-[A-Za-z0-9_-]{40,}",
            0,
            |s| random_tail(s, "sk-ant-"),
        ),
        rule(
            Kind::OpenaiKey,
            r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{40,}",
            0,
            |s| random_tail(s, "sk-"),
        ),
        rule(Kind::OpenaiKey, r"sk-[A-Za-z0-9]{40,}", 0, |s| {
            random_tail(s, "sk-")
        }),
        rule(
            Kind::AwsAccessKeyId,
            r"(?:AKIA|ASIA|ABIA|ACCA|AROA|AIDA)[A-Z2-7]{16}",
            0,
            |s| s[4..].bytes().any(|b| b.is_ascii_digit()),
        ),
        rule(
            Kind::AwsSecretKey,
            r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*(?:[:=]|=>)\s*["']?([A-Za-z0-9/+]{40})"#,
            1,
            |s| random(s, 3.5),
        ),
        rule(
            Kind::GithubToken,
            r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}",
            0,
            |s| random_tail(s, "gh"),
        ),
        rule(Kind::GithubToken, r"github_pat_[A-Za-z0-9_]{60,255}", 0, |s| {
            random_tail(s, "github_pat_")
        }),
        rule(Kind::GitlabToken, r"glpat-[A-Za-z0-9_-]{20,}", 0, |s| {
            random_tail(s, "glpat-")
        }),
        rule(
            Kind::SlackToken,
            r"xox[abposr]-[0-9]{6,}-[A-Za-z0-9-]{8,}",
            0,
            |s| random_tail(s, "xox"),
        ),
        rule(
            Kind::StripeKey,
            r"(?:sk|rk)_live_[A-Za-z0-9]{20,}",
            0,
            |s| random_tail(s, "sk_live_"),
        ),
        rule(Kind::GoogleApiKey, r"AIza[0-9A-Za-z_-]{35}", 0, |s| {
            random_tail(s, "AIza")
        }),
        rule(
            Kind::Jwt,
            r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}",
            0,
            |_| true,
        ),
        rule(
            Kind::ConnectionPassword,
            r#"[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/@"'<>`\\]+:([^\s@/"'<>`\\]+)@[A-Za-z0-9\[]"#,
            1,
            |s| !placeholder(s),
        ),
        rule(
            Kind::AssignedSecret,
            r#"(?i)([A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api_?key|apikey|access_?key|private_?key|credential|auth)[A-Za-z0-9_.-]*)["']?\s*(?:[:=]|=>)\s*["']?([^\s"'`,;)}\]\\]{8,})"#,
            2,
            assigned_secret,
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
});

/// Whether a name (a key, a variable) says its value is a secret.
pub fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let hits = [
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "api-key",
        "access_key",
        "accesskey",
        "private_key",
        "credential",
        "auth",
    ];
    // Counters and limits of tokens are not secrets.
    let counts = [
        "tokens",
        "token_count",
        "max_token",
        "token_limit",
        "author",
    ];
    hits.iter().any(|h| n.contains(h)) && !counts.iter().any(|c| n.contains(c))
}

/// Whether a value given to a secret-like name looks like a secret rather
/// than a placeholder, a word, a number or a reference.
pub fn assigned_secret(value: &str) -> bool {
    let v = value.trim_matches(|c: char| c == '"' || c == '\'');
    if v.len() < 8 || placeholder(v) || v.starts_with("[REDACTED") {
        return false;
    }
    // A path, a URL or a reference to another variable is not the secret.
    if v.starts_with('/') || v.starts_with("./") || v.contains("://") || v.starts_with('$') {
        return false;
    }
    let classes = classes(v);
    (v.len() >= 8 && classes >= 3 && entropy(v) >= 2.5)
        || (v.len() >= 16 && classes >= 2 && entropy(v) >= 3.3)
}

fn placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let first = v.chars().next();
    l.starts_with("${")
        || l.starts_with("{{")
        || l.starts_with('<')
        || l.starts_with('%')
        || l.contains("xxxx")
        || l.contains("****")
        || l.contains("...")
        || l.contains('…')
        || [
            "password", "pass", "secret", "changeme", "redacted", "example",
        ]
        .iter()
        .any(|p| l == *p)
        || v.chars().all(|c| Some(c) == first)
}

/// How many of lowercase, uppercase, digits and others `s` holds.
fn classes(s: &str) -> usize {
    let b = s.as_bytes();
    [
        b.iter().any(u8::is_ascii_lowercase),
        b.iter().any(u8::is_ascii_uppercase),
        b.iter().any(u8::is_ascii_digit),
        b.iter().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|x| **x)
    .count()
}

/// Shannon entropy of `s`'s bytes, in bits per byte.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

fn random(s: &str, min_entropy: f64) -> bool {
    !placeholder(s) && classes(s) >= 2 && entropy(s) >= min_entropy
}

/// Whether the part of a key after its documented prefix looks random:
/// a placeholder (`xxxx`, one letter repeated) or a word-like name does not.
fn random_tail(s: &str, prefix: &str) -> bool {
    let tail = s.strip_prefix(prefix).unwrap_or(s);
    let alnum: String = tail.chars().filter(char::is_ascii_alphanumeric).collect();
    random(&alnum, 3.0) && alnum.bytes().any(|b| b.is_ascii_digit())
}

/// Whether `c` would continue a token: a match glued to one is part of
/// something longer (`task-ant-…`, a hash), not a key.
fn token_char(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The PEM private key blocks of `text`: from `-----BEGIN … PRIVATE KEY-----`
/// to its END line, or, cut short, to the end of the base64 after it. A
/// BEGIN line with no key material after it (a mention) does not count.
fn private_keys(text: &str, out: &mut Vec<Found>) {
    static BEGIN: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----").ok());
    static END: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----").ok());
    let (Some(begin), Some(end)) = (&*BEGIN, &*END) else {
        return;
    };
    let mut from = 0;
    while let Some(b) = begin.find_at(text, from) {
        let body_start = b.end();
        let stop = match end.find_at(text, body_start) {
            Some(e) => e.end(),
            None => {
                body_start
                    + text[body_start..]
                        .find(|c: char| !(c.is_ascii_alphanumeric() || "+/=\r\n\t :,-".contains(c)))
                        .unwrap_or(text.len() - body_start)
            }
        };
        let material = text[body_start..stop]
            .bytes()
            .filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
            .count();
        if material >= 64 {
            push(
                out,
                Kind::PrivateKey,
                b.start()..stop,
                &text[b.start()..stop],
            );
        }
        from = stop.max(b.end());
    }
}

fn push(out: &mut Vec<Found>, kind: Kind, range: Range<usize>, secret: &str) {
    if out
        .iter()
        .any(|f| f.range.start < range.end && range.start < f.range.end)
    {
        return;
    }
    out.push(Found {
        kind,
        range,
        secret: secret.to_string(),
    });
}

/// The secrets of `text` as it is, without decoding escapes.
fn find_plain(text: &str, out: &mut Vec<Found>) {
    private_keys(text, out);
    for r in RULES.iter() {
        for caps in r.re.captures_iter(text) {
            let (Some(all), Some(m)) = (caps.get(0), caps.get(r.group)) else {
                continue;
            };
            let before = text[..all.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            // The whole match must stand alone; for a key after a name the
            // name may be glued to anything before it.
            let glued_before = r.group == 0 && token_char(before);
            let glued_after = r.kind != Kind::ConnectionPassword
                && r.kind != Kind::AssignedSecret
                && (token_char(after) || (r.group == 0 && after == Some('-')));
            if glued_before || glued_after || !(r.check)(m.as_str()) {
                continue;
            }
            push(out, r.kind, m.range(), m.as_str());
        }
    }
}

/// `text` with its JSON string escapes decoded (lenient: a broken escape
/// stays as written), and for each byte of the result the byte of `text`
/// it came from (one more entry for the end). `None` when there is none.
fn unescape(text: &str) -> Option<(String, Vec<usize>)> {
    if !text.contains('\\') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut i = 0;
    let hex4 = |at: usize| -> Option<u32> {
        text.get(at..at + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    while i < bytes.len() {
        let emit = |out: &mut String, map: &mut Vec<usize>, c: char, from: usize| {
            for _ in 0..c.len_utf8() {
                map.push(from);
            }
            out.push(c);
        };
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let simple = match bytes[i + 1] {
                b'"' => Some('"'),
                b'\\' => Some('\\'),
                b'/' => Some('/'),
                b'n' => Some('\n'),
                b't' => Some('\t'),
                b'r' => Some('\r'),
                b'b' => Some('\u{8}'),
                b'f' => Some('\u{c}'),
                _ => None,
            };
            if let Some(c) = simple {
                emit(&mut out, &mut map, c, i);
                i += 2;
                continue;
            }
            if bytes[i + 1] == b'u'
                && let Some(u) = hex4(i + 2)
            {
                // A surrogate pair is one character in two escapes.
                if (0xD800..0xDC00).contains(&u)
                    && text.get(i + 6..i + 8) == Some("\\u")
                    && let Some(lo) = hex4(i + 8).filter(|l| (0xDC00..0xE000).contains(l))
                {
                    let c = char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                    emit(&mut out, &mut map, c.unwrap_or('\u{FFFD}'), i);
                    i += 12;
                    continue;
                }
                emit(
                    &mut out,
                    &mut map,
                    char::from_u32(u).unwrap_or('\u{FFFD}'),
                    i,
                );
                i += 6;
                continue;
            }
        }
        let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
        emit(&mut out, &mut map, c, i);
        i += c.len_utf8().max(1);
    }
    map.push(text.len());
    Some((out, map))
}

/// The secrets of `text`, in order, none overlapping: found as written,
/// and in the text its JSON escapes decode to (see the module's trap),
/// mapped back onto `text`.
pub fn find(text: &str) -> Vec<Found> {
    let mut out = vec![];
    find_plain(text, &mut out);
    // Each level's text and the map from its bytes to `text`'s.
    let mut level: Option<(String, Vec<usize>)> = None;
    for _ in 0..UNESCAPE_LEVELS {
        let current = level.as_ref().map_or(text, |(t, _)| t.as_str());
        let Some((decoded, map)) = unescape(current) else {
            break;
        };
        let map: Vec<usize> = match &level {
            None => map,
            Some((_, outer)) => map.iter().map(|i| outer[*i]).collect(),
        };
        let mut here = vec![];
        find_plain(&decoded, &mut here);
        for f in here {
            let range = map[f.range.start]..map[f.range.end];
            push(&mut out, f.kind, range, &f.secret);
        }
        level = Some((decoded, map));
    }
    out.sort_by_key(|f| f.range.start);
    out
}

/// `secret` as output shows it: its first 4 and last 2 characters at most
/// (fewer for a short one), the rest elided.
pub fn mask(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().collect();
    let (head, tail) = match chars.len() {
        n if n >= 16 => (4, 2),
        n if n >= 10 => (2, 0),
        _ => (0, 0),
    };
    let start: String = chars[..head].iter().collect();
    let end: String = chars[chars.len() - tail..].iter().collect();
    format!("{start}...{end}")
}

/// The placeholder a redacted secret of `kind` leaves.
pub fn placeholder_of(kind: Kind) -> String {
    format!("[REDACTED:{kind}]")
}

/// `text` with every secret replaced by `[REDACTED:kind]`; borrowed when
/// there was none.
pub fn redact(text: &str) -> Cow<'_, str> {
    let found = find(text);
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in found {
        out.push_str(&text[at..f.range.start]);
        out.push_str(&placeholder_of(f.kind));
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// Redacts `s` in place; whether anything was.
pub fn redact_string(s: &mut String) -> bool {
    match redact(s) {
        Cow::Borrowed(_) => false,
        Cow::Owned(r) => {
            *s = r;
            true
        }
    }
}

/// Redacts every string of `v` in place (a value under a secret-like key
/// that looks like a secret as a whole); how many secrets went.
pub fn redact_value(v: &mut Value) -> usize {
    match v {
        Value::String(s) => usize::from(redact_string(s)),
        Value::Array(items) => items.iter_mut().map(redact_value).sum(),
        Value::Object(map) => map
            .iter_mut()
            .map(|(k, v)| match v {
                Value::String(s) if secret_name(k) && assigned_secret(s) && find(s).is_empty() => {
                    *s = placeholder_of(Kind::AssignedSecret);
                    1
                }
                _ => redact_value(v),
            })
            .sum(),
        _ => 0,
    }
}

/// JSON text with its secrets redacted in its decoded strings, written
/// back compactly; text that is not JSON is redacted as text. Borrowed
/// when there was none.
pub fn redact_json_text(text: &str) -> Cow<'_, str> {
    if find(text).is_empty() && !has_assigned_secret(text) {
        return Cow::Borrowed(text);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(mut v) => {
            redact_value(&mut v);
            Cow::Owned(serde_json::to_string(&v).unwrap_or_else(|_| redact(text).into_owned()))
        }
        Err(_) => redact(text),
    }
}

/// Whether some object in JSON `text` gives a secret-like key a
/// secret-looking value (the only finding [`find`] cannot make on text
/// alone, since `"password": "…"` puts quotes between them).
fn has_assigned_secret(text: &str) -> bool {
    text.contains(':')
        && serde_json::from_str::<Value>(text).is_ok_and(|v| {
            let mut n = 0;
            each_string(&v, "", &mut |_, f| {
                n += usize::from(!f.is_empty());
            });
            n > 0
        })
}

/// Calls `each` with the JSON path (`messages[3].content[0].text`) and the
/// secrets of every string in `v`, including a value of a secret-like key
/// that looks like a secret as a whole.
pub fn each_string(v: &Value, path: &str, each: &mut dyn FnMut(&str, Vec<Found>)) {
    match v {
        Value::String(s) => {
            let found = find(s);
            if !found.is_empty() {
                each(path, found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                each_string(item, &format!("{path}[{i}]"), each);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                let here = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match v {
                    Value::String(s)
                        if secret_name(k) && assigned_secret(s) && find(s).is_empty() =>
                    {
                        each(
                            &here,
                            vec![Found {
                                kind: Kind::AssignedSecret,
                                range: 0..s.len(),
                                secret: s.clone(),
                            }],
                        );
                    }
                    _ => each_string(v, &here, each),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;

/// Real-shaped, made-up secrets of every kind, for tests (here and in the
/// faces' tests, which plant them): built from a seeded generator so no
/// key-shaped literal sits in the sources.
#[cfg(any(test, feature = "testing"))]
pub mod samples {
    use super::Kind;

    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const UPPER32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const URL64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    /// `n` characters of `alphabet`, the same for the same `seed`.
    pub fn random(seed: u64, n: usize, alphabet: &[u8]) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(alphabet[(x % alphabet.len() as u64) as usize])
            })
            .collect()
    }

    /// A made-up secret of `kind` as its provider shapes it (`seed` varies
    /// it), and the text that plants it (a key alone, or with its name).
    pub fn sample(kind: Kind, seed: u64) -> (String, String) {
        let r = |n, a| random(seed, n, a);
        let secret = match kind {
            Kind::AnthropicKey => format!("sk-ant-api03-{}AA", r(93, URL64)),
            Kind::OpenaiKey => format!("sk-proj-{}", r(120, URL64)),
            Kind::AwsAccessKeyId => format!("AKIA{}", r(15, UPPER32)) + "7",
            Kind::AwsSecretKey => r(40, B64),
            Kind::GithubToken => format!("ghp_{}", r(36, ALNUM)),
            Kind::GitlabToken => format!("glpat-{}", r(20, URL64)),
            Kind::SlackToken => format!(
                "xoxb-{}-{}-{}",
                12345678901_u64 + seed,
                1234567890123_u64 + seed,
                r(24, ALNUM)
            ),
            Kind::StripeKey => format!("sk_live_{}", r(99, ALNUM)),
            Kind::GoogleApiKey => format!("AIza{}", r(35, URL64)),
            Kind::PrivateKey => {
                let body: Vec<String> = (0..6).map(|i| random(seed + i, 64, B64)).collect();
                format!(
                    "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
                    body.join("\n")
                )
            }
            Kind::Jwt => format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}",
                r(40, URL64),
                random(seed + 1, 43, URL64)
            ),
            Kind::ConnectionPassword => r(18, ALNUM) + "9a",
            Kind::AssignedSecret => format!("{}#7Qz", r(20, ALNUM)),
        };
        let text = match kind {
            Kind::AwsSecretKey => format!("aws_secret_access_key = {secret}"),
            Kind::ConnectionPassword => format!("postgres://app:{secret}@db.internal:5432/prod"),
            Kind::AssignedSecret => format!("DB_PASSWORD={secret}"),
            _ => secret.clone(),
        };
        (secret, text)
    }
}

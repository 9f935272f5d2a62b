//! Repository identity: which repository a record belongs to, so that a
//! moved checkout, a fresh clone or a remote URL spelled another way keeps
//! its history.
//!
//! A [`Repository`] is the git root's first commit, the normalized origin
//! URL ([`normalize_origin`]) and the folder as a hint. Two identities are
//! one repository by [`Repository::matches`], the one rule every listing
//! uses; the index keeps [`Repository::key`] and [`Repository::root_commit`]
//! so SQL can apply the same rule.
//!
//! ```
//! use logbook_model::repo::normalize_origin;
//! assert_eq!(normalize_origin("git@GitHub.com:org/x.git"), normalize_origin("https://github.com/org/x/"));
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::url::Parts;

/// The key under which records hold their identity: `repository` in a
/// transcript's `metadata`, a manifest's `metadata` and a work session.
pub const REPOSITORY_KEY: &str = "repository";

/// Prefix of [`Repository::key`] for a repository known by its first commit only.
pub const ROOT_KEY_PREFIX: &str = "root:";
/// Prefix of [`Repository::key`] for a folder outside git.
pub const DIR_KEY_PREFIX: &str = "dir:";

/// The repository a record was made in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    /// The oldest parentless commit reachable from HEAD: the same in every
    /// clone, wherever it lives. `None` outside git or before a first commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_commit: Option<String>,
    /// `remote.origin.url` normalized ([`normalize_origin`]), without credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// The canonical folder (the git root inside git): a hint only, since
    /// a checkout moves.
    #[serde(default)]
    pub folder: String,
}

/// How a record spells its identity's keys: camelCase in JSON records of
/// seed 003, snake_case in manifests (seed 000) and work sessions (seed 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Casing {
    /// `rootCommit`.
    Camel,
    /// `root_commit`.
    Snake,
}

impl Repository {
    /// The index's key: the normalized origin when there is one, else
    /// `root:<first commit>`, else `dir:<folder>`.
    pub fn key(&self) -> String {
        if let Some(o) = &self.origin {
            o.clone()
        } else if let Some(r) = &self.root_commit {
            format!("{ROOT_KEY_PREFIX}{r}")
        } else {
            format!("{DIR_KEY_PREFIX}{}", self.folder)
        }
    }

    /// Whether it names a git repository (a first commit or an origin),
    /// not only a folder outside git. Records keep only such identities:
    /// outside git the folder they already name says as much, and seed
    /// formats stay as the seeds print them.
    pub fn in_git(&self) -> bool {
        self.origin.is_some() || self.root_commit.is_some()
    }

    /// Whether two identities are one repository: the same normalized
    /// origin; or, when either has no origin, the same first commit; or,
    /// when neither is in git, the same folder. Forks share a first commit
    /// but not an origin, so they stay apart.
    pub fn matches(&self, other: &Repository) -> bool {
        key_matches(
            &self.key(),
            self.root_commit.as_deref(),
            &other.key(),
            other.root_commit.as_deref(),
        )
    }

    /// Reads the identity a record holds, leniently: either casing, values
    /// that are not text ignored; `None` when nothing identifies it.
    pub fn from_value(v: &Value) -> Option<Repository> {
        let o = v.as_object()?;
        let text = |camel: &str, snake: &str| {
            o.get(camel)
                .or_else(|| o.get(snake))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let repo = Repository {
            root_commit: text("rootCommit", "root_commit"),
            origin: text("origin", "origin").and_then(|o| normalize_origin(&o)),
            folder: text("folder", "folder").unwrap_or_default(),
        };
        (repo.root_commit.is_some() || repo.origin.is_some() || !repo.folder.is_empty())
            .then_some(repo)
    }

    /// The identity as a record stores it, in `casing`.
    pub fn to_value(&self, casing: Casing) -> Value {
        let root = match casing {
            Casing::Camel => "rootCommit",
            Casing::Snake => "root_commit",
        };
        let mut m = Map::new();
        if let Some(r) = &self.root_commit {
            m.insert(root.into(), Value::String(r.clone()));
        }
        if let Some(o) = &self.origin {
            m.insert("origin".into(), Value::String(o.clone()));
        }
        m.insert("folder".into(), Value::String(self.folder.clone()));
        Value::Object(m)
    }

    /// The identity in a record's map of extensible keys, if it holds one.
    pub fn in_map(map: &Map<String, Value>) -> Option<Repository> {
        map.get(REPOSITORY_KEY).and_then(Repository::from_value)
    }

    /// Records `self` in `map` unless it already names a repository: an
    /// identity once recorded is never rewritten by a later save.
    pub fn record_in(&self, map: &mut Map<String, Value>, casing: Casing) {
        if Repository::in_map(map).is_none() {
            map.insert(REPOSITORY_KEY.into(), self.to_value(casing));
        }
    }
}

/// [`Repository::matches`] on the two columns the index keeps per record
/// (its key and its first commit), so a query and a listing agree.
pub fn key_matches(a_key: &str, a_root: Option<&str>, b_key: &str, b_root: Option<&str>) -> bool {
    let has_origin = |k: &str| !k.starts_with(ROOT_KEY_PREFIX) && !k.starts_with(DIR_KEY_PREFIX);
    if has_origin(a_key) && has_origin(b_key) {
        return same_origin(a_key, b_key);
    }
    match (a_root, b_root) {
        (Some(a), Some(b)) => a == b,
        (None, None) => a_key.starts_with(DIR_KEY_PREFIX) && a_key == b_key,
        _ => false,
    }
}

/// Hosts whose repository paths are case-insensitive: `Org/P4` and
/// `org/p4` are one repository there, so a remote re-spelled in another
/// case keeps its history. Elsewhere a path's case may matter.
pub const CASE_INSENSITIVE_HOSTS: &[&str] = &["github.com", "gitlab.com"];

/// Whether a normalized origin's path compares case-insensitively (its
/// host is one of [`CASE_INSENSITIVE_HOSTS`]).
pub fn case_insensitive_origin(origin: &str) -> bool {
    let host = origin.split_once('/').map_or(origin, |(h, _)| h);
    CASE_INSENSITIVE_HOSTS
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
}

/// A normalized origin as it is compared and grouped: lowercased where
/// [`case_insensitive_origin`], as written elsewhere. Records keep the
/// origin as they were given it; only comparisons fold it, so no record
/// is rewritten.
pub fn origin_identity(origin: &str) -> String {
    if case_insensitive_origin(origin) {
        origin.to_ascii_lowercase()
    } else {
        origin.to_string()
    }
}

/// Whether two normalized origins name one repository: equal, ignoring
/// the path's case on [`CASE_INSENSITIVE_HOSTS`]. The host is always
/// part of the identity: `github.com/o/x` and `gitlab.com/o/x` differ.
pub fn same_origin(a: &str, b: &str) -> bool {
    a == b || (case_insensitive_origin(a) && a.eq_ignore_ascii_case(b))
}

/// One spelling of an origin URL for every way git accepts it:
/// `git@host:org/x.git`, `ssh://git@host:22/org/x.git`,
/// `https://user:token@Host/org/x/`, `http://`, `git://` all become
/// `host/org/x`. Credentials (user info, query, fragment: see
/// [`crate::url`]), ports, the scheme, a trailing `.git` or `/`
/// are dropped and the host lowercased; the path keeps its case. A local
/// path stays a path (`/srv/git/x`). `None` for an empty URL.
pub fn normalize_origin(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some(parts) = Parts::parse(url) {
        // Credentials (user info, a query such as `?access_token=…`, a
        // fragment) are left behind here, with the port.
        if parts.scheme.eq_ignore_ascii_case("file") {
            ("", parts.path)
        } else {
            (parts.host, parts.path)
        }
    } else if let Some((before, after)) = url.split_once(':')
        && !before.contains('/')
        && !before.is_empty()
    {
        // scp-like `[user@]host:path`.
        (before, after)
    } else {
        ("", url)
    };
    // scp-like: credentials end at the last `@`; a URL's port after the last `:`.
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let host = host.to_ascii_lowercase();
    let mut path = path.trim_end_matches('/');
    while let Some(p) = path.strip_suffix(".git") {
        path = p.trim_end_matches('/');
    }
    let path = if host.is_empty() {
        path.to_string()
    } else {
        path.trim_start_matches(['/', '~']).to_string()
    };
    let out = match (host.is_empty(), path.is_empty()) {
        (true, true) => return None,
        (true, false) => path,
        (false, true) => host,
        (false, false) => format!("{host}/{path}"),
    };
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_spelling_of_one_remote_is_one_key() {
        let want = Some("github.com/org/x".to_string());
        for url in [
            "git@github.com:org/x.git",
            "git@GitHub.com:org/x",
            "ssh://git@github.com:22/org/x.git",
            "ssh://git@github.com/org/x.git/",
            "https://github.com/org/x",
            "https://user:tok@GitHub.com/org/x/",
            "https://github.com:443/org/x.git",
            "http://github.com/org/x.git",
            "git://github.com/org/x.git",
            "  https://github.com/org/x.git  ",
        ] {
            assert_eq!(normalize_origin(url), want, "{url}");
        }
    }

    #[test]
    fn credentials_never_survive() {
        let n = normalize_origin("https://bob:s3cr3t@example.com/a/b.git").unwrap();
        assert!(!n.contains("s3cr3t") && !n.contains("bob"), "{n}");
    }

    #[test]
    fn a_query_or_fragment_is_never_kept() {
        for url in [
            "https://host.example/x.git?access_token=TOK",
            "https://host.example/x.git#TOK",
            "https://me:TOK@host.example/x.git/?a=TOK#TOK",
        ] {
            assert_eq!(
                normalize_origin(url).as_deref(),
                Some("host.example/x"),
                "{url}"
            );
        }
    }

    #[test]
    fn local_paths_and_empty_urls() {
        assert_eq!(
            normalize_origin("/srv/git/x.git").as_deref(),
            Some("/srv/git/x")
        );
        assert_eq!(
            normalize_origin("file:///srv/git/x.git/").as_deref(),
            Some("/srv/git/x")
        );
        assert_eq!(normalize_origin("  "), None);
        assert_eq!(normalize_origin("other/org/x"), Some("other/org/x".into()));
    }

    fn repo(root: Option<&str>, origin: Option<&str>, folder: &str) -> Repository {
        Repository {
            root_commit: root.map(str::to_string),
            origin: origin.and_then(normalize_origin),
            folder: folder.into(),
        }
    }

    #[test]
    fn matching_rule() {
        let a = repo(Some("r1"), Some("git@h:o/x.git"), "/a");
        // Moved and re-spelled: one repository.
        assert!(a.matches(&repo(Some("r1"), Some("https://h/o/x"), "/b")));
        // A fork: same first commit, other origin.
        assert!(!a.matches(&repo(Some("r1"), Some("https://h/fork/x"), "/a")));
        // No origin on one side: the first commit decides.
        assert!(a.matches(&repo(Some("r1"), None, "/c")));
        assert!(!a.matches(&repo(Some("r2"), None, "/a")));
        // Outside git: the folder.
        assert!(repo(None, None, "/d").matches(&repo(None, None, "/d")));
        assert!(!repo(None, None, "/d").matches(&repo(None, None, "/e")));
        assert!(!repo(None, None, "/a").matches(&a));
    }

    #[test]
    fn path_case_matters_only_where_the_host_ignores_it() {
        let gh = repo(Some("r1"), Some("https://github.com/Acme/Widget.git"), "/a");
        assert!(gh.matches(&repo(Some("r1"), Some("git@github.com:acme/widget"), "/b")));
        let own = repo(Some("r1"), Some("https://git.example/Acme/Widget"), "/a");
        assert!(!own.matches(&repo(
            Some("r1"),
            Some("https://git.example/acme/widget"),
            "/a"
        )));
        // The host is part of the identity.
        assert!(!gh.matches(&repo(
            Some("r1"),
            Some("https://gitlab.com/Acme/Widget"),
            "/a"
        )));
        assert_eq!(origin_identity("gitlab.com/Acme/W"), "gitlab.com/acme/w");
        assert_eq!(origin_identity("git.example/Acme/W"), "git.example/Acme/W");
    }

    #[test]
    fn reads_both_casings_and_keeps_a_recorded_identity() {
        let r = repo(Some("abc"), Some("git@h:o/x"), "/w");
        for casing in [Casing::Camel, Casing::Snake] {
            assert_eq!(Repository::from_value(&r.to_value(casing)), Some(r.clone()));
        }
        let mut m = Map::new();
        r.record_in(&mut m, Casing::Snake);
        repo(Some("other"), None, "/x").record_in(&mut m, Casing::Snake);
        assert_eq!(Repository::in_map(&m), Some(r));
        assert_eq!(
            Repository::from_value(&serde_json::json!({"origin": 3})),
            None
        );
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = normalize_origin(&s);
            let _ = Repository::from_value(&serde_json::json!({"origin": s, "rootCommit": s}));
        }

        #[test]
        fn ssh_and_https_spellings_are_equal(
            host in "[a-zA-Z][a-zA-Z0-9.-]{0,20}",
            path in "[a-zA-Z0-9_-]{1,10}(/[a-zA-Z0-9_.-]{1,10}){0,3}",
            user in "[a-z]{1,8}",
            port in 1u16..65535,
            git in any::<bool>(),
        ) {
            let suffix = if git { ".git" } else { "" };
            let https = normalize_origin(&format!("https://{user}:x@{host}/{path}{suffix}/"));
            prop_assert_eq!(&normalize_origin(&format!("git@{host}:{path}{suffix}")), &https);
            prop_assert_eq!(&normalize_origin(&format!("ssh://{user}@{host}:{port}/{path}{suffix}")), &https);
            prop_assert_eq!(&normalize_origin(&format!("https://{}/{path}", host.to_uppercase())), &https);
            let n = https.unwrap_or_default();
            let cred = format!("{user}:x");
            prop_assert!(!n.contains(&cred));
        }
    }
}

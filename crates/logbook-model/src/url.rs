//! URLs as Logbook may keep or show them. A URL someone gives (a git
//! remote, an export endpoint, a team catalog) can carry credentials in
//! three places: the user info (`user:token@`), the query
//! (`?access_token=…`) and the fragment. None of them may reach a file
//! Logbook writes, the index, or a message: what may be shown is
//! `scheme://host[:port]/path` ([`Parts::public`]), and every face and
//! layer gets it from here, so there is one rule to get right.
//!
//! ```
//! use logbook_model::url::public;
//! assert_eq!(public("https://u:pw@h.example:8443/x.git?access_token=T#f"), "https://h.example:8443/x.git");
//! ```

/// The pieces of a `scheme://…` URL, as written (nothing decoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts<'a> {
    /// `https`, `ssh`, `postgres`…
    pub scheme: &'a str,
    /// What comes before the last `@` of the authority: credentials.
    pub user_info: Option<&'a str>,
    /// The host; an IPv6 address keeps its brackets.
    pub host: &'a str,
    /// The port's digits, when given.
    pub port: Option<&'a str>,
    /// From the first `/` after the authority up to `?` or `#`; may be empty.
    pub path: &'a str,
    /// After `?`, up to `#`: may hold tokens.
    pub query: Option<&'a str>,
    /// After `#`.
    pub fragment: Option<&'a str>,
}

impl<'a> Parts<'a> {
    /// Splits `url` when it has the `scheme://` form; `None` otherwise (an
    /// scp-like git remote, a local path).
    pub fn parse(url: &'a str) -> Option<Parts<'a>> {
        let (scheme, rest) = url.split_once("://")?;
        if scheme.is_empty()
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return None;
        }
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        // Credentials end at the last `@`: a password may hold another.
        let (user_info, host_port) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (host, port) = if host_port.starts_with('[') {
            match host_port.find(']') {
                Some(end) => {
                    let (h, after) = host_port.split_at(end + 1);
                    (h, after.strip_prefix(':'))
                }
                None => (host_port, None),
            }
        } else {
            match host_port.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_port, None),
            }
        };
        Some(Parts {
            scheme,
            user_info,
            host,
            port: port.filter(|p| !p.is_empty()),
            path,
            query,
            fragment,
        })
    }

    /// `scheme://host[:port]/path`: what may be stored or shown.
    pub fn public(&self) -> String {
        let mut out = format!("{}://{}", self.scheme, self.host);
        if let Some(port) = self.port {
            out.push(':');
            out.push_str(port);
        }
        out.push_str(self.path);
        out
    }

    /// Whether it carries anything [`Parts::public`] leaves out.
    pub fn has_credentials(&self) -> bool {
        self.user_info.is_some() || self.query.is_some() || self.fragment.is_some()
    }
}

/// `url` without user info, query or fragment ([`Parts::public`]); text
/// that is not a `scheme://` URL is returned as it is, cut at its first
/// `?` or `#` when it holds an `@` (a URL spelled without its scheme).
pub fn public(url: &str) -> String {
    let url = url.trim();
    match Parts::parse(url) {
        Some(p) => p.public(),
        None if url.contains('@') => {
            let cut = url.split(['?', '#']).next().unwrap_or_default();
            match cut.rsplit_once('@') {
                Some((_, host)) => host.to_string(),
                None => cut.to_string(),
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn credentials_go_and_the_place_stays() {
        for (url, shown) in [
            (
                "https://host.example/x.git?access_token=TOK#frag",
                "https://host.example/x.git",
            ),
            ("http://user:PASS@h:4318", "http://h:4318"),
            (
                "postgres://a:s3cr@t@db.example:5433/team?sslmode=require&password=p",
                "postgres://db.example:5433/team",
            ),
            (
                "http://[fe80::1]:4318/v1/traces",
                "http://[fe80::1]:4318/v1/traces",
            ),
            ("http://h/?q=1#frag", "http://h/"),
            ("user:tok@h.example/x?t=1", "h.example/x"),
            ("/srv/git/x", "/srv/git/x"),
        ] {
            assert_eq!(public(url), shown, "{url}");
        }
    }

    #[test]
    fn parts() {
        let p = Parts::parse("https://u:p@[::1]:8443/a/b?q=1#f").unwrap();
        assert_eq!(
            p,
            Parts {
                scheme: "https",
                user_info: Some("u:p"),
                host: "[::1]",
                port: Some("8443"),
                path: "/a/b",
                query: Some("q=1"),
                fragment: Some("f"),
            }
        );
        assert!(p.has_credentials());
        assert!(!Parts::parse("http://h:1/x").unwrap().has_credentials());
        assert_eq!(Parts::parse("git@h:o/x.git"), None);
    }

    proptest! {
        #[test]
        fn a_secret_never_survives(
            host in "[a-z][a-z0-9.-]{0,12}",
            path in "(/[a-zA-Z0-9_.-]{1,8}){0,3}",
            secret in "[A-Za-z0-9]{12}",
        ) {
            for url in [
                format!("https://me:{secret}@{host}{path}"),
                format!("https://{host}{path}?token={secret}"),
                format!("https://{host}{path}#{secret}"),
            ] {
                let shown = public(&url);
                prop_assert!(!shown.contains(&secret), "{url} -> {shown}");
                prop_assert_eq!(&shown, &format!("https://{host}{path}"));
            }
        }
    }
}

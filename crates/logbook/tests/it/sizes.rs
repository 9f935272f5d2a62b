//! Functions sized by role: no function of the library crates or the faces
//! runs over [`MAX_FN_LINES`] lines, so each does one thing a reader can
//! hold at once. The exhaustive matches that word every `Step` and every
//! `Error` are the exception: one arm per variant is their point, and
//! splitting them would hide the one place a new variant must be worded.

/// The longest a function may be, signature and closing brace included.
const MAX_FN_LINES: usize = 80;

/// The crates the limit holds in: the library and its faces (not the
/// benchmark, whose rows are tables).
const CHECKED: [&str; 9] = [
    "logbook-model",
    "logbook-store",
    "logbook-index",
    "logbook",
    "logbook-cli",
    "logbook-mcp",
    "logbook-web",
    "logbook-team-pg",
    "logbook-otlp",
];

/// The exhaustive matches, by file and function.
const EXEMPT: [(&str, &str); 2] = [
    ("logbook-model/src/error/hints.rs", "next"),
    ("logbook-model/src/error/next.rs", "tool_call"),
];

/// Every function of `text` before its unit tests: its name, the line it
/// starts on (from 1) and how many lines it runs. rustfmt puts a body's
/// closing brace at the indentation of its `fn`, which is what ends it.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .collect();
    let mut found = vec![];
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let indent = line.len() - line.trim_start().len();
        // The signature ends at the line that opens the body (or at a
        // `;`: a declaration without one).
        let Some(open) = (i..lines.len()).find(|&j| {
            let end = lines[j].trim_end();
            end.ends_with('{') || end.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = (open + 1..lines.len()).find(|&k| {
            let l = lines[k];
            l.len() > indent
                && l[..indent].trim().is_empty()
                && l[indent..].starts_with('}')
                && !l[indent + 1..].starts_with(|c: char| c.is_alphanumeric())
        });
        if let Some(close) = close {
            found.push((name, i + 1, close - i + 1));
        }
    }
    found
}

/// The name of the function `line` declares, if it declares one.
fn fn_name(line: &str) -> Option<String> {
    let mut rest = line.trim_start();
    if rest.starts_with("//") {
        return None;
    }
    for prefix in ["pub(crate) ", "pub(super) ", "pub(in ", "pub "] {
        if let Some(r) = rest.strip_prefix(prefix) {
            // `pub(in path) ` ends at its `)`.
            rest = match prefix {
                "pub(in " => r.split_once(") ")?.1,
                _ => r,
            };
            break;
        }
    }
    for qualifier in ["const ", "async ", "unsafe ", "extern \"C\" "] {
        rest = rest.strip_prefix(qualifier).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_function_is_over_80_lines() {
    let crates = crate::layers::crates();
    let mut over = vec![];
    let mut checked = 0;
    for krate in CHECKED {
        let mut files = vec![];
        crate::layers::rust_files(&crates.join(krate).join("src"), &mut files);
        files.sort();
        for file in files {
            // A unit test module of its own: tests, not code.
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let shown = file
                .strip_prefix(&crates)
                .unwrap_or(&file)
                .to_string_lossy()
                .replace('\\', "/");
            for (name, line, len) in functions(&std::fs::read_to_string(&file).unwrap()) {
                checked += 1;
                let exempt = EXEMPT.iter().any(|(f, n)| shown == *f && name == *n);
                if len > MAX_FN_LINES && !exempt {
                    over.push(format!("{shown}:{line} {name}: {len} lines"));
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} functions found");
    assert!(
        over.is_empty(),
        "functions over {MAX_FN_LINES} lines (split each by what it does):\n{}",
        over.join("\n")
    );
}

#[test]
fn the_function_measure_sees_bodies_and_stops_at_the_unit_tests() {
    let text = "\
pub(crate) fn short() -> u8 {
    1
}

impl X {
    pub async fn method<T>(
        &self,
    ) -> T
    where
        T: Default,
    {
        let c = || {
        };
        T::default()
    }
    fn declared(&self);
}

#[cfg(test)]
mod tests {
    fn hidden() {}
}
";
    assert_eq!(
        functions(text),
        [("short".to_string(), 1, 3), ("method".to_string(), 6, 10)]
    );
    assert_eq!(fn_name("    // fn commented() {"), None);
    assert_eq!(
        fn_name("pub(in crate::ops) const fn k() {"),
        Some("k".into())
    );
}

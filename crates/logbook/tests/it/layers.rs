//! The one-way rule of DESIGN §7: model ← store ← index ← ops. A module may
//! name its own layer and the layers below it, never one above; `error`,
//! `clock` and `notice` are leaves every layer may use and that use none. Test code (after
//! `#[cfg(test)]`) is not part of the library and is not checked.
//!
//! And a size rule over every crate of the workspace: no source file's code
//! grows past [`MAX_LINES`], so a file holds one role and reads in a sitting.

use std::path::{Path, PathBuf};

/// The layers, lowest first, and the leaves below them all.
const LAYERS: [&str; 4] = ["model", "store", "index", "ops"];
const LEAVES: [&str; 3] = ["error", "clock", "notice"];

/// The most lines of code (unit tests aside) a source file may hold; past
/// it, a file is split by role.
const MAX_LINES: usize = 800;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names through `crate::…`, including in
/// grouped imports such as `use crate::{model, store}`.
fn named_modules(text: &str) -> Vec<String> {
    let mut out = vec![];
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                for part in inner.split(',') {
                    let name: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.push(name);
                }
            } else {
                out.push(
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect(),
                );
            }
        }
    }
    out
}

/// The layer (or leaf) a source file belongs to, from its path.
fn layer_of(path: &Path) -> Option<String> {
    let rel = path.strip_prefix(src()).ok()?;
    let first = rel.components().next()?.as_os_str().to_string_lossy();
    Some(first.trim_end_matches(".rs").to_string())
}

fn rank(name: &str) -> Option<usize> {
    if LEAVES.contains(&name) {
        return Some(0);
    }
    LAYERS.iter().position(|l| *l == name).map(|i| i + 1)
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let mut files = vec![];
    rust_files(&src(), &mut files);
    let mut violations = vec![];
    let mut checked = 0;
    for file in &files {
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue; // a unit test module of its own
        }
        let Some(own) = layer_of(file) else { continue };
        let Some(own_rank) = rank(&own) else { continue };
        checked += 1;
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests may set up their data through any layer: they are not
        // part of what the library depends on.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for named in named_modules(code) {
            if let Some(r) = rank(&named)
                && r > own_rank
            {
                violations.push(format!("{} names crate::{named}", file.display()));
            }
            // Leaves use nothing of the crate but each other's types.
            if own_rank == 0 && rank(&named).is_some_and(|r| r > 0) {
                violations.push(format!("leaf {} names crate::{named}", file.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} files found under {}",
        src().display()
    );
    assert!(
        violations.is_empty(),
        "upward imports:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_checker_sees_grouped_and_inline_paths() {
    let text = "use crate::{model, ops::run};\nlet x = crate::index::Index::open(p);\n// crate::ops in a comment\n";
    assert_eq!(named_modules(text), ["model", "ops", "index"]);
    assert_eq!(rank("ops"), Some(4));
    assert_eq!(rank("model"), Some(1));
    assert_eq!(rank("error"), Some(0));
}

/// The lines of `text` before its unit tests (its first line starting with
/// `#[cfg(test)]`), or all of them.
fn code_lines(text: &str) -> usize {
    text.lines()
        .take_while(|l| !l.starts_with("#[cfg(test)]"))
        .count()
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![];
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files.sort();
    let mut over = vec![];
    let mut checked = 0;
    for file in &files {
        // A unit test module of its own: tests, not code.
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        checked += 1;
        let lines = code_lines(&std::fs::read_to_string(file).unwrap());
        if lines > MAX_LINES {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            over.push(format!("{}: {lines} lines", shown.display()));
        }
    }
    assert!(
        checked > 50,
        "only {checked} files found under {}",
        root.join("crates").display()
    );
    assert!(
        over.is_empty(),
        "source files over {MAX_LINES} lines of code (split each by role):\n{}",
        over.join("\n")
    );
}

#[test]
fn the_line_count_stops_at_the_unit_tests() {
    assert_eq!(code_lines("fn a() {}\n\n#[cfg(test)]\nmod tests {}\n"), 2);
    assert_eq!(code_lines("fn a() {}\n    #[cfg(test)]\nfn b() {}\n"), 3);
    assert_eq!(code_lines("fn a() {}\n"), 1);
}

//! What Cargo cannot check about the layers. The one-way rule of DESIGN §7
//! (model ← store ← index ← ops) is the crate graph's now: each layer is a
//! crate that depends only on those below it. What stays here: no
//! file-system call outside `logbook-store`, no face naming the team
//! backend, Linux-only calls only in `store::sys`, and a size rule over
//! every crate of the workspace: no source file's code grows past
//! [`MAX_LINES`], so a file holds one role and reads in a sitting.

use std::path::{Path, PathBuf};

/// The most lines of code (unit tests aside) a source file may hold; past
/// it, a file is split by role.
const MAX_LINES: usize = 800;

/// The workspace's `crates` folder.
pub(crate) fn crates() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What touches the file system, as it reads in source: the modules
/// (`std::fs` and the like), a bare `fs::` (after `use std::fs`), and the
/// `Path` methods that ask the disk. `store::fs::…` is the store's own
/// module, named from outside it: allowed. A store method that shares a
/// name with one of these (`Project::exists`) is called by its path
/// (`Project::exists(p)`): a text check has no types.
const FILE_SYSTEM_CALLS: [&str; 16] = [
    "std::fs",
    "rustix::fs",
    "std::os::unix::fs",
    "tokio::fs",
    "File::open",
    "File::create",
    "OpenOptions",
    "read_dir(",
    ".metadata(",
    "symlink_metadata(",
    "canonicalize(",
    ".exists()",
    ".try_exists(",
    ".is_file()",
    ".is_dir()",
    ".read_link(",
];

/// The file-system calls in `text`'s code (before its first line starting
/// with `#[cfg(test)]`; `//` comments left out), as (line number, what).
fn file_system_calls(text: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or_default();
        for pattern in FILE_SYSTEM_CALLS {
            if code.contains(pattern) {
                out.push((n + 1, pattern.to_string()));
            }
        }
        // A bare `fs::`, not `store::fs::` nor `std::fs::` (named above).
        let bare = code.match_indices("fs::").any(|(i, _)| {
            let before = &code[..i];
            !before.ends_with("::") && !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
        });
        if bare {
            out.push((n + 1, "fs::".to_string()));
        }
    }
    out
}

#[test]
fn the_file_system_checker_sees_calls_and_stops_at_the_unit_tests() {
    let text = "use std::fs;\nlet t = fs::read(p);\nif path.is_file() {}\n\
        crate::store::fs::sync_dir(d)?;\nlet f = rustix::fs::open(p);\n\
        // path.exists() in a comment\nlet rs = runs_fs::x;\n\
        #[cfg(test)]\nfn t() { std::fs::write(p, b\"\"); }\n";
    let found: Vec<(usize, String)> = file_system_calls(text);
    assert_eq!(
        found,
        [
            (1, "std::fs".to_string()),
            (2, "fs::".to_string()),
            (3, ".is_file()".to_string()),
            (5, "rustix::fs".to_string()),
        ]
    );
    assert!(file_system_calls("let x = a.canonicalize()?;").len() == 1);
    assert!(file_system_calls("Project::exists(p)").is_empty());
}

/// Library code outside `store`, and every face crate, leaves the disk to
/// `store` (DESIGN §7): a file-system call anywhere else fails this test.
#[test]
fn only_the_store_touches_files() {
    let root = crates().join("..");
    let mut files = vec![];
    for krate in [
        "logbook-model",
        "logbook-index",
        "logbook",
        "logbook-cli",
        "logbook-mcp",
        "logbook-web",
        "logbook-team-pg",
    ] {
        rust_files(&crates().join(krate).join("src"), &mut files);
    }
    // `clock` reads the machine's time zone link (`/etc/localtime`), no
    // file of a project, and as part of the model it cannot ask the store.
    let clock = crates().join("logbook-model/src/clock.rs");
    files.retain(|f| *f != clock);
    let mut found = vec![];
    let mut checked = 0;
    for file in &files {
        // A unit test module of its own (being moved out to tests/it).
        if file.ends_with("logbook-index/src/tests.rs") {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(file).unwrap();
        for (line, what) in file_system_calls(&text) {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            found.push(format!("{}:{line}: {what}", shown.display()));
        }
    }
    assert!(checked > 50, "only {checked} files checked");
    assert!(
        found.is_empty(),
        "file-system calls outside `store` (move each behind a store function named after the domain):\n{}",
        found.join("\n")
    );
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
    let root = crates().join("..");
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

/// The library modules a face may not name: the team backend is chosen by
/// passing `ops::query::Scope::Team`, and the catalog's driver interface
/// (`logbook::catalog`) is the PostgreSQL crate's business, so a face that
/// names either has picked a backend itself.
const FACE_FORBIDDEN: [[&str; 2]; 2] = [["ops", "team"], ["logbook", "catalog"]];

/// Every path `text` names, comments aside: each `use` tree flattened
/// (`use a::{b, c::d}` gives `a::b` and `a::c::d`), and every inline path.
fn face_paths(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    fn flatten(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        match tree.find('{') {
            Some(open) if tree.ends_with('}') => {
                let head = format!("{prefix}{}", &tree[..open]);
                let inner = &tree[open + 1..tree.len() - 1];
                let (mut depth, mut start) = (0, 0);
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            flatten(&head, &inner[start..i], out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                flatten(&head, &inner[start..], out);
            }
            _ if tree.is_empty() => {}
            _ => out.push(format!("{prefix}{tree}")),
        }
    }
    let mut paths = vec![];
    let compact: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
    for (i, _) in compact.match_indices("use ") {
        let before = compact[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &compact[i + 4..];
        let end = rest.find(';').unwrap_or(rest.len());
        let tree: String = rest[..end].chars().filter(|c| !c.is_whitespace()).collect();
        flatten("", &tree, &mut paths);
    }
    let is_path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    paths.extend(
        code.split(|c: char| !is_path_char(c))
            .filter(|t| t.contains("::"))
            .map(str::to_string),
    );
    paths
}

/// The forbidden modules (`ops::team`, `logbook::catalog`) that `text` names.
fn forbidden_in_face(text: &str) -> Vec<String> {
    let mut found = vec![];
    for path in face_paths(text) {
        let parts: Vec<&str> = path.split("::").map(str::trim).collect();
        for pair in FACE_FORBIDDEN {
            if parts.windows(2).any(|w| w == pair) {
                found.push(pair.join("::"));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn no_face_names_the_team_backend_or_the_catalog_driver() {
    let crates = crates();
    let mut offenders = vec![];
    for face in ["logbook-cli", "logbook-mcp", "logbook-web"] {
        let mut files = vec![];
        rust_files(&crates.join(face).join("src"), &mut files);
        assert!(!files.is_empty(), "{face} has no sources");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for name in forbidden_in_face(&text) {
                offenders.push(format!("{} names {name}", file.display()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "faces choose a backend through ops::query::Scope and the catalog's \
         lifecycle through ops::catalog:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_face_checker_sees_every_spelling() {
    let named = |t: &str| forbidden_in_face(t);
    assert_eq!(named("use logbook::ops::{run, team};"), ["ops::team"]);
    assert_eq!(
        named("use logbook::ops::{\n    query,\n    team::{self, push},\n};"),
        ["ops::team"]
    );
    assert_eq!(named("logbook::ops::team::install(x);"), ["ops::team"]);
    assert_eq!(
        named("use logbook::{catalog::Catalog, ops::run};"),
        ["logbook::catalog"]
    );
    for fine in [
        "// logbook::ops::team in a comment\n",
        "use logbook::ops::query::{self, Scope};\nScope::Team",
        "use logbook::ops::catalog;\ncatalog::push(p, None)",
        "let teams = ops::teams::x;",
    ] {
        assert!(named(fine).is_empty(), "{fine:?}: {:?}", named(fine));
    }
}

/// What only some Unix systems have: `statx`, `getdents64` through
/// `RawDir`, `O_PATH` and `AT_EMPTY_PATH`. Only `store::sys`'s Linux half
/// names them, so macOS compiles everything else unchanged.
const LINUX_ONLY: [&str; 5] = ["statx", "Statx", "RawDir", "OFlags::PATH", "EMPTY_PATH"];

/// rustix's file-system module, whose Linux-only items these are: named
/// only in `store::sys`, so what differs between systems stays there.
const SYS_ONLY: &str = "rustix::fs";

/// The names of `names` in `text`'s code (comments left out), as (line
/// number, name).
fn names_in(text: &str, names: &[&'static str]) -> Vec<(usize, &'static str)> {
    let mut found = vec![];
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for name in names {
            if code.contains(name) {
                found.push((n + 1, *name));
            }
        }
    }
    found
}

/// [`LINUX_ONLY`] and [`SYS_ONLY`] in `text`'s code.
fn linux_only_names(text: &str) -> Vec<(usize, &'static str)> {
    let mut all = vec![SYS_ONLY];
    all.extend(LINUX_ONLY);
    names_in(text, &all)
}

#[test]
fn only_store_sys_names_what_some_unix_lacks() {
    let root = crates().join("..");
    let sys = root.join("crates/logbook-store/src/sys");
    let mut files = vec![];
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let krate = krate.unwrap().path();
        for part in ["src", "tests", "benches"] {
            if krate.join(part).is_dir() {
                rust_files(&krate.join(part), &mut files);
            }
        }
    }
    let mut found = vec![];
    // This file names them as data.
    let this = root.join("crates/logbook/tests/it/layers.rs");
    for file in files.iter().filter(|f| !f.starts_with(&sys) && **f != this) {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, name) in linux_only_names(&text) {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            found.push(format!("{}:{line}: {name}", shown.display()));
        }
    }
    assert!(files.len() > 100, "only {} files found", files.len());
    assert!(
        found.is_empty(),
        "names some Unix lacks, outside store::sys (add what you need to store::sys, with a portable half):\n{}",
        found.join("\n")
    );
    // The Linux half is compiled for Linux only, and is the only one that
    // may name them.
    let module = std::fs::read_to_string(sys.join("mod.rs")).unwrap();
    assert!(
        module.contains("#[cfg(target_os = \"linux\")]\npub mod linux;"),
        "store::sys's Linux half must be #[cfg(target_os = \"linux\")]"
    );
    let portable = std::fs::read_to_string(sys.join("portable.rs")).unwrap();
    assert_eq!(names_in(&portable, &LINUX_ONLY), [], "the portable half");
    let linux = std::fs::read_to_string(sys.join("linux.rs")).unwrap();
    assert!(!names_in(&linux, &LINUX_ONLY).is_empty(), "the Linux half");
}

#[test]
fn the_linux_only_checker_sees_code_not_comments() {
    let text = "use rustix::fs::statx;\n// a `statx` in a comment\nlet m = sys::stat_at(fd, p);\nlet f = OFlags::PATH | x;\n";
    assert_eq!(
        linux_only_names(text),
        [(1, "rustix::fs"), (1, "statx"), (4, "OFlags::PATH")]
    );
}

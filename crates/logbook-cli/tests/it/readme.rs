//! README.md's `sh` blocks, run top to bottom in an empty folder with the
//! real binary as `logbook` on PATH: every example a reader copies works as
//! written. Two commands get stand-ins. `cargo run … -p logbook-cli --`
//! runs the binary under test, and installing does nothing. The test
//! command, `scripts/test`, runs the suite this very test is part of, so
//! the empty folder gets a `scripts/test` that only notes it ran; instead
//! the real one is checked where it stands: in the repository, executable,
//! running `cargo test --workspace --locked`, and called by `.ci/run`.

use std::path::Path;
use std::process::Command;

use crate::harness::bin;

/// The bodies of the ```sh blocks of `markdown`, in order.
fn sh_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = vec![];
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match &mut current {
            None if line.trim_end() == "```sh" => current = Some(String::new()),
            Some(body) if line.trim_end() == "```" => {
                blocks.push(std::mem::take(body));
                current = None;
            }
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    blocks
}

const PREAMBLE: &str = "set -euo pipefail\n";

/// `cargo` as the README uses it: `cargo run … -p logbook-cli --` execs the
/// binary under test (so `cargo run … serve &` leaves `$!` naming the
/// server, as real cargo does on Unix); installing does nothing.
const CARGO: &str = r#"#!/usr/bin/env bash
case "$*" in
    "run --release -p logbook-cli -- "*) shift 5; exec logbook "$@" ;;
    "install --path crates/logbook-cli --locked") ;;
    *) echo "README test: unexpected cargo $*" >&2; exit 1 ;;
esac
"#;

/// The test command's stand-in: it leaves a mark, so the test knows the
/// README really ran it.
const TEST_COMMAND: &str = "#!/usr/bin/env bash\ntouch scripts/test-ran\n";

/// The real `scripts/test` is what README's test command runs, so it must
/// be there, be executable, run the whole suite, and be what CI runs.
#[test]
fn the_readme_test_command_is_the_one_ci_runs() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = repo.join("scripts/test");
    let mode = std::fs::metadata(&script).unwrap().permissions().mode();
    assert!(
        mode & 0o111 != 0,
        "scripts/test is not executable ({mode:o})"
    );
    let lines = |path: &Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert!(
        lines(&script)
            .iter()
            .any(|l| l == "cargo test --workspace --locked"),
        "scripts/test does not run `cargo test --workspace --locked`"
    );
    assert!(
        lines(&repo.join(".ci/run"))
            .iter()
            .any(|l| l == "scripts/test"),
        ".ci/run does not call scripts/test"
    );
}

#[test]
fn every_shell_block_of_the_readme_runs_top_to_bottom() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let blocks = sh_blocks(&text);
    assert!(blocks.len() >= 6, "only {} sh blocks found", blocks.len());
    let first = blocks[0]
        .lines()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .unwrap_or_default();
    assert!(
        first.starts_with("cargo run --release -p logbook-cli -- demo")
            && blocks[0].contains("serve")
            && blocks[0].contains("cargo run --release -p logbook-cli -- start")
            && blocks[0].lines().any(|l| l.trim() == "scripts/test"),
        "the quickstart must start with the demo and the viewer, and give the main job and the test command:\n{}",
        blocks[0]
    );

    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("project");
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(bin(), bin_dir.join("logbook")).unwrap();
    let cargo = bin_dir.join("cargo");
    std::fs::write(&cargo, CARGO).unwrap();
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let test_command = work.join("scripts/test");
    std::fs::create_dir_all(work.join("scripts")).unwrap();
    std::fs::write(&test_command, TEST_COMMAND).unwrap();
    std::fs::set_permissions(
        &test_command,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut script = String::from(PREAMBLE);
    for (i, block) in blocks.iter().enumerate() {
        script.push_str(&format!("echo '--- README block {}' >&2\n", i + 1));
        script.push_str(block);
    }
    script.push_str("echo README-DONE\n");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("PATH", path)
        .env("HOME", dir.path())
        .env("TMPDIR", dir.path())
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .env("USER", "tester")
        .env_remove("LOGBOOK_ROOT")
        .env_remove("LOGBOOK_NOW")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("README-DONE"),
        "README blocks failed ({:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    // The examples really did their work.
    assert!(
        work.join("scripts/test-ran").exists(),
        "README's test command never ran"
    );
    assert!(work.join(".logbook/sessions/archive").is_dir());
    assert!(
        stdout.contains("graph"),
        "lineage --format mermaid printed nothing"
    );
}

#[test]
fn the_block_reader_finds_only_sh_blocks() {
    let md = "a\n```sh\necho 1\n```\n```yaml\nx: 1\n```\n```sh\necho 2\necho 3\n```\n";
    assert_eq!(sh_blocks(md), ["echo 1\n", "echo 2\necho 3\n"]);
}

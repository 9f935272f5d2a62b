//! `logbook hooks install | uninstall | status`: Logbook's entries in the
//! settings files of Claude Code and Codex, merged among other tools'
//! hooks and settings, atomically and with a backup.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::harness::{Run, TestProject, bin};

/// A temp project whose HOME is its own `home/`, so `--user` and `status`
/// never see the real `~/.claude` or `~/.codex`.
struct HooksProject {
    t: TestProject,
}

impl HooksProject {
    fn new() -> Self {
        let t = TestProject::new();
        std::fs::create_dir_all(t.path("home")).unwrap();
        HooksProject { t }
    }

    fn home(&self) -> PathBuf {
        self.t.path("home")
    }

    /// `LOGBOOK ARGS` in the project, with a clean environment: no inherited
    /// LOGBOOK_*, CLAUDE_CONFIG_DIR or CODEX_HOME, and HOME at `home/`.
    fn cmd_with(&self, logbook: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(logbook);
        c.args(args)
            .current_dir(self.t.root())
            .env_remove("LOGBOOK_ROOT")
            .env_remove("LOGBOOK_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env("HOME", self.home())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        c
    }

    /// A backup kept in the per-user home's state folder (the test project
    /// has no `.logbook/` of its own).
    fn user_backup(&self, name: &str) -> PathBuf {
        self.home()
            .join(".local/share/logbook/.logbook/backups")
            .join(name)
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(Path::new(bin()), args)
    }

    fn run_with(&self, logbook: &Path, args: &[&str]) -> Run {
        self.cmd_with(logbook, args).output().unwrap().into()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).json()
    }

    fn read_json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.t.read(rel)).unwrap()
    }
}

/// The command Logbook installs for the binary under test.
fn own_command() -> String {
    // The path as invoked, never resolved through links.
    format!("{} hook", bin())
}

/// Every (event, command) of Logbook's handlers in a settings value.
fn logbook_entries(v: &Value) -> Vec<(String, String)> {
    let mut out = vec![];
    for (event, groups) in v["hooks"].as_object().into_iter().flatten() {
        for g in groups.as_array().into_iter().flatten() {
            for h in g["hooks"].as_array().into_iter().flatten() {
                let cmd = h["command"].as_str().unwrap_or_default();
                if cmd.ends_with("logbook hook") || cmd.contains("logbook hook;") {
                    out.push((event.clone(), cmd.to_string()));
                }
            }
        }
    }
    out
}

const CLAUDE_EVENTS: [&str; 5] = [
    "SessionStart",
    "PreCompact",
    "Stop",
    "SubagentStop",
    "SessionEnd",
];
const CODEX_EVENTS: [&str; 5] = [
    "SessionStart",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStop",
];

/// A Claude Code settings file as people have them: permissions, another
/// tool's hooks on two of Logbook's events and one of its own, and keys
/// nobody here knows.
fn claude_settings() -> Value {
    json!({
        "permissions": {"allow": ["Bash(cargo test:*)"], "deny": []},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh", "timeout": 5}]}],
            "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi", "x-extra": true}]}]
        },
        "x-unknown": {"nested": [1, 2.50, 123456789012345678901234567890u128.to_string()]},
        "env": {"FOO": "bar"}
    })
}

#[test]
fn install_merges_among_other_hooks_and_uninstall_removes_only_logbook() {
    let p = HooksProject::new();
    let original = claude_settings();
    let text = serde_json::to_string_pretty(&original).unwrap() + "\n";
    p.t.write(".claude/settings.local.json", &text);

    let out = p.json(&["hooks", "install", "claude-code"]);
    assert_eq!(out["action"], "installed");
    assert_eq!(out["scope"], "local");
    assert_eq!(out["command"], own_command());
    let backup = p.user_backup("claude-settings.local.json.1");
    assert_eq!(out["backup"], backup.display().to_string());
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), text);

    let v = p.read_json(".claude/settings.local.json");
    // Keys keep their order; other tools' entries come first, untouched.
    let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["permissions", "hooks", "x-unknown", "env"]);
    assert_eq!(v["hooks"]["PreToolUse"], original["hooks"]["PreToolUse"]);
    assert_eq!(v["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(
        v["hooks"]["SessionStart"][0],
        original["hooks"]["SessionStart"][0]
    );
    assert_eq!(v["x-unknown"], original["x-unknown"]);
    let mut events: Vec<_> = logbook_entries(&v).into_iter().map(|(e, _)| e).collect();
    events.sort();
    let mut want: Vec<_> = CLAUDE_EVENTS.iter().map(|e| e.to_string()).collect();
    want.sort();
    assert_eq!(events, want);
    let ours = &v["hooks"]["Stop"][1]["hooks"][0];
    assert_eq!(
        ours,
        &json!({"type": "command", "command": own_command(), "timeout": 10})
    );

    let out = p.json(&["hooks", "uninstall", "claude-code"]);
    assert_eq!(out["action"], "removed");
    assert_eq!(p.read_json(".claude/settings.local.json"), original);
    // Nothing left to remove: nothing written.
    let out = p.json(&["hooks", "uninstall", "claude-code"]);
    assert_eq!(out["action"], "not_installed");
    assert_eq!(out["changed"], false);
}

#[test]
fn codex_gets_its_own_events_in_its_hooks_file() {
    let p = HooksProject::new();
    let original = json!({
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "python3 ~/.codex/stop.py", "timeoutSec": 30}]}]},
        "x-note": "kept"
    });
    p.t.write(".codex/hooks.json", &original.to_string());
    let out = p.json(&["hooks", "install", "codex"]);
    assert_eq!(out["action"], "installed");
    assert_eq!(out["scope"], "project");
    assert_eq!(out["events"], json!(CODEX_EVENTS));
    let v = p.read_json(".codex/hooks.json");
    assert_eq!(v["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(v["x-note"], "kept");
    let entries = logbook_entries(&v);
    assert_eq!(entries.len(), 5);
    assert!(entries.iter().all(|(_, c)| *c == own_command()));
    // Codex reads `timeout` in seconds.
    assert_eq!(v["hooks"]["PostCompact"][0]["hooks"][0]["timeout"], 10);
    assert!(v["hooks"].get("SessionEnd").is_none());
    p.json(&["hooks", "uninstall", "codex"]);
    assert_eq!(p.read_json(".codex/hooks.json"), original);
}

#[test]
fn a_second_install_changes_nothing_and_keeps_no_second_backup() {
    let p = HooksProject::new();
    // No file yet: the folder is made, and there is nothing to back up.
    let out = p.json(&["hooks", "install", "claude-code"]);
    assert_eq!(out["action"], "installed");
    assert_eq!(out["backup"], Value::Null);
    let file = p.t.path(".claude/settings.local.json");
    let backup = p.user_backup("claude-settings.local.json.1");
    assert!(!backup.exists());
    let first = std::fs::read(&file).unwrap();
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();

    let run = p.run(&["hooks", "install", "claude-code"]);
    assert!(run.ok().contains("already installed"), "{}", run.stdout);
    assert_eq!(std::fs::read(&file).unwrap(), first);
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), mtime);
    assert!(!backup.exists());
    let out = p.json(&["hooks", "install", "claude-code"]);
    assert_eq!(out["action"], "already_installed");
    assert_eq!(out["changed"], false);
    // Only the project's files: nothing of Logbook's in the repository.
    let names: Vec<_> = std::fs::read_dir(p.t.path(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["settings.local.json"]);
    assert!(!p.t.path(".logbook").exists());
}

/// A copy of the binary under test at a path of its own.
fn copied_logbook(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let copy = dir.join("logbook");
    std::fs::copy(bin(), &copy).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

#[test]
fn an_install_from_another_logbook_updates_the_entries_in_place() {
    let p = HooksProject::new();
    let other = copied_logbook(&p.t.path("other bin"));
    let run = p.run_with(&other, &["--json", "hooks", "install", "codex"]);
    let out = run.json();
    let quoted = format!("'{}' hook", other.display());
    assert_eq!(out["command"], quoted);
    let v = p.read_json(".codex/hooks.json");
    assert!(logbook_entries(&v).iter().all(|(_, c)| *c == quoted));

    let out = p.json(&["hooks", "install", "codex"]);
    assert_eq!(out["action"], "updated");
    let v = p.read_json(".codex/hooks.json");
    let entries = logbook_entries(&v);
    assert_eq!(entries.len(), 5, "{v:#}");
    assert!(entries.iter().all(|(_, c)| *c == own_command()));
    // Updated where they were: one group per event, none added.
    for e in CODEX_EVENTS {
        assert_eq!(v["hooks"][e].as_array().unwrap().len(), 1, "{e}");
    }
}

#[test]
fn status_says_what_is_installed_where_and_whether_logbook_is_still_there() {
    let p = HooksProject::new();
    let rows = p.json(&["hooks", "status"]);
    let rows = rows.as_array().unwrap();
    let scopes: Vec<_> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["agent"].as_str().unwrap(),
                r["scope"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        scopes,
        [
            "claude-code local",
            "claude-code shared",
            "claude-code user",
            "codex project",
            "codex user"
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r["installed"] == false && r["exists"] == false)
    );

    let copy = copied_logbook(&p.t.path("tmpbin"));
    p.run_with(&copy, &["hooks", "install", "claude-code", "--user"])
        .ok();
    let rows = p.json(&["hooks", "status", "claude-code"]);
    let user = &rows.as_array().unwrap()[2];
    assert_eq!(user["scope"], "user");
    assert_eq!(user["installed"], true);
    assert_eq!(
        user["file"],
        p.home().join(".claude/settings.json").display().to_string()
    );
    assert_eq!(user["events"].as_array().unwrap().len(), 5);
    let program = copy.display().to_string();
    assert_eq!(user["program"], program);
    assert_eq!(user["program_exists"], true);

    std::fs::remove_file(&copy).unwrap();
    let rows = p.json(&["hooks", "status", "claude-code"]);
    assert_eq!(rows[2]["program_exists"], false);
    let human = p.run(&["hooks", "status", "claude-code"]);
    assert!(human.ok().contains("MISSING"), "{}", human.stdout);
    assert_eq!(rows[0]["installed"], false);
}

#[test]
fn user_scope_honours_the_agents_own_folder_variables() {
    let p = HooksProject::new();
    let claude_dir = p.t.path("claude-config");
    let codex_dir = p.t.path("codex-home");
    for (agent, var, dir, file) in [
        (
            "claude-code",
            "CLAUDE_CONFIG_DIR",
            &claude_dir,
            "settings.json",
        ),
        ("codex", "CODEX_HOME", &codex_dir, "hooks.json"),
    ] {
        let run: Run = p
            .cmd_with(
                Path::new(bin()),
                &["--json", "hooks", "install", agent, "--user"],
            )
            .env(var, dir)
            .output()
            .unwrap()
            .into();
        assert_eq!(run.json()["file"], dir.join(file).display().to_string());
    }
    assert_eq!(
        logbook_entries(
            &serde_json::from_str(&std::fs::read_to_string(codex_dir.join("hooks.json")).unwrap())
                .unwrap()
        )
        .len(),
        5
    );
    // Without them, HOME.
    let out = p.json(&["hooks", "install", "codex", "--user"]);
    assert_eq!(
        out["file"],
        p.home().join(".codex/hooks.json").display().to_string()
    );
    assert!(!p.t.path(".codex").exists());
}

#[test]
fn a_read_only_file_is_refused_and_left_as_it_was() {
    let p = HooksProject::new();
    let file = p.t.write(".claude/settings.local.json", "{\"x\": 1}\n");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let run = p.run(&["hooks", "install", "claude-code"]);
    let err = run.err();
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(
        err.contains("read-only") && err.contains("chmod u+w"),
        "{err}"
    );
    assert_eq!(p.t.read(".claude/settings.local.json"), "{\"x\": 1}\n");
    assert!(!p.user_backup("claude-settings.local.json.1").exists());
}

#[test]
fn a_file_logbook_cannot_read_is_never_overwritten() {
    let p = HooksProject::new();
    for (text, says) in [
        (
            "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n",
            "line 3 column",
        ),
        ("[1, 2]", "not an object"),
        ("{\"hooks\": [\"x\"]}", "\"hooks\" is a JSON array"),
        ("{\"hooks\": {\"Stop\": {}}}", "\"Stop\" is a JSON object"),
    ] {
        p.t.write(".claude/settings.json", text);
        let run = p.run(&["hooks", "install", "claude-code", "--shared"]);
        let err = run.err();
        assert!(
            err.contains("settings.json") && err.contains(says),
            "{text}: {err}"
        );
        assert_eq!(p.t.read(".claude/settings.json"), text);
        // Uninstall and status do not write it either, and status says why.
        p.run(&["hooks", "uninstall", "claude-code", "--shared"]);
        assert_eq!(p.t.read(".claude/settings.json"), text);
    }
    p.t.write(".claude/settings.json", "{\"hooks\": ");
    let rows = p.json(&["hooks", "status", "claude-code"]);
    let error = rows[1]["error"].as_str().unwrap();
    assert!(
        error.contains("settings.json") && error.contains("line 1"),
        "{error}"
    );
}

#[test]
fn a_symlinked_settings_file_is_not_replaced() {
    let p = HooksProject::new();
    let target = p.t.write("dotfiles/claude.json", "{}\n");
    std::fs::create_dir_all(p.t.path(".claude")).unwrap();
    let link = p.t.path(".claude/settings.local.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = p
        .run(&["hooks", "install", "claude-code"])
        .err()
        .to_string();
    assert!(
        err.contains("symbolic link") && err.contains("dotfiles/claude.json"),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(p.t.read("dotfiles/claude.json"), "{}\n");
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let p = HooksProject::new();
    p.t.write(".codex/hooks.json", "{\"x-keep\": true}\n");
    let run = p.run(&["hooks", "install", "codex", "--dry-run"]);
    let out = run.ok();
    assert!(out.contains("--- ") && out.contains("+++ "), "{out}");
    assert!(
        out.contains(&format!("+            \"command\": \"{}\",", own_command())),
        "{out}"
    );
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert_eq!(p.t.read(".codex/hooks.json"), "{\"x-keep\": true}\n");
    assert!(!p.user_backup("codex-hooks.json.1").exists());
    // No file and no folder: none made.
    let out = p.json(&["hooks", "install", "claude-code", "--dry-run"]);
    assert_eq!(out["dry_run"], true);
    assert_eq!(out["changed"], true);
    assert!(out["diff"].as_str().unwrap().contains("+  \"hooks\": {"));
    assert!(!p.t.path(".claude").exists());
    // Uninstall previews too.
    p.json(&["hooks", "install", "codex"]);
    let before = p.t.read(".codex/hooks.json");
    let out = p.json(&["hooks", "uninstall", "codex", "--dry-run"]);
    assert_eq!(out["action"], "removed");
    assert!(
        out["diff"]
            .as_str()
            .unwrap()
            .contains("-            \"timeout\": 10")
    );
    assert_eq!(p.t.read(".codex/hooks.json"), before);
}

/// Runs a hook command as the agents do (`sh -c COMMAND`), with `path` as
/// PATH and an event on stdin.
fn run_hook_command(command: &str, path: &str) -> Run {
    let mut child = Command::new("/bin/sh")
        .args(["-c", command])
        .env_clear()
        .env("PATH", path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // A command that exits without reading its stdin closes the pipe: as
    // for an agent, that is no failure of the hook.
    let _ = child.stdin.take().unwrap().write_all(
        br#"{"session_id":"s","hook_event_name":"Stop","cwd":"/tmp","transcript_path":null}"#,
    );
    child.wait_with_output().unwrap().into()
}

#[test]
fn the_shared_command_is_silent_and_succeeds_without_logbook_or_when_it_fails() {
    let p = HooksProject::new();
    let out = p.json(&["hooks", "install", "claude-code", "--shared"]);
    assert_eq!(
        out["file"],
        p.t.path(".claude/settings.json").display().to_string()
    );
    let v = p.read_json(".claude/settings.json");
    let command = v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(out["command"], command);
    assert!(
        !command.contains('/') || command.starts_with("sh -c"),
        "{command}"
    );

    // A PATH with the shell's tools and no logbook.
    let empty = p.t.path("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let no_logbook = format!("{}:/usr/bin:/bin", empty.display());
    let probe = run_hook_command("command -v logbook", &no_logbook);
    assert_ne!(
        probe.code, 0,
        "a logbook is on {no_logbook}: {}",
        probe.stdout
    );
    let run = run_hook_command(&command, &no_logbook);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );

    // A logbook that fails still leaves the agent a success.
    let failing = p.t.path("failing-bin");
    std::fs::create_dir_all(&failing).unwrap();
    let fake = failing.join("logbook");
    std::fs::write(&fake, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = run_hook_command(&command, &format!("{}:/usr/bin:/bin", failing.display()));
    assert_eq!(run.code, 0, "{run:?}");

    // And one that works gets the event on stdin and answers through.
    let echo = p.t.path("echo-bin");
    std::fs::create_dir_all(&echo).unwrap();
    let fake = echo.join("logbook");
    std::fs::write(&fake, "#!/bin/sh\n[ \"$1\" = hook ] && cat\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = run_hook_command(&command, &format!("{}:/usr/bin:/bin", echo.display()));
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("\"hook_event_name\":\"Stop\""),
        "{run:?}"
    );
}

#[test]
fn the_project_is_the_nearest_logbook_project_else_the_git_root() {
    let p = HooksProject::new();
    std::fs::create_dir_all(p.t.path("repo/.git")).unwrap();
    std::fs::create_dir_all(p.t.path("repo/src/deep")).unwrap();
    let run: Run = p
        .cmd_with(
            Path::new(bin()),
            &["--json", "hooks", "install", "codex", "--dry-run"],
        )
        .current_dir(p.t.path("repo/src/deep"))
        .output()
        .unwrap()
        .into();
    assert_eq!(
        run.json()["file"],
        p.t.path("repo/.codex/hooks.json").display().to_string()
    );
    p.t.write("repo/src/logbook.yaml", "");
    let run: Run = p
        .cmd_with(
            Path::new(bin()),
            &["--json", "hooks", "install", "codex", "--dry-run"],
        )
        .current_dir(p.t.path("repo/src/deep"))
        .output()
        .unwrap()
        .into();
    assert_eq!(
        run.json()["file"],
        p.t.path("repo/src/.codex/hooks.json").display().to_string()
    );
}

#[test]
fn user_and_shared_cannot_be_combined() {
    let p = HooksProject::new();
    p.run(&["hooks", "install", "claude-code", "--user", "--shared"])
        .usage();
    p.run(&["hooks", "install", "cursor"]).usage();
}

#[test]
fn a_private_file_stays_private_and_so_does_its_backup() {
    let p = HooksProject::new();
    let file = p.t.write(
        ".claude/settings.json",
        "{\"env\": {\"TOKEN\": \"secret\"}}",
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    p.json(&["hooks", "install", "claude-code", "--shared"]);
    let mode = |rel: &str| {
        std::fs::metadata(p.t.path(rel))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode(".claude/settings.json"), 0o600);
    let backup = p.user_backup("claude-settings.json.1");
    assert_eq!(
        std::fs::metadata(backup).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // A file without a final newline is written without one.
    assert!(!p.t.read(".claude/settings.json").ends_with('\n'));
    assert_eq!(
        p.read_json(".claude/settings.json")["env"]["TOKEN"],
        "secret"
    );
}

#[test]
fn an_install_names_the_other_files_that_already_run_the_hook() {
    let p = HooksProject::new();
    let out = p.json(&["hooks", "install", "claude-code", "--shared"]);
    assert_eq!(out["also_in"], json!([]));
    let out = p.json(&["hooks", "install", "claude-code"]);
    assert_eq!(
        out["also_in"],
        json!([p.t.path(".claude/settings.json").display().to_string()])
    );
    let human = p.run(&["hooks", "install", "claude-code"]);
    assert!(human.ok().contains("runs both"), "{}", human.stdout);
    // Another agent's files are not counted.
    let out = p.json(&["hooks", "install", "codex"]);
    assert_eq!(out["also_in"], json!([]));
}

/// The mode bits of the file or folder at `path`.
fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn backups_go_to_the_project_state_folder_private_and_never_overwritten() {
    let p = HooksProject::new();
    p.run(&["init"]).ok();
    let original = "{\"env\": {\"ANTHROPIC_API_KEY\": \"sk-ant-test-0042\"}}\n";
    p.t.write(".claude/settings.local.json", original);
    let out = p.json(&["hooks", "install", "claude-code"]);
    let backups = p.t.path(".logbook/backups");
    let first = backups.join("claude-settings.local.json.1");
    assert_eq!(out["backup"], first.display().to_string());
    assert_eq!(std::fs::read_to_string(&first).unwrap(), original);
    assert_eq!(mode_of(&first), 0o600);
    assert_eq!(mode_of(&backups), 0o700);
    let installed = p.t.read(".claude/settings.local.json");

    // Uninstall keeps a copy of its own and leaves the first as it was.
    let out = p.json(&["hooks", "uninstall", "claude-code"]);
    let second = backups.join("claude-settings.local.json.2");
    assert_eq!(out["backup"], second.display().to_string());
    assert_eq!(std::fs::read_to_string(&first).unwrap(), original);
    assert_eq!(std::fs::read_to_string(&second).unwrap(), installed);

    // The committed file's backup stays out of the committed folder too.
    p.t.write(".claude/settings.json", "{\"model\": \"opus\"}\n");
    let out = p.json(&["hooks", "install", "claude-code", "--shared"]);
    let shared = backups.join("claude-settings.json.1");
    assert_eq!(out["backup"], shared.display().to_string());
    let mut names: Vec<_> = std::fs::read_dir(p.t.path(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["settings.json", "settings.local.json"]);
}

#[test]
fn the_command_names_logbook_as_invoked_not_the_version_a_link_points_to() {
    let p = HooksProject::new();
    // A Homebrew-style layout: bin/logbook -> ../Cellar/logbook/1.2/bin/logbook.
    copied_logbook(&p.t.path("brew/Cellar/logbook/1.2/bin"));
    std::fs::create_dir_all(p.t.path("brew/bin")).unwrap();
    let link = p.t.path("brew/bin/logbook");
    std::os::unix::fs::symlink("../Cellar/logbook/1.2/bin/logbook", &link).unwrap();
    let out = p
        .run_with(&link, &["--json", "hooks", "install", "codex"])
        .json();
    assert_eq!(out["command"], format!("{} hook", link.display()));
    // Found on PATH by its bare name: the PATH entry, not the Cellar.
    let run: Run = p
        .cmd_with(
            Path::new("logbook"),
            &["--json", "hooks", "install", "claude-code"],
        )
        .env("PATH", p.t.path("brew/bin"))
        .output()
        .unwrap()
        .into();
    assert_eq!(run.json()["command"], format!("{} hook", link.display()));
    let v = p.read_json(".claude/settings.local.json");
    assert!(
        logbook_entries(&v)
            .iter()
            .all(|(_, c)| *c == format!("{} hook", link.display()))
    );
}

#[test]
fn a_settings_folder_that_is_a_symlink_is_not_written_through() {
    let p = HooksProject::new();
    let elsewhere = p.t.path("shared-config/claude");
    std::fs::create_dir_all(&elsewhere).unwrap();
    p.t.write("shared-config/claude/settings.json", "{\"model\": \"x\"}\n");
    std::os::unix::fs::symlink(&elsewhere, p.t.path(".claude")).unwrap();
    for args in [
        &["hooks", "install", "claude-code"][..],
        &["hooks", "install", "claude-code", "--shared"],
        &["hooks", "install", "claude-code", "--dry-run"],
    ] {
        let err = p.run(args).err().to_string();
        assert!(
            err.contains("symbolic link")
                && err.contains("shared-config/claude")
                && err.contains("replace the link with a real folder"),
            "{err}"
        );
    }
    let names: Vec<_> = std::fs::read_dir(&elsewhere)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["settings.json"]);
    assert_eq!(
        p.t.read("shared-config/claude/settings.json"),
        "{\"model\": \"x\"}\n"
    );
}

#[test]
fn an_entry_behind_a_compact_matcher_is_not_installed_until_it_fires_on_every_start() {
    let p = HooksProject::new();
    let filtered = json!({"hooks": {"SessionStart": [{"matcher": "compact", "hooks": [
        {"type": "command", "command": "banner.sh"},
        {"type": "command", "command": own_command(), "timeout": 10}
    ]}]}});
    p.t.write(
        ".claude/settings.local.json",
        &serde_json::to_string_pretty(&filtered).unwrap(),
    );
    p.json(&["hooks", "install", "claude-code"]);
    let v = p.read_json(".claude/settings.local.json");
    let groups = v["hooks"]["SessionStart"].as_array().unwrap();
    // The other tool's group keeps its matcher and its own handler only.
    assert_eq!(
        groups[0],
        json!({"matcher": "compact", "hooks": [{"type": "command", "command": "banner.sh"}]})
    );
    assert_eq!(groups.len(), 2, "{groups:?}");
    assert!(groups[1].get("matcher").is_none(), "{groups:?}");
    assert_eq!(groups[1]["hooks"][0]["command"], own_command());
    let local = |rows: &Value| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["agent"] == "claude-code" && r["scope"] == "local")
            .cloned()
            .unwrap()
    };
    assert_eq!(local(&p.json(&["hooks", "status"]))["installed"], true);

    // Put back behind the matcher by hand: status no longer says installed.
    let mut all = filtered.clone();
    for e in CLAUDE_EVENTS.iter().filter(|e| **e != "SessionStart") {
        all["hooks"][e] = json!([{"hooks": [{"type": "command", "command": own_command()}]}]);
    }
    p.t.write(
        ".claude/settings.local.json",
        &serde_json::to_string_pretty(&all).unwrap(),
    );
    let row = local(&p.json(&["hooks", "status"]));
    assert_eq!(row["installed"], false, "{row}");
    assert_eq!(row["missing_events"], json!(["SessionStart"]), "{row}");
}

/// `git ARGS` in the test project, its output if it succeeded.
fn git(p: &HooksProject, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(p.t.root())
        .env("HOME", p.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn git_add_all_commits_work_sessions_and_nothing_machine_local() {
    let p = HooksProject::new();
    git(&p, &["init", "-q"]);
    p.t.run(&["init"]).ok();
    p.t.run(&["start", "--client", "ACME", "--project", "LEAK", "--yes"])
        .ok();
    p.t.write(
        ".claude/settings.local.json",
        "{\"env\": {\"ANTHROPIC_API_KEY\": \"sk-ant-test-4444\"}}\n",
    );
    p.run(&["hooks", "install", "claude-code"]).ok();
    let fixture = crate::harness::shared("fixtures/transcript-main.json");
    p.t.run(&["transcript", "import", fixture.to_str().unwrap()])
        .ok();
    // What would leak, there to be left out.
    for machine_local in ["index.db", "locks", "backups", "transcripts"] {
        assert!(
            p.t.path(".logbook").join(machine_local).exists(),
            "{machine_local}"
        );
    }
    git(&p, &["add", "-A"]);
    let files = git(&p, &["ls-files"]);
    let state: Vec<_> = files
        .lines()
        .filter(|f| f.starts_with(".logbook/"))
        .collect();
    assert!(
        state
            .iter()
            .all(|f| *f == ".logbook/.gitignore" || f.starts_with(".logbook/sessions/")),
        "{files}"
    );
    assert!(
        state.iter().any(|f| f.starts_with(".logbook/sessions/")),
        "{files}"
    );
    assert!(
        !files.contains("sk-ant") && !files.contains("backup"),
        "{files}"
    );
    let staged = git(&p, &["status", "--porcelain"]);
    assert!(staged.contains("A  .logbook/.gitignore"), "{staged}");
}

#[test]
fn install_and_uninstall_keep_every_byte_they_do_not_own() {
    let p = HooksProject::new();
    let original = "{\n    \"cleanupPeriodDays\": 1e3,\n    \"env\": {\"GREETING\": \"caf\\u00e9\"},\n    \"x-list\": [1.50,   2]\n}\n";
    p.t.write(".claude/settings.local.json", original);
    p.json(&["hooks", "install", "claude-code"]);
    let installed = p.t.read(".claude/settings.local.json");
    assert!(
        installed.starts_with(
            "{\n    \"cleanupPeriodDays\": 1e3,\n    \"env\": {\"GREETING\": \"caf\\u00e9\"},\n    \"x-list\": [1.50,   2],\n    \"hooks\": {\n"
        ),
        "{installed}"
    );
    assert_eq!(
        logbook_entries(&p.read_json(".claude/settings.local.json")).len(),
        5
    );
    p.json(&["hooks", "uninstall", "claude-code"]);
    assert_eq!(p.t.read(".claude/settings.local.json"), original);
}

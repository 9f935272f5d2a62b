//! `TestProject`: a temp project root and a way to run the real binary in it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// The binary under test.
pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_logbook")
}

/// An error's own sentence, without `error: ` and the hint after `; `:
/// what every face says the same way (each words its own hint).
pub(crate) fn sentence(message: &str) -> &str {
    let message = message.trim_end().trim_start_matches("error: ");
    message.split("; ").next().unwrap_or(message)
}

/// A temp project root; removed when dropped.
pub(crate) struct TestProject {
    pub(crate) dir: tempfile::TempDir,
    /// Fixed "now" (RFC 3339) passed as LOGBOOK_NOW, if set.
    pub(crate) now: Option<String>,
    pub(crate) envs: Vec<(String, String)>,
}

/// A finished command: exit code, stdout, stderr.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts success and returns stdout.
    #[track_caller]
    pub(crate) fn ok(&self) -> &str {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        &self.stdout
    }

    /// Asserts failure with exit code 1 (an error neither a conflict nor
    /// a not-found) and returns stderr.
    #[track_caller]
    pub(crate) fn err(&self) -> &str {
        self.fails_with(1)
    }

    /// Asserts exit code 4: an id or file that does not exist.
    #[track_caller]
    pub(crate) fn not_found(&self) -> &str {
        self.fails_with(4)
    }

    /// Asserts exit code 3: a compare-and-swap lost, a lock not had in time.
    #[track_caller]
    pub(crate) fn conflict(&self) -> &str {
        self.fails_with(3)
    }

    /// Asserts failure with exit code `code` and `error:` on stderr, and
    /// returns stderr.
    #[track_caller]
    pub(crate) fn fails_with(&self, code: i32) -> &str {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        &self.stderr
    }

    /// Asserts bad usage (exit 2, `error:` on stderr, nothing on stdout) and
    /// returns stderr.
    #[track_caller]
    pub(crate) fn usage(&self) -> &str {
        assert_eq!(
            self.code, 2,
            "expected exit 2\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        assert!(self.stdout.is_empty(), "stdout: {}", self.stdout);
        &self.stderr
    }

    /// Asserts success and parses stdout as exactly one JSON value.
    #[track_caller]
    pub(crate) fn json(&self) -> Value {
        let out = self.ok();
        serde_json::from_str(out)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}):\n{out}"))
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl TestProject {
    pub(crate) fn new() -> Self {
        TestProject {
            dir: tempfile::Builder::new()
                .prefix("logbook-it-")
                .tempdir()
                .expect("temp dir"),
            now: None,
            envs: vec![],
        }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// A `logbook` command with the project root as working directory and a
    /// clean environment (no colour, UTC, no inherited LOGBOOK_*).
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = command_in(self.root(), args);
        if let Some(now) = &self.now {
            c.env("LOGBOOK_NOW", now);
        }
        for (k, v) in &self.envs {
            c.env(k, v);
        }
        c
    }

    /// Runs `logbook ARGS` to completion and returns it with its peak
    /// resident memory in bytes (see [`run_peak_memory`]). Fails the test
    /// past `deadline`.
    pub(crate) fn run_peak_memory(&self, args: &[&str], deadline: Duration) -> (Run, u64) {
        let mut c = self.cmd(args);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        run_peak_memory(c, deadline)
    }

    /// Runs `logbook ARGS` to completion.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.cmd(args).output().expect("run logbook").into()
    }

    /// Runs `logbook --json ARGS`, asserts success, parses stdout.
    #[track_caller]
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(&all).json()
    }

    /// `logbook --json run start --agent AGENT --workflow WORKFLOW EXTRA`:
    /// the new run (its `session_id`, `folder`, …).
    #[track_caller]
    pub(crate) fn start_run(&self, agent: &str, workflow: &str, extra: &[&str]) -> Value {
        let mut args = vec!["run", "start", "--agent", agent, "--workflow", workflow];
        args.extend_from_slice(extra);
        self.json(&args)
    }

    /// Runs `logbook --json doctor ARGS` and returns its report. Doctor
    /// exits 1 while anything is wrong (docs/interface.md), 0 when all is well;
    /// either way stdout is the report.
    #[track_caller]
    /// Runs `logbook ARGS`, failing the test if it does not finish within
    /// 20 seconds (a FIFO opened for reading blocks forever). Its output is
    /// read while it runs, so a full pipe cannot stall it.
    pub(crate) fn run_bounded(&self, args: &[&str]) -> Run {
        let child = self
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run logbook");
        let pid = child.id().to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(out) => out.expect("wait for logbook").into(),
            Err(_) => {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
                panic!("logbook {args:?} did not finish within 20 s");
            }
        }
    }

    /// Makes a FIFO at `path`: a file that blocks whoever opens it to read.
    pub(crate) fn mkfifo(&self, path: &Path) {
        let ok = Command::new("mkfifo").arg(path).status().expect("mkfifo");
        assert!(ok.success(), "mkfifo {}", path.display());
    }

    pub(crate) fn doctor(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json", "doctor"];
        all.extend_from_slice(args);
        let r = self.run_bounded(&all);
        let report: Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("doctor stdout is not one JSON value ({e}): {r:?}"));
        let findings = report["findings"].as_array().map_or(0, Vec::len);
        match r.code {
            0 => {}
            1 => {
                assert!(findings > 0, "exit 1 without findings: {r:?}");
                assert!(r.stderr.starts_with("error: "), "{r:?}");
            }
            _ => panic!("doctor exited {}: {r:?}", r.code),
        }
        report
    }

    /// Holds run `id`'s lock as another writing process would, until the
    /// returned file is dropped.
    pub(crate) fn hold_run_lock(&self, id: &str) -> std::fs::File {
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path(&format!(".logbook/locks/run-{id}.lock")))
            .expect("open the run's lock file");
        held.lock().expect("lock");
        held
    }

    pub(crate) fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path(rel);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).expect("mkdir");
        }
        std::fs::write(&p, text).expect("write");
        p
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }
}

/// Runs `c` to completion and returns it with its peak resident memory in
/// bytes, reading whichever of its stdout and stderr are piped meanwhile
/// (so a full pipe cannot stall it). Fails the test past `deadline`.
pub(crate) fn run_peak_memory(mut c: Command, deadline: Duration) -> (Run, u64) {
    let mut child = c.spawn().expect("run logbook");
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let measured = if cfg!(target_os = "linux") {
        polled_peak(child, deadline)
    } else {
        waited_peak(child, deadline)
    };
    let Some((status, peak)) = measured else {
        panic!("{c:?} did not finish within {deadline:?}");
    };
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (run, peak)
}

/// Linux: the child's VmHWM, polled from /proc while it runs (the
/// high-water mark only grows, so the last reading is the peak up to a
/// poll's time). Not `wait4`: there its figure also holds the high-water
/// mark of the address space the child's exec replaced, which for a child
/// spawned with `vfork` (as `Command` does) is this whole test process's.
/// `None` past `deadline`, the child killed.
fn polled_peak(mut child: Child, deadline: Duration) -> Option<(ExitStatus, u64)> {
    let status_path = format!("/proc/{}/status", child.id());
    let started = std::time::Instant::now();
    let mut peak_kib = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse::<u64>().ok())
        {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            return Some((status, peak_kib * 1024));
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Elsewhere (macOS, no /proc): `wait4`'s peak for this one child, whose
/// spawn starts a task of its own, converted to bytes by the crate. It
/// also covers any process the command waited for, such as `git`. `None`
/// past `deadline`, the child killed.
fn waited_peak(mut child: Child, deadline: Duration) -> Option<(ExitStatus, u64)> {
    use wait4::Wait4 as _;
    // Waited for on a thread of its own, so that the wait has a deadline.
    let pid = child.id().to_string();
    let (sender, exited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait4());
    });
    match exited.recv_timeout(deadline) {
        Ok(used) => {
            let used = used.expect("wait for logbook");
            Some((used.status, used.rusage.maxrss))
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            None
        }
    }
}

/// Reads `pipe` to its end on a thread of its own; empty when there is no
/// pipe.
fn drain(pipe: Option<impl std::io::Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut pipe) = pipe {
            pipe.read_to_string(&mut s)
                .expect("read the child's output");
        }
        s
    })
}

/// Runs `logbook ARGS` on a pseudo-terminal (`script`), feeding `input`.
pub(crate) fn on_terminal(t: &TestProject, args: &str, input: &str, no_color: bool) -> Run {
    use std::io::Write;
    let line = format!("{} {args}", bin());
    let mut c = Command::new("script");
    // util-linux's `script` takes the command as one string after `-c`
    // and passes its exit status on only with `-e`; the BSD one (macOS)
    // takes the typescript file first, then the command's own words, and
    // always passes the status on.
    if cfg!(target_os = "linux") {
        c.args(["-qec", &line, "/dev/null"]);
    } else {
        c.args(["-q", "/dev/null", "sh", "-c", &line]);
    }
    c.current_dir(t.root())
        .env_remove("LOGBOOK_ROOT")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if no_color {
        c.env("NO_COLOR", "1");
    }
    let mut child = c.spawn().expect("script (util-linux or BSD)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().into()
}

/// A file of `testdata/shared`: the repository's copies of the seeds,
/// fixtures and INTERFACE.md.
pub(crate) fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/shared")
        .join(rel)
}

/// The text of a file in `testdata/shared`.
pub(crate) fn shared_text(rel: &str) -> String {
    let p = shared(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The runs `q` finds in `scope`, every match when `q` sets no limit (the
/// library's `find` pages by default), as (id, manifest) in its order.
pub(crate) fn found(
    p: &logbook::Logbook,
    q: &logbook::model::query::RunQuery,
    scope: logbook::ops::query::Scope,
) -> Vec<(logbook::model::ids::RunId, logbook::model::run::Manifest)> {
    let q = logbook::model::query::RunQuery {
        limit: Some(q.limit.unwrap_or(1_000_000_000)),
        ..q.clone()
    };
    let opts = logbook::ops::query::FindOptions::new(scope);
    logbook::ops::query::find(p, &q, opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.run.id, h.run.manifest))
        .collect()
}

/// A `logbook` command with `root` as working directory and a clean
/// environment (no colour, UTC, no inherited LOGBOOK_*): what every test
/// runs, in a [`TestProject`] or in a project at a fixed path.
pub(crate) fn command_in(root: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(root)
        .env_remove("LOGBOOK_ROOT")
        .env_remove("LOGBOOK_NOW")
        .env_remove("LOGBOOK_LOCK_TIMEOUT")
        .env_remove("LOGBOOK_TEAM_URL")
        .env_remove("LOGBOOK_ORIGIN")
        .env_remove("LOGBOOK_FAULT")
        .env("NO_COLOR", "1")
        .env("TZ", "UTC")
        .env("USER", "tester")
        .stdin(Stdio::null());
    c
}

/// A `logbook` process held at a `LOGBOOK_FAULT` point (see the library's
/// `testing` module): a known place to kill it at, or to let it go on from.
pub(crate) struct Held {
    child: std::process::Child,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Held {
    /// Starts `cmd` with `LOGBOOK_FAULT=point:n` and returns once it
    /// stands at the point's `n`th pass; its stderr is drained meanwhile,
    /// so it never blocks on a full pipe.
    pub(crate) fn start(mut cmd: Command, point: &str, n: u32) -> Held {
        use std::io::BufRead as _;
        let mut child = cmd
            .env("LOGBOOK_FAULT", format!("{point}:{n}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let ready = format!("logbook: fault {point} {n}");
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let read = lines.read_line(&mut line).unwrap();
            assert!(read > 0, "ended before {point} {n}: {seen}");
            seen.push_str(&line);
            if line.trim_end() == ready {
                break;
            }
        }
        let stderr = std::thread::spawn(move || {
            std::io::Read::read_to_string(&mut lines, &mut seen).unwrap();
            seen
        });
        Held {
            child,
            stderr: Some(stderr),
        }
    }

    /// SIGKILL where it stands.
    pub(crate) fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// Lets it go on, and waits for it to end well.
    pub(crate) fn finish(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert!(status.success(), "{stderr}");
    }
}

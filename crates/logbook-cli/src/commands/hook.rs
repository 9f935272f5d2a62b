//! `logbook hook`: the one command the agents' hooks run. It reads one
//! event on stdin, answers within [`BUDGET`] with nothing or one JSON
//! object, and always exits 0: a hook must never stop or slow the agent.
//! What does not fit in that time is left queued and a detached
//! `logbook hook --drain` finishes it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use logbook::Logbook;
use logbook::ops::hook::{self, event::Next};
use serde_json::Value;

/// How long a hook takes at most before it answers and exits: the agents
/// wait for it, and the issue promises 2 s with room for the process to
/// start and the agent to read the answer.
const BUDGET: Duration = Duration::from_millis(1500);

/// What the agents' hooks call.
#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// Do the queued hook work and exit (what a hook starts in the background).
    #[arg(long, hide = true)]
    drain: bool,
}

enum Msg {
    Project(PathBuf),
    Answer(Option<Value>),
    Finished(Next),
}

/// Runs the hook (or the worker) and always succeeds.
pub(crate) fn main(root: Option<PathBuf>, args: &HookArgs) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    if args.drain {
        drain(&cwd, root.as_deref());
        return ExitCode::SUCCESS;
    }
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let failure_cwd = cwd.clone();
    std::thread::spawn(move || {
        // Read here, inside the budget: an agent that never closed stdin
        // must not hold the hook past its time, and one that wrote its
        // event is answered without waiting for the end of input.
        let received = logbook::model::hook::event::read_event(std::io::stdin().lock())
            .and_then(|text| hook::event::receive(&text, &cwd, root.as_deref()));
        let r = match received {
            Ok(mut r) => {
                r.project = super::context(r.project);
                r
            }
            Err(e) => {
                fail(None, &failure_cwd, "event", None, &e);
                return;
            }
        };
        let _ = tx.send(Msg::Project(r.project.root().to_path_buf()));
        let mut answered = |a| {
            let _ = tx.send(Msg::Answer(a));
        };
        match hook::event::handle(&r, &mut answered) {
            Ok(next) => {
                let _ = tx.send(Msg::Finished(next));
            }
            Err(e) => {
                let event = &r.job.event;
                fail(
                    Some(&r.project),
                    &failure_cwd,
                    &event.hook_event_name,
                    event.session_id.as_deref(),
                    &e,
                );
                // What is queued is finished in the background.
                let _ = tx.send(Msg::Finished(Next::Worker));
            }
        }
    });
    let (mut project, mut answer, mut next) = (None, None, None);
    while next.is_none() {
        let Some(left) = BUDGET.checked_sub(start.elapsed()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(Msg::Project(root)) => project = Some(root),
            Ok(Msg::Answer(a)) => answer = a,
            Ok(Msg::Finished(n)) => next = Some(n),
            // Failed before it had anything to say, or out of time.
            Err(_) => break,
        }
    }
    // Out of time with the job unfinished: it is queued, a worker ends it.
    if let Some(root) = project
        && next != Some(Next::Done)
    {
        spawn_worker(&root);
    }
    if let Some(answer) = answer {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, &answer);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
    ExitCode::SUCCESS
}

/// Records a hook's failure where `doctor` finds it: the event's project,
/// else the one the hook ran in; stderr when even that cannot be written
/// (the agents show a hook's stderr only in their debug output).
fn fail(
    project: Option<&Logbook>,
    cwd: &Path,
    event: &str,
    session: Option<&str>,
    e: &logbook::Error,
) {
    let fallback;
    let p = match project {
        Some(p) => Some(p),
        None => {
            fallback = Logbook::for_agent(cwd).ok().map(super::context);
            fallback.as_ref()
        }
    };
    let logged = p.map(|p| hook::event::log_failure(p, event, session, e));
    if !matches!(logged, Some(Ok(()))) {
        let line = format!("logbook hook: {e}");
        let _ = writeln!(std::io::stderr(), "{}", crate::printer::render(&line));
    }
}

/// Starts `logbook hook --drain` for `root`, detached from the hook: its
/// own process group, no inherited output, not waited for.
fn spawn_worker(root: &Path) {
    use std::os::unix::process::CommandExt as _;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let _ = Command::new(exe)
        .args(["hook", "--drain", "--root"])
        .arg(root)
        .env_remove("LOGBOOK_ROOT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
}

fn drain(cwd: &Path, root: Option<&Path>) {
    let project = match root {
        Some(root) => Logbook::discover(cwd, Some(root)),
        None => Logbook::for_agent(cwd),
    }
    .map(super::context);
    match project {
        Ok(p) => {
            if let Err(e) = hook::event::drain(&p, false) {
                fail(Some(&p), cwd, "worker", None, &e);
            }
        }
        Err(e) => fail(None, cwd, "worker", None, &e),
    }
}

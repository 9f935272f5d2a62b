//! Pushing this machine's waiting changes to the catalog: `team push` in
//! batches, and the bounded background push after every write.

use crate::Logbook;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{COMMAND_TIMEOUT, connector, deadline, url};
use crate::error::Result;
use logbook_index::Index;
use logbook_index::catalog::{Catalog, Change, PUSH_LANES, PushStats, lane_of};

/// Changes sent to the catalog in one transaction.
pub const BATCH: usize = 500;

/// Records a `team push` writes before it brings the server's statistics
/// up to date ([`Catalog::settle`]): a bulk push otherwise left the next
/// minute's team queries planned without them, many times slower than
/// once autovacuum has come by.
pub const SETTLE_AFTER: u64 = 1_000;

/// What [`push`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PushReport {
    /// The catalog.
    pub server: String,
    /// This machine's name in it.
    pub origin: String,
    /// Changes sent.
    pub pushed: u64,
    /// Of those, records the server wrote.
    pub written: u64,
    /// Records the server already held in that state.
    pub unchanged: u64,
    /// Records marked deleted.
    pub deleted: u64,
    /// Changes still waiting (written meanwhile, or cut off by a deadline).
    pub backlog: u64,
}

/// Sends every waiting change to the catalog (`logbook team push`), in
/// batches, reporting `(sent, total)` after each. Safe to run while other
/// processes write or push: a change is forgotten only once the server has
/// it and its record was not written again meanwhile.
pub fn push(p: &Logbook, progress: Option<&dyn Fn(u64, u64)>) -> Result<PushReport> {
    push_with(p, progress, true)
}

/// [`push`], choosing whether the secrets in what is sent are replaced by
/// `[REDACTED:kind]` (on everywhere else: the background push always
/// redacts; `team push --no-redact` sends them as they are).
pub fn push_with(
    p: &Logbook,
    progress: Option<&dyn Fn(u64, u64)>,
    redact: bool,
) -> Result<PushReport> {
    push_within(p, COMMAND_TIMEOUT, None, progress, redact)
}

fn push_within(
    p: &Logbook,
    timeout: Duration,
    stop_at: Option<Instant>,
    progress: Option<&dyn Fn(u64, u64)>,
    redact: bool,
) -> Result<PushReport> {
    let url = url(p)?;
    let index = Index::open(p)?;
    let total = index.upkeep().outbox_len()?;
    let result = (|| {
        let catalog = connector(p)?.connect(url, timeout)?;
        let push = Push {
            p,
            catalog: catalog.as_ref(),
            index: &index,
            origin: p.config.origin(),
            stop_at,
            progress,
            total,
        };
        push.run(redact)
    })();
    // Notes for `team status`; a failure to note is not the push's failure.
    let _ = match &result {
        Ok(_) => index
            .upkeep()
            .set_team_note("last_push", Some(&p.clock.now_string()))
            .and_then(|()| index.upkeep().set_team_note("last_error", None)),
        Err(e) => index
            .upkeep()
            .set_team_note("last_error", Some(&format!("{} {e}", p.clock.now_string()))),
    };
    result
}

/// One push to a connected catalog.
struct Push<'a> {
    p: &'a Logbook,
    catalog: &'a dyn Catalog,
    index: &'a Index,
    /// This machine's name in the catalog.
    origin: String,
    /// The deadline of a write's background push; `None` for `team push`.
    stop_at: Option<Instant>,
    progress: Option<&'a dyn Fn(u64, u64)>,
    /// The changes waiting when the push began.
    total: u64,
}

impl Push<'_> {
    /// Sends the waiting changes, reconciles when a full push is due, and
    /// (an explicit bulk push) settles the server's statistics.
    fn run(&self, redact: bool) -> Result<PushReport> {
        let mut report = PushReport {
            server: self.catalog.server(),
            origin: self.origin.clone(),
            ..PushReport::default()
        };
        if let Some(f) = self.progress {
            f(0, self.total);
        }
        self.send_outbox(&mut report, redact)?;
        self.reconcile_if_due(&mut report)?;
        // Only an explicit push: a write's background one has a deadline
        // to keep.
        if self.stop_at.is_none()
            && report.written >= SETTLE_AFTER
            && let Err(e) = self.catalog.settle()
        {
            self.p.notices.push(format!(
                "the push is complete, but the server's statistics were not updated ({e}); its autovacuum will"
            ));
        }
        report.backlog = self.index.upkeep().outbox_len()?;
        Ok(report)
    }

    /// Sends the outbox in batches until it is empty, the budget is spent
    /// or the deadline has passed.
    fn send_outbox(&self, report: &mut PushReport, redact: bool) -> Result<()> {
        // A bulk push (explicit, of many changes) writes over lanes and
        // leaves index work to the settle that follows it (see below); a
        // write's background push has a deadline to keep, and no settle.
        let bulk = self.stop_at.is_none() && self.total >= SETTLE_AFTER;
        // Writers may keep adding changes; a push takes what was there when
        // it began, and as much again, then leaves the rest to the next.
        let budget = self.total.saturating_mul(2) + BATCH as u64;
        // The next batch is read (index, output files, words) on another
        // thread while the server writes this one.
        let (sender, batches) = std::sync::mpsc::sync_channel::<Result<Vec<Change>>>(1);
        let p = self.p;
        std::thread::scope(|s| -> Result<()> {
            s.spawn(move || read_batches(p, &sender, redact));
            while report.pushed < budget {
                if self.stop_at.is_some_and(|t| Instant::now() >= t) {
                    break;
                }
                let Ok(batch) = batches.recv() else {
                    break;
                };
                let batch = batch?;
                if batch.is_empty() {
                    break;
                }
                self.send_batch(batch, bulk, report)?;
            }
            // Ends the reader at its next batch.
            drop(batches);
            Ok(())
        })
    }

    /// Sends one batch (over lanes when `bulk`), then forgets its changes
    /// in the outbox and reports the progress.
    fn send_batch(&self, batch: Vec<Change>, bulk: bool, report: &mut PushReport) -> Result<()> {
        let done: Vec<_> = batch
            .iter()
            .map(|c| (c.kind, c.id.clone(), c.version))
            .collect();
        let PushStats {
            written,
            unchanged,
            deleted,
        } = if bulk {
            push_lanes(self.catalog, &self.origin, batch)?
        } else {
            self.catalog.push(&self.origin, &batch, false)?
        };
        #[cfg(feature = "testing")]
        logbook_store::testing::fault("push-sent");
        self.index.upkeep().outbox_done(&done)?;
        report.pushed += done.len() as u64;
        report.written += written;
        report.unchanged += unchanged;
        report.deleted += deleted;
        if let Some(f) = self.progress {
            // Writers may have queued more since the push began.
            f(report.pushed, self.total.max(report.pushed));
        }
        Ok(())
    }

    /// Every record was queued again (a rebuilt index, a new catalog)
    /// and all of it is on the server now: what the server holds beyond
    /// it was deleted while this index was not looking.
    fn reconcile_if_due(&self, report: &mut PushReport) -> Result<()> {
        if let Some(due) = self.index.upkeep().reconcile_due()?
            && self.index.upkeep().outbox_len()? == 0
            && self.stop_at.is_none_or(|t| Instant::now() < t)
        {
            report.deleted += self
                .catalog
                .reconcile(&self.origin, &|| self.index.upkeep().live_ids())?;
            self.index.upkeep().reconciled(&due)?;
        }
        Ok(())
    }
}

/// Pushes `batch` over [`PUSH_LANES`] connections at once, each lane's
/// changes in a transaction of its own (the server takes turns per lane,
/// so no record is written by two at once), and adds up what they did.
fn push_lanes(catalog: &dyn Catalog, origin: &str, batch: Vec<Change>) -> Result<PushStats> {
    let mut lanes: Vec<Vec<Change>> = vec![vec![]; PUSH_LANES];
    for c in batch {
        lanes[lane_of(&c.id)].push(c);
    }
    let results: Vec<Result<PushStats>> = std::thread::scope(|s| {
        let running: Vec<_> = lanes
            .iter()
            .filter(|l| !l.is_empty())
            .map(|lane| s.spawn(move || catalog.push(origin, lane, true)))
            .collect();
        running
            .into_iter()
            // A lane's panic is a bug: it goes on as one here.
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut total = PushStats::default();
    for r in results {
        total += r?;
    }
    Ok(total)
}

/// Reads the outbox batch after batch for [`push_within`], until it is
/// empty, an error, or the pusher stops listening.
fn read_batches(
    p: &Logbook,
    sender: &std::sync::mpsc::SyncSender<Result<Vec<Change>>>,
    redact: bool,
) {
    let index = match Index::open(p) {
        Ok(index) => index,
        Err(e) => {
            let _ = sender.send(Err(e));
            return;
        }
    };
    let mut after = i64::MIN;
    loop {
        let (batch, last) = match index.upkeep().outbox_batch_after(after, BATCH, redact) {
            Ok(read) => read,
            Err(e) => {
                let _ = sender.send(Err(e));
                return;
            }
        };
        let end = last == after;
        after = last;
        if sender.send(Ok(batch)).is_err() || end {
            return;
        }
    }
}

/// The background push of one context: at most one runs at a time, and a
/// write while it runs asks it to go again rather than start another.
#[derive(Default)]
pub(crate) struct Background {
    state: Mutex<Running>,
    settled: Condvar,
}

#[derive(Default)]
struct Running {
    running: bool,
    again: bool,
}

/// Called after every write through the index: when the project has a team
/// catalog, pushes the waiting changes on a background thread, bounded by
/// [`deadline`]. A down or slow server only leaves them waiting.
pub(crate) fn after_write(p: &Logbook) {
    if p.config.team_url.is_none() || p.catalog().is_none() {
        return;
    }
    let background = p.background();
    let Ok(mut state) = background.state.lock() else {
        return;
    };
    if state.running {
        state.again = true;
        return;
    }
    state.running = true;
    state.again = false;
    drop(state);
    let (p, pushing) = (p.clone(), Arc::clone(&background));
    let spawned = std::thread::Builder::new()
        .name("logbook-team-push".into())
        .spawn(move || {
            loop {
                let limit = deadline();
                let _ = push_within(&p, limit, Some(Instant::now() + limit), None, true);
                let Ok(mut state) = pushing.state.lock() else {
                    return;
                };
                if !state.again {
                    state.running = false;
                    pushing.settled.notify_all();
                    return;
                }
                state.again = false;
            }
        });
    if spawned.is_err()
        && let Ok(mut state) = background.state.lock()
    {
        state.running = false;
    }
}

/// Waits for a background push to finish, at most [`deadline`] (a process
/// about to exit calls this, so its last write reaches the team when the
/// server answers, and never waits long when it does not).
pub fn settle(p: &Logbook) {
    let background = p.background();
    let Ok(state) = background.state.lock() else {
        return;
    };
    let _ = background
        .settled
        .wait_timeout_while(state, deadline(), |s| s.running);
}

//! The threads a server's library calls run on. A library call blocks
//! (SQLite, file reads, the store's locks, the team catalog's client), so
//! it runs on one of a few threads of the server's own, fed by a channel,
//! and never on the async runtime's threads: a call that waits (an index
//! another process holds, a long text query) then holds up neither `ping`,
//! the listings and the answers being written, nor another call while a
//! thread is free. One channel for all the threads, not one each, so a
//! call waits only when every thread is busy, never behind one slow call
//! while another thread idles.
//!
//! Threads start when a call finds none free (up to [`THREADS`]), not with
//! the server: the web server makes one server per MCP session, most of
//! which never run four calls at once. They end when the server is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// How many threads one server's calls run on. Four: one call that waits
/// (for a lock, a slow query) takes one, and three keep answering; the
/// index takes one writer at a time, so more threads would not make writes
/// faster, only add threads polling the same lock; and a client that sends
/// a hundred calls at once gets them answered in turn, in the order sent,
/// rather than a hundred threads racing for a file lock until some time out.
pub(crate) const THREADS: usize = 4;

/// One call, wrapped to send its own answer (see [`Pool::run`]).
type Job = Box<dyn FnOnce() + Send + 'static>;

/// A server's call threads and the channel that feeds them.
pub(crate) struct Pool {
    jobs: Sender<Job>,
    shared: Arc<Shared>,
}

/// What the threads share: the channel's one receiving end (a thread holds
/// its lock only while it waits for the next call) and the thread count.
struct Shared {
    jobs: Mutex<Receiver<Job>>,
    threads: Mutex<Threads>,
}

#[derive(Default)]
struct Threads {
    running: usize,
    /// Threads waiting for a call that no call sent since has been counted
    /// against: a new call starts a thread only when this is 0.
    idle: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

/// A lock held only around a few lines that cannot panic; poisoned or
/// not, what it guards is whole.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// A pool with no thread yet: the first call starts one.
    pub(crate) fn new() -> Self {
        let (jobs, receiver) = channel();
        Pool {
            jobs,
            shared: Arc::new(Shared {
                jobs: Mutex::new(receiver),
                threads: Mutex::new(Threads::default()),
            }),
        }
    }

    /// Runs `f` on one of the pool's threads and answers with what it
    /// returned, or with the panic's text if it panicked: a panic is one
    /// failed call, and the thread goes on to the next.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, String> {
        let (answer, answered) = oneshot::channel();
        self.send(Box::new(move || {
            let out = catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
                let text = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned());
                format!("panicked: {}", text.unwrap_or_default())
            });
            // The request may have been cancelled meanwhile: nobody to tell.
            let _ = answer.send(out);
        }))?;
        answered
            .await
            .unwrap_or_else(|_| Err("the call's thread ended before it answered".into()))
    }

    /// Queues `job`, first starting a thread for it if none is free.
    fn send(&self, job: Job) -> Result<(), String> {
        let mut threads = lock(&self.shared.threads);
        if threads.idle > 0 {
            threads.idle -= 1;
        } else if threads.running < THREADS {
            let shared = self.shared.clone();
            match std::thread::Builder::new()
                .name("logbook-mcp-call".into())
                .spawn(move || work(&shared))
            {
                Ok(_) => threads.running += 1,
                // The threads already running take it once one is free.
                Err(_) if threads.running > 0 => {}
                Err(e) => return Err(format!("no thread to run the call on ({e})")),
            }
        }
        // The receiving end lives as long as `self.shared`, so this only
        // fails if every thread is gone, which the count above rules out.
        self.jobs
            .send(job)
            .map_err(|_| "the call threads have stopped".to_string())
    }
}

/// A call thread: runs the calls it is handed until the server is dropped
/// (the channel's sending end with it). It starts with a call counted
/// against it, so it counts itself idle only after each call.
fn work(shared: &Shared) {
    loop {
        let next = lock(&shared.jobs).recv();
        let Ok(job) = next else { return };
        job();
        lock(&shared.threads).idle += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_one_failed_call_and_the_threads_go_on() {
        let pool = Pool::new();
        let failed = pool.run(|| -> u32 { panic!("boom") }).await;
        assert_eq!(failed, Err("panicked: boom".to_string()));
        for _ in 0..THREADS * 3 {
            assert_eq!(pool.run(|| 7).await, Ok(7));
        }
        assert!(lock(&pool.shared.threads).running <= THREADS);
    }

    #[tokio::test]
    async fn a_call_that_waits_leaves_the_other_threads_to_answer() {
        let pool = Pool::new();
        let (release, held) = std::sync::mpsc::channel::<()>();
        let waiting = pool.run(move || held.recv().is_ok());
        tokio::pin!(waiting);
        // Polled once, so the waiting call is on a thread before the next.
        assert!(futures_poll_once(&mut waiting).await.is_none());
        for _ in 0..THREADS * 2 {
            assert_eq!(pool.run(|| 1).await, Ok(1));
        }
        let _ = release.send(());
        assert_eq!(waiting.await, Ok(true));
    }

    /// Polls `f` once: its output if it was ready.
    async fn futures_poll_once<F: Future + Unpin>(f: &mut F) -> Option<F::Output> {
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut *f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}

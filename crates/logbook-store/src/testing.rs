//! Fault injection for tests, compiled only with the `testing` feature: a
//! normal build never stops or exits the process from the library.

/// When set to `1`, a write through Logbook exits the process with code 86
/// right after its file write and before its index update, to prove the next
/// open repairs the index.
pub const FAIL_AFTER_FILE_WRITE_ENV: &str = "LOGBOOK_FAIL_AFTER_FILE_WRITE";

/// Simulates a crash between a write's file change and its index update.
pub fn crash_point() {
    if std::env::var(FAIL_AFTER_FILE_WRITE_ENV).is_ok_and(|v| v == "1") {
        std::process::exit(86);
    }
}

/// When set to `enospc`, every file Logbook writes fails as on a full disk
/// (`ENOSPC`): what a hook must survive where no small filesystem can be
/// mounted for the test.
pub const FAIL_WRITES_ENV: &str = "LOGBOOK_FAIL_WRITES";

/// The error a write fails with under [`FAIL_WRITES_ENV`].
pub(crate) fn write_fault() -> Option<std::io::Error> {
    std::env::var(FAIL_WRITES_ENV)
        .is_ok_and(|v| v == "enospc")
        .then(|| std::io::Error::from_raw_os_error(28))
}

/// When set to `1`, a command that finds the full-text index unfinished
/// starts no builder for it (see `index::text_build`): a test runs the
/// builder itself, held at a [`FAULT_ENV`] point.
pub const NO_TEXT_BUILDER_ENV: &str = "LOGBOOK_NO_TEXT_BUILDER";

/// Whether [`NO_TEXT_BUILDER_ENV`] is set.
pub fn text_builder_off() -> bool {
    std::env::var(NO_TEXT_BUILDER_ENV).is_ok_and(|v| v == "1")
}

/// Runs per batch of the full-text builder (see `index::text_build`), in
/// place of its production size, so a test can stop it between batches.
pub const TEXT_BATCH_ENV: &str = "LOGBOOK_TEXT_BATCH";

/// The batch size [`TEXT_BATCH_ENV`] sets, if any.
pub fn text_batch() -> Option<i64> {
    std::env::var(TEXT_BATCH_ENV)
        .ok()?
        .parse()
        .ok()
        .filter(|n| *n > 0)
}

/// How many text matches a page or a count reads in the text index's order
/// before it turns to the whole set (see `index::text_page`), in place of
/// its production number, so a small project's test takes both ways.
pub const IN_ORDER_BUDGET_ENV: &str = "LOGBOOK_IN_ORDER_BUDGET";

/// The budget [`IN_ORDER_BUDGET_ENV`] sets, if any.
pub fn in_order_budget() -> Option<usize> {
    std::env::var(IN_ORDER_BUDGET_ENV).ok()?.parse().ok()
}

/// Sets from how many runs and transcripts a lost index gets its full text
/// from a detached builder (see `index::text_build`): `0` in the tests of
/// the two phases, whose projects are small.
pub const TWO_PHASE_FROM_ENV: &str = "LOGBOOK_TWO_PHASE_FROM";

/// The threshold [`TWO_PHASE_FROM_ENV`] sets, if any.
pub fn two_phase_from() -> Option<u64> {
    std::env::var(TWO_PHASE_FROM_ENV).ok()?.parse().ok()
}

/// Sets from how many run folders `find` answers a lost index from a
/// scan of the manifests while the index is built behind it (see
/// `logbook::ops::query::scan`): small in the tests of that answer.
pub const SCAN_FROM_ENV: &str = "LOGBOOK_SCAN_FROM";

/// The threshold [`SCAN_FROM_ENV`] sets, if any.
pub fn scan_from() -> Option<u64> {
    std::env::var(SCAN_FROM_ENV).ok()?.parse().ok()
}

/// When set to `1`, every move `crate::move_durably` makes takes the way
/// it takes between file systems (copy, verify, rename, remove), as if the
/// destination were on another mount: what a test cannot mount.
pub const MOVE_BY_COPY_ENV: &str = "LOGBOOK_MOVE_BY_COPY";

/// Whether [`MOVE_BY_COPY_ENV`] is set.
pub(crate) fn move_by_copy() -> bool {
    std::env::var(MOVE_BY_COPY_ENV).is_ok_and(|v| v == "1")
}

/// Names a point where the process stops, so a test acts on it at a known
/// moment rather than after a guessed sleep: `POINT` or `POINT:N` (stop the
/// Nth time the process passes it, counting from 1). There it prints
/// `logbook: fault POINT N` on stderr and waits for a line (or the end) of
/// its standard input before going on: a test kills it there, or lets it
/// go on. The points: `push-sent` (a team push's batch is on the server,
/// and this machine has not yet noted it sent), `rows-built` (a
/// two-phase rebuild's rows phase is done, its index not yet in place), `text-batch`
/// (the full-text builder is about to write its Nth batch), and those of a
/// move between file systems (`crate::move_durably`): `move-copying` (the
/// Nth file of the temp copy is written), `move-copied` (the temp copy is
/// whole and verified, not yet renamed into place), `move-renamed` (the
/// copy is in place, the source whole), `move-unkeyed` (the source's
/// manifest is removed, the rest not yet), `move-emptied` (the source
/// folder is empty, not yet removed).
pub const FAULT_ENV: &str = "LOGBOOK_FAULT";

/// Passes of the one point [`FAULT_ENV`] names.
static FAULT_PASSES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Stops at `point` when [`FAULT_ENV`] names it (see there); otherwise
/// costs one environment lookup.
pub fn fault(point: &str) {
    let Ok(wanted) = std::env::var(FAULT_ENV) else {
        return;
    };
    let (name, nth) = match wanted.split_once(':') {
        Some((name, n)) => (name, n.parse::<u64>().unwrap_or(1)),
        None => (wanted.as_str(), 1),
    };
    if name != point {
        return;
    }
    let pass = FAULT_PASSES.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if pass != nth {
        return;
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "logbook: fault {point} {pass}");
    let _ = std::io::stdin().read_line(&mut String::new());
}

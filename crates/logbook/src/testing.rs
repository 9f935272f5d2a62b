//! Fault injection for tests, compiled only with the `testing` feature: a
//! normal build never exits the process from the library.

/// When set to `1`, a write through Logbook exits the process with code 86
/// right after its file write and before its index update, to prove the next
/// open repairs the index.
pub const FAIL_AFTER_FILE_WRITE_ENV: &str = "LOGBOOK_FAIL_AFTER_FILE_WRITE";

/// Simulates a crash between a write's file change and its index update.
pub(crate) fn crash_point() {
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

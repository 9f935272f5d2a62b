//! The bench's integration tests: the real `logbook-bench` and `logbook`
//! binaries as processes, on real files in temp dirs.

mod baseline;

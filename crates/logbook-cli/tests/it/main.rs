//! Integration tests: the real `logbook` binary against real files in temp
//! folders. One test binary, one module per area, one shared harness.

mod harness;
mod session;

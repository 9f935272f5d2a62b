//! Links the `logbook` binary as a position-dependent executable on Linux.
//!
//! Agents start `logbook` thousands of times, so its start-up counts. As a
//! position-independent executable, the dynamic loader applied 48,000
//! relocations to every start and copied each page they touch (540 page
//! faults for `logbook --version`, against 300 without): about 0.5 ms of a
//! 2.3 ms start, and 1.3 ms of a whole `find --team`. The cost is address
//! randomisation of the binary's own code; the libraries, heap and stacks
//! stay randomised.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}

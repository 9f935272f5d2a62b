//! Integration tests of `logbook serve`'s server: a real server on an
//! ephemeral loopback port over a real project, spoken to over raw TCP (so
//! hostile request lines reach the server exactly as written).

#![allow(clippy::unwrap_used)]

mod api;
mod browser;
mod find;
mod forks;
mod harness;
mod live;
mod pages;
mod paging;
mod security;
mod share;
mod usage;

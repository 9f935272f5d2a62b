//! Display helpers for the pages.

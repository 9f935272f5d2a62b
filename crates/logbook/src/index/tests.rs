//! Unit tests of the index: its write path, sync, queries and repairs, on
//! real SQLite files in temp folders.

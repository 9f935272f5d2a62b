//! Transcripts (seed 003) through the real binary.

//! Property tests of incremental import: a log written in pieces (cut at
//! any byte, inside a line, inside a streamed Claude Code reply, between
//! damaged and non-UTF-8 lines) and imported after each piece is stored as
//! the same bytes a fresh import of the same log writes, and each import
//! after the first reads only the bytes after the last whole line, as
//! `pending_bytes` said before it.

use logbook::Logbook;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use logbook::model::agent_log::Format;
use logbook::ops::transcript::{ImportFormat, ImportReport, import_path, pending_bytes};
use logbook_store::import_cursor::WINDOW;
use proptest::prelude::*;

use crate::agent_log::fixtures;

/// A fixture of each format, with the file name its identity comes from.
const FILES: [(&str, Format); 3] = [
    (
        "claude/-work-demo/11111111-2222-4333-8444-555566667777.jsonl",
        Format::ClaudeCode,
    ),
    (
        "claude/-work-compact/33333333-4444-4555-8666-777788889999.jsonl",
        Format::ClaudeCode,
    ),
    (
        "codex/2026/01/18/rollout-2026-01-18T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl",
        Format::Codex,
    ),
];

/// A line of a generated log: a fixture line (the Claude Code ones hold
/// streamed replies whose lines share `message.id`), one cut short, a line
/// that is not JSON, a blank one, one that is not UTF-8, or a line of the
/// other agent's format.
fn arb_line(own: Vec<String>, other: Vec<String>) -> impl Strategy<Value = Vec<u8>> {
    let own2 = own.clone();
    prop_oneof![
        6 => prop::sample::select(own).prop_map(String::into_bytes),
        1 => (prop::sample::select(own2), any::<prop::sample::Index>()).prop_map(|(l, at)| {
            l.as_bytes()[..at.index(l.len())].to_vec()
        }),
        1 => Just(b"{not json".to_vec()),
        1 => Just(Vec::new()),
        1 => Just(b"{\"type\":\"user\",\"message\":{\"content\":\"caf\xe9\"}}".to_vec()),
        // Bad lines stored cut: a run of NULs (6 bytes each in JSON) and
        // one of bytes that are not UTF-8 (3 bytes each as U+FFFD).
        1 => (700usize..3000).prop_map(|n| vec![0u8; n]),
        1 => (1400usize..2000).prop_map(|n| vec![0xffu8; n]),
        1 => prop::sample::select(other).prop_map(String::into_bytes),
    ]
}

fn lines_of(i: usize) -> Vec<String> {
    std::fs::read_to_string(fixtures().join(FILES[i].0))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A generated log (the fixture's lines in order, with others mixed in),
/// the fixture it names itself after, and where it is cut into pieces.
fn arb_log() -> impl Strategy<Value = (usize, Vec<u8>, Vec<prop::sample::Index>)> {
    (0..FILES.len()).prop_flat_map(|file| {
        let own = lines_of(file);
        let other = lines_of(if FILES[file].1 == Format::Codex { 0 } else { 2 });
        let base = own.clone();
        (
            Just(file),
            prop::collection::vec((any::<prop::sample::Index>(), arb_line(own, other)), 0..6),
            any::<bool>(),
            prop::collection::vec(any::<prop::sample::Index>(), 1..5),
        )
            .prop_map(move |(file, extra, newline_at_end, cuts)| {
                let mut lines: Vec<Vec<u8>> = base.iter().map(|l| l.clone().into_bytes()).collect();
                for (at, l) in extra {
                    lines.insert(at.index(lines.len() + 1), l);
                }
                let mut bytes = lines.join(&b"\n"[..]);
                if newline_at_end {
                    bytes.push(b'\n');
                }
                (file, bytes, cuts)
            })
    })
}

fn stored(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let dir = root.join(".logbook/transcripts");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn format_of(f: Format) -> ImportFormat {
    match f {
        Format::ClaudeCode => ImportFormat::ClaudeCode,
        Format::Codex => ImportFormat::Codex,
    }
}

/// The one transcript an import of one log stored, with what it read.
fn read_of(r: &ImportReport) -> Option<u64> {
    r.imported
        .iter()
        .chain(&r.updated)
        .chain(&r.unchanged)
        .map(|i| i.bytes_read)
        .next()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn an_import_in_pieces_stores_what_a_fresh_import_stores((file, bytes, cuts) in arb_log()) {
        let logs = tempfile::tempdir().unwrap();
        let log = logs.path().join(FILES[file].0);
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(&log, b"").unwrap();
        let format = FILES[file].1;
        let incremental = tempfile::tempdir().unwrap();
        let p = Logbook::open(incremental.path()).unwrap();

        let mut ends: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        ends.push(bytes.len());
        ends.sort_unstable();
        ends.dedup();
        let mut written = 0;
        // After the last whole line of the previous piece, when that import
        // stored a transcript: where the next one starts reading.
        let mut resumes_at: Option<usize> = None;
        for end in ends {
            let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            f.write_all(&bytes[written..end]).unwrap();
            drop(f);
            written = end;
            let pending = pending_bytes(&p, &log, format).unwrap();
            let r = import_path(&p, &log, format_of(format), None).unwrap();
            let read = read_of(&r);
            if let Some(read) = read {
                // What a hook is told an import would read is what it reads
                // (besides the windows that check the log).
                prop_assert!(pending <= read && read <= pending + 2 * WINDOW, "{pending} vs {read}");
            }
            if let (Some(read), Some(at)) = (read, resumes_at) {
                prop_assert!(
                    read <= (end - at) as u64 + 2 * WINDOW,
                    "read {read} of {end} bytes, resuming at {at}"
                );
            }
            if read.is_some() {
                resumes_at = Some(bytes[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
            }

            let fresh = tempfile::tempdir().unwrap();
            let q = Logbook::open(fresh.path()).unwrap();
            let again = import_path(&q, &log, format_of(format), None).unwrap();
            prop_assert_eq!(read.is_some(), read_of(&again).is_some());
            let (a, b) = (stored(incremental.path()), stored(fresh.path()));
            prop_assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
            for (name, mine) in &a {
                prop_assert!(
                    *mine == b[name],
                    "{name} differs after {end} bytes:\n{}\n---- fresh:\n{}",
                    String::from_utf8_lossy(mine),
                    String::from_utf8_lossy(&b[name])
                );
            }
        }
    }
}

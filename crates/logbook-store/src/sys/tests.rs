//! Linux's path and the portable one, side by side on the same random
//! trees: every answer (metadata, listing, error) must be the same, or a
//! folder indexed through one would look changed to the other, and macOS
//! would answer differently from what CI tests.

use std::collections::BTreeSet;
use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::{Follow, Kind, Want, linux, portable};

/// One entry of a generated tree, inside the top folder or one of its
/// subfolders.
#[derive(Debug, Clone)]
enum Entry {
    File(usize),
    Dir,
    /// A link to another entry (by index), out of the tree, or to nothing.
    Symlink(Target),
    /// A second name for an earlier file (by index).
    HardLink(usize),
    Fifo,
    /// A folder with mode 000 (root reads it anyway; others get `EACCES`).
    Unreadable,
}

#[derive(Debug, Clone)]
enum Target {
    Entry(usize),
    Outside,
    Dangling,
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        4 => (0usize..5000).prop_map(Entry::File),
        2 => Just(Entry::Dir),
        2 => prop_oneof![
            (0usize..16).prop_map(Target::Entry),
            Just(Target::Outside),
            Just(Target::Dangling),
        ]
        .prop_map(Entry::Symlink),
        1 => (0usize..16).prop_map(Entry::HardLink),
        1 => Just(Entry::Fifo),
        1 => Just(Entry::Unreadable),
    ]
}

/// Builds `entries` under `top`: entry `i` is `e{i}`, inside the folder of
/// an earlier `Dir` entry when `parent` picks one. Returns every path made
/// (relative to `top`) and the folders among them.
fn build(top: &Path, entries: &[(Entry, Option<usize>)]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut made: Vec<PathBuf> = vec![];
    let mut dirs: Vec<PathBuf> = vec![PathBuf::from(".")];
    // Only readable folders take children: a non-root test could not
    // write into a mode-000 one.
    let mut parents: Vec<PathBuf> = vec![];
    for (i, (e, parent)) in entries.iter().enumerate() {
        let parent = parent
            .and_then(|p| parents.get(p % parents.len().max(1)).cloned())
            .unwrap_or_default();
        let rel = parent.join(format!("e{i}"));
        let path = top.join(&rel);
        match e {
            Entry::File(size) => fs::write(&path, vec![b'x'; *size]).unwrap(),
            Entry::Dir => {
                fs::create_dir(&path).unwrap();
                dirs.push(rel.clone());
                parents.push(rel.clone());
            }
            Entry::Symlink(t) => {
                let to = match t {
                    Target::Entry(j) if !made.is_empty() => top.join(&made[j % made.len()]),
                    Target::Outside => PathBuf::from("/"),
                    _ => top.join("nowhere"),
                };
                std::os::unix::fs::symlink(to, &path).unwrap();
            }
            Entry::HardLink(j) => {
                let files: Vec<&PathBuf> = made.iter().filter(|p| top.join(p).is_file()).collect();
                match files.get(j % files.len().max(1)) {
                    Some(f) => fs::hard_link(top.join(f), &path).unwrap(),
                    None => fs::write(&path, b"").unwrap(),
                }
            }
            Entry::Fifo => assert!(
                std::process::Command::new("mkfifo")
                    .arg(&path)
                    .status()
                    .unwrap()
                    .success()
            ),
            Entry::Unreadable => {
                fs::create_dir(&path).unwrap();
                fs::write(path.join("inside"), b"hidden").unwrap();
                fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
                dirs.push(rel.clone());
            }
        }
        made.push(rel);
    }
    (made, dirs)
}

fn listing(
    fd: &OwnedFd,
    list: impl FnOnce(&OwnedFd, &mut dyn FnMut(&std::ffi::CStr)) -> super::Result<()>,
) -> super::Result<BTreeSet<Vec<u8>>> {
    let mut names = BTreeSet::new();
    list(fd, &mut |n| {
        names.insert(n.to_bytes().to_vec());
    })?;
    Ok(names)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn both_paths_give_the_same_metadata_listings_and_errors(
        entries in proptest::collection::vec((entry(), proptest::option::of(0usize..8)), 1..14)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let (made, dirs) = build(top, &entries);
        let fd = super::open_dir_at(super::CWD, top).unwrap();

        // Every name made, names that are not there, and paths that go
        // through a file or a FIFO.
        let mut probes = made.clone();
        probes.push(PathBuf::from("missing"));
        probes.extend(made.iter().map(|p| p.join("below")));
        probes.push(PathBuf::from(""));

        for rel in &probes {
            for follow in [Follow::Yes, Follow::No] {
                let a = linux::stat_at(std::os::fd::AsFd::as_fd(&fd), rel, follow, Want::OUTPUT);
                let b = portable::stat_at(std::os::fd::AsFd::as_fd(&fd), rel, follow, Want::OUTPUT);
                prop_assert_eq!(a, b, "stat of {:?} ({:?})", rel, follow);
            }
            for follow in [Follow::Yes, Follow::No] {
                // Opening an entry that is no file or folder to read
                // (a FIFO opens at once: non-blocking).
                let Ok(file) = super::open_read_at(&fd, rel, follow) else { continue };
                let a = linux::stat_open(std::os::fd::AsFd::as_fd(&file), Want::OUTPUT);
                let b = portable::stat_open(std::os::fd::AsFd::as_fd(&file), Want::OUTPUT);
                prop_assert_eq!(a, b, "stat of open {:?}", rel);
            }
        }
        for rel in &dirs {
            let opened = super::open_dir_at(&fd, rel);
            let Ok(sub) = opened else {
                // Both paths open folders the same way; the error is the
                // one a listing would give.
                continue;
            };
            let a = listing(&sub, |fd, each| linux::list(fd, &mut linux::ListBuffer::default(), each));
            let b = listing(&sub, |fd, each| portable::list(fd, &mut portable::ListBuffer::default(), each));
            prop_assert_eq!(a, b, "listing of {:?}", rel);
            let kind = linux::stat_at(std::os::fd::AsFd::as_fd(&fd), rel, Follow::No, Want::KIND)
                .map(|m| m.kind);
            prop_assert_eq!(kind, Ok(Kind::Dir));
        }

        // Back to readable, so the temp folder can be removed by anyone.
        for rel in &dirs {
            let _ = fs::set_permissions(top.join(rel), fs::Permissions::from_mode(0o755));
        }
    }
}

#[test]
fn the_two_paths_agree_on_what_each_error_is() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    fs::write(top.join("file"), b"x").unwrap();
    std::os::unix::fs::symlink(top.join("file"), top.join("link")).unwrap();
    let fd = super::open_dir_at(super::CWD, top).unwrap();
    let at = std::os::fd::AsFd::as_fd(&fd);
    for (rel, errno) in [
        ("missing", super::Errno::NOENT),
        ("file/below", super::Errno::NOTDIR),
    ] {
        assert_eq!(
            linux::stat_at(at, Path::new(rel), Follow::Yes, Want::OUTPUT),
            Err(errno)
        );
        assert_eq!(
            portable::stat_at(at, Path::new(rel), Follow::Yes, Want::OUTPUT),
            Err(errno)
        );
    }
    // A symlink is refused by an open that does not follow it, and
    // described as itself by an `lstat`.
    assert_eq!(
        super::open_read_at(&fd, Path::new("link"), Follow::No).err(),
        Some(super::Errno::LOOP)
    );
    let link = portable::stat_at(at, Path::new("link"), Follow::No, Want::KIND).unwrap();
    assert_eq!(link.kind, Kind::Symlink);
    let file = portable::stat_at(at, Path::new("link"), Follow::Yes, Want::OUTPUT).unwrap();
    assert_eq!((file.kind, file.size), (Kind::File, 1));
    assert_eq!(
        linux::stat_at(at, Path::new("link"), Follow::Yes, Want::OUTPUT),
        Ok(file)
    );
    // The stamp's nanoseconds are those the standard library reports.
    let std_meta = fs::metadata(top.join("file")).unwrap();
    use std::os::unix::fs::MetadataExt as _;
    assert_eq!(file.mtime.sec, std_meta.mtime());
    assert_eq!(i64::from(file.mtime.nsec), std_meta.mtime_nsec());
    assert_eq!(file.ino, std_meta.ino());
}

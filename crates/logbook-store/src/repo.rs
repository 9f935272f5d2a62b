//! Which repository a folder belongs to ([`identify`]), read from the
//! repository's own files: nothing is ever written inside it.
//!
//! Trap: a hook runs on every agent event, and `git rev-list` costs a
//! process start; the first commit is therefore cached per user, keyed by
//! the canonical git common dir and checked against that folder's inode,
//! so a repository deleted and made again in the same place is asked anew.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use logbook_model::repo::{Repository, normalize_origin};

/// How long the first commit may take to ask git for; past it the identity
/// goes without one (a hook must not wait on a huge or stuck repository).
const GIT_TIMEOUT: Duration = Duration::from_secs(1);

/// The identity of the repository `dir` is in: its first commit, its
/// normalized origin and its root folder; outside git, the canonical
/// folder alone. `None` only when `dir` does not exist.
pub fn identify(dir: &Path) -> Option<Repository> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let Some(git) = GitDirs::find(&dir) else {
        return Some(Repository {
            root_commit: None,
            origin: None,
            folder: dir.to_string_lossy().into_owned(),
        });
    };
    Some(Repository {
        root_commit: root_commit(&git),
        origin: origin_url(&git.common).and_then(|u| normalize_origin(&u)),
        folder: git.work_tree.to_string_lossy().into_owned(),
    })
}

/// The identity a record made in `folder` keeps (a transcript's
/// `workdir`, a project root): [`identify`]'s when it is a git
/// repository ([`Repository::in_git`]), and only for an absolute path,
/// never one relative to wherever Logbook happens to run.
pub fn identify_recorded(folder: &Path) -> Option<Repository> {
    folder
        .is_absolute()
        .then(|| identify(folder))
        .flatten()
        .filter(Repository::in_git)
}

/// Where a checkout keeps its git data.
#[derive(Debug)]
struct GitDirs {
    /// The folder holding `.git`.
    work_tree: PathBuf,
    /// The checkout's own git dir (a worktree's has its own `HEAD`).
    git_dir: PathBuf,
    /// The repository's shared git dir: config and objects.
    common: PathBuf,
}

impl GitDirs {
    /// The nearest `.git` at or above `dir`: a folder, or a file saying
    /// `gitdir: …` (worktrees, submodules), whose `commondir` names the
    /// shared one.
    fn find(dir: &Path) -> Option<GitDirs> {
        for at in dir.ancestors() {
            let dot = at.join(".git");
            let Ok(meta) = std::fs::metadata(&dot) else {
                continue;
            };
            let git_dir = if meta.is_dir() {
                dot
            } else {
                let text = small_file(&dot)?;
                let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
                at.join(target)
            };
            let common = match small_file(&git_dir.join("commondir")) {
                Some(c) if !c.trim().is_empty() => git_dir.join(c.trim()),
                _ => git_dir.clone(),
            };
            return Some(GitDirs {
                work_tree: at.to_path_buf(),
                git_dir: std::fs::canonicalize(&git_dir).unwrap_or(git_dir),
                common: std::fs::canonicalize(&common).unwrap_or(common),
            });
        }
        None
    }
}

/// A small text file, or `None` (absent, unreadable, or too large to be
/// one of git's pointer or config files).
fn small_file(path: &Path) -> Option<String> {
    const MAX: u64 = 1 << 20;
    let mut s = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// `remote.origin.url` from the repository's config file, read directly:
/// the last value wins, as in git. Includes are not followed.
fn origin_url(common: &Path) -> Option<String> {
    let text = small_file(&common.join("config"))?;
    let mut in_origin = false;
    let mut url = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(section) = line.strip_prefix('[') {
            let header = section.split(']').next().unwrap_or_default().trim();
            in_origin = match header.split_once(char::is_whitespace) {
                Some((kind, name)) => {
                    kind.eq_ignore_ascii_case("remote") && name.trim() == "\"origin\""
                }
                None => header.eq_ignore_ascii_case("remote.origin"),
            };
            continue;
        }
        if !in_origin {
            continue;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(value);
            url = Some(value.to_string());
        }
    }
    url.filter(|u| !u.is_empty())
}

/// One cached first commit (see the module's trap).
#[derive(Debug, Serialize, Deserialize)]
struct CachedRoot {
    /// The common dir it was asked for.
    common: PathBuf,
    /// That folder's inode then.
    inode: u64,
    /// The first commit.
    root: String,
}

/// The file caching `common`'s first commit, in the per-user home's state
/// folder; `None` when there is no per-user home.
fn cache_file(common: &Path) -> Option<PathBuf> {
    // The home's folder, not its opened config: this runs on every hook.
    let home = crate::project::user_home_dir().ok()?;
    let digest = Sha256::digest(common.to_string_lossy().as_bytes());
    let name: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    Some(
        home.join(crate::config::STATE_DIR)
            .join("repo-cache")
            .join(format!("{name}.json")),
    )
}

fn inode(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| m.ino())
}

/// The first commit of HEAD's history, from the cache or else from git
/// (then cached). A failed cache write is only a slower next call.
fn root_commit(git: &GitDirs) -> Option<String> {
    let ino = inode(&git.common)?;
    let cache = cache_file(&git.common);
    if let Some(c) = cache
        .as_deref()
        .and_then(small_file)
        .and_then(|t| serde_json::from_str::<CachedRoot>(&t).ok())
        .filter(|c| c.common == git.common && c.inode == ino)
    {
        return Some(c.root);
    }
    let root = ask_git(&git.git_dir)?;
    if let Some(cache) = cache
        && let Some(dir) = cache.parent()
        && std::fs::create_dir_all(dir).is_ok()
    {
        let entry = CachedRoot {
            common: git.common.clone(),
            inode: ino,
            root: root.clone(),
        };
        if let Ok(bytes) = serde_json::to_vec(&entry) {
            let _ = crate::write_atomic(&cache, &bytes);
        }
    }
    Some(root)
}

/// `git rev-list --max-parents=0 HEAD`, the oldest of several roots, within
/// [`GIT_TIMEOUT`]; `None` without git, without commits or past the time.
fn ask_git(git_dir: &Path) -> Option<String> {
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["rev-list", "--max-parents=0", "--timestamp", "HEAD"])
        // A hook may run inside git's own hooks, which set these.
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .env_remove("GIT_COMMON_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.by_ref().take(1 << 20).read_to_string(&mut out);
        out
    });
    let deadline = Instant::now() + GIT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let out = reader.join().ok()?;
    if !status.success() {
        return None;
    }
    out.lines()
        .filter_map(|l| {
            let (ts, sha) = l.trim().split_once(' ')?;
            Some((ts.parse::<i64>().ok()?, sha.to_string()))
        })
        .min()
        .map(|(_, sha)| sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_read_from_the_config_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("config"),
            "[core]\n\turl = nope\n[remote \"upstream\"]\n\turl = git@h:up/x.git\n\
             [remote \"origin\"]\n\tfetch = +refs/heads/*\n\turl = \"git@h:o/x.git\"\n",
        )
        .unwrap();
        assert_eq!(origin_url(d.path()).as_deref(), Some("git@h:o/x.git"));
        std::fs::write(d.path().join("config"), "[core]\n").unwrap();
        assert_eq!(origin_url(d.path()), None);
    }

    proptest::proptest! {
        #[test]
        fn any_config_text_is_read_without_panicking(
            text in "(\\[remote \"origin\"\\]\n|url ?= ?|\"|\\[|\\]|\n|[a-z@:/.]{0,12}){0,24}",
        ) {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("config"), &text).unwrap();
            if let Some(url) = origin_url(d.path()) {
                proptest::prop_assert!(!url.is_empty());
            }
        }
    }

    #[test]
    fn outside_git_is_the_canonical_folder() {
        let d = tempfile::tempdir().unwrap();
        let r = identify(d.path()).unwrap();
        assert_eq!(r.root_commit, None);
        assert_eq!(
            r.folder,
            std::fs::canonicalize(d.path()).unwrap().to_string_lossy()
        );
        assert_eq!(identify(&d.path().join("absent")), None);
    }

    #[test]
    fn a_worktree_file_leads_to_the_common_dir() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main/.git");
        let wt = main.join("worktrees/w");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            main.join("config"),
            "[remote \"origin\"]\nurl=https://h/o/x\n",
        )
        .unwrap();
        std::fs::write(wt.join("commondir"), "../..\n").unwrap();
        let checkout = d.path().join("w/sub");
        std::fs::create_dir_all(&checkout).unwrap();
        std::fs::write(
            d.path().join("w/.git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        let git = GitDirs::find(&checkout).unwrap();
        assert_eq!(git.common, std::fs::canonicalize(&main).unwrap());
        assert_eq!(git.work_tree, d.path().join("w"));
        assert_eq!(origin_url(&git.common).as_deref(), Some("https://h/o/x"));
    }
}

//! A transcript listing as a face asks for it, resolved once: which
//! workdirs and repository it covers, what a caller may name, and how the
//! team scope differs. The CLI (from its cwd), the MCP server and the
//! viewer each fill a [`ListRequest`] and get the same answer for the same
//! question.

use std::path::{Path, PathBuf};

use crate::Logbook;
use crate::error::{Error, Result};
use crate::model::transcript::Kind;
use crate::ops::params::{self, RepoBase, TranscriptParams, paging_count};
use crate::ops::query::{self, Scope, Transcripts};

use super::{ListOptions, UsageScope, default_scope};

/// Who asks, which decides what a `repo` may name and where "this project"
/// is: the person at a terminal stands in a folder and may name any folder
/// of the machine; an agent or a browser stands at the project root and
/// names repositories only (an agent also `.`, the project's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The CLI, run in this folder.
    User(PathBuf),
    /// An agent over MCP.
    Agent,
    /// A browser reading the viewer.
    Browser,
}

impl Caller {
    /// The folder the caller's "this project" and relative paths start from.
    fn folder(&self, p: &Logbook) -> PathBuf {
        match self {
            Caller::User(cwd) => cwd.clone(),
            Caller::Agent | Caller::Browser => p.root().to_path_buf(),
        }
    }

    /// What the caller's `repo` may name.
    fn repo_base(&self, p: &Logbook) -> RepoBase {
        match self {
            Caller::User(cwd) => RepoBase::Folders(cwd.clone()),
            Caller::Agent => RepoBase::Here(p.root().to_path_buf()),
            Caller::Browser => RepoBase::UrlsOnly,
        }
    }
}

/// A transcript listing as a face received it, not yet checked.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    /// Every workdir, not only this project's (`--all`).
    pub all: bool,
    /// Only those whose workdir is this folder or inside it (relative to
    /// the caller's folder), any project's.
    pub workdir: Option<PathBuf>,
    /// Only this repository's, as typed: `.`, a folder (the CLI only) or a
    /// remote URL; with it, those recorded without one count when their
    /// workdir is in the project.
    pub repo: Option<String>,
    /// Source, model, time and words.
    pub filters: TranscriptParams,
    /// Only main-agent transcripts.
    pub main: bool,
    /// Only subagent transcripts.
    pub subagents: bool,
    /// At most this many.
    pub limit: Option<u64>,
    /// After skipping this many.
    pub offset: u64,
    /// Only the live ones.
    pub live: bool,
    /// This machine's, or every machine's from the team catalog.
    pub scope: Scope,
}

impl ListRequest {
    /// The checked options `caller` asked for. By default a listing is this
    /// project's repository (as the caller stands); `all`, or a `workdir`
    /// alone, looks beyond it; a `repo` scopes it to that repository. In the
    /// team scope every machine's transcripts are the default, and a filter
    /// the catalog cannot answer is its backend's [`Error::Unsupported`].
    pub fn resolve(&self, p: &Logbook, caller: &Caller) -> Result<ListOptions> {
        if self.main && self.subagents {
            return Err(Error::invalid(
                "main/subagents",
                "both",
                "give at most one of main and subagents",
            ));
        }
        let folder = caller.folder(p);
        let mut filter = self.filters.filter(p.clock.now())?;
        filter.workdir = self
            .workdir
            .as_deref()
            .map(|w| logbook_store::absolute(&folder, w));
        let repo = self
            .repo
            .as_deref()
            .map(|r| params::repository(r, &caller.repo_base(p)))
            .transpose()?;
        // The team catalog holds every machine's: "this project" is not a
        // default there, only what the caller named.
        let here_by_default = self.scope != Scope::Team && !self.all && self.workdir.is_none();
        let (within, here) = if here_by_default || repo.is_some() {
            default_scope(p, &folder)
        } else {
            (None, None)
        };
        Ok(ListOptions {
            within,
            repo: repo.or(here.filter(|_| here_by_default)),
            filter,
            kind: Kind::only(self.main, self.subagents),
            limit: self.limit.map(|n| paging_count("limit", n)).transpose()?,
            offset: paging_count("offset", self.offset)?,
            live: self.live,
        })
    }

    /// The transcripts `caller` asked for, from the backend of the asked
    /// scope.
    pub fn list(&self, p: &Logbook, caller: &Caller) -> Result<Transcripts> {
        let opts = self.resolve(p, caller)?;
        listed(p, self.scope, &opts)
    }
}

/// The transcripts of resolved options from the backend of `scope`, each
/// row with its cost: every face lists through this, so the viewer prices
/// as the CLI does.
pub fn listed(p: &Logbook, scope: Scope, opts: &ListOptions) -> Result<Transcripts> {
    let mut listed = query::backend(p, scope)?.transcripts(opts)?;
    // Each row's cost: from the index's counts for one model, else from
    // its own head (a page's rows, not the whole store).
    let table = crate::ops::price::table(p)?;
    for row in &mut listed.rows {
        row.cost_usd = super::cost::of_summary(&table, &row.summary);
    }
    Ok(listed)
}

impl UsageScope {
    /// The transcripts whose usage a caller standing in `folder` asked for:
    /// one transcript, every one (`all`), or this project's, which outside
    /// any project (the per-user home) is the repository of `folder`.
    pub fn asked(p: &Logbook, id: Option<&str>, all: bool, folder: &Path) -> UsageScope {
        match (id, all) {
            (Some(id), _) => UsageScope::One(id.to_string()),
            (None, true) => UsageScope::All,
            (None, false) if p.is_user_home() => UsageScope::Repository(folder.to_path_buf()),
            (None, false) => UsageScope::Project,
        }
    }
}

/// The session a listed transcript was forked from (`forkOf` in its
/// metadata), read from its file's head: only an agent's log can be a fork
/// (Codex's today), so other transcripts are not opened.
pub fn fork_of(t: &crate::model::transcript::Summary) -> Option<String> {
    if t.source != crate::model::agent_log::Format::Codex.as_str() {
        return None;
    }
    let head = logbook_store::transcript::read_head(&t.file).ok()?;
    crate::model::agent_log::fork_of(&head.metadata).map(str::to_string)
}

/// Where a transcript stands among forks, as a listing shows them: the
/// session it was forked from and the transcripts forked from it, so the
/// viewer links a fork and its parent both ways by the listing's rule.
#[derive(Debug, Clone, Default)]
pub struct Forks {
    /// The session it was forked from (its row's `forkOf`), stored or not.
    pub fork_of: Option<String>,
    /// That session's row, when the listing holds it.
    pub parent: Option<query::TranscriptRow>,
    /// The transcripts forked from it, newest first.
    pub forks: Vec<query::TranscriptRow>,
}

/// The [`Forks`] of transcript `id` among every workdir's transcripts of
/// an agent that forks (Codex) in `scope`, each row's `forkOf` as
/// `transcript list --json` gives it; no other transcript is read.
pub fn forks(p: &Logbook, scope: Scope, id: &str) -> Result<Forks> {
    let request = ListRequest {
        all: true,
        filters: TranscriptParams {
            source: Some(crate::model::agent_log::Format::Codex.as_str().to_string()),
            ..Default::default()
        },
        scope,
        ..Default::default()
    };
    let opts = request.resolve(p, &Caller::Browser)?;
    let rows = query::backend(p, scope)?.transcripts(&opts)?.rows;
    let same = |a: &str| a.eq_ignore_ascii_case(id);
    let fork_of = rows
        .iter()
        .find(|r| same(&r.summary.id))
        .and_then(|r| r.fork_of.clone());
    let parent = fork_of.as_deref().and_then(|f| {
        rows.iter()
            .find(|r| r.summary.id.eq_ignore_ascii_case(f))
            .cloned()
    });
    let forks = rows
        .into_iter()
        .filter(|r| r.fork_of.as_deref().is_some_and(same))
        .collect();
    Ok(Forks {
        fork_of,
        parent,
        forks,
    })
}

//! The one context every operation takes: a [`Logbook`] is built once in a
//! face's `main` (or per request in a server) and carries what used to hide
//! in process-wide statics — the project, the clock, the notices sink, the
//! team catalog's driver and the cached index connection a writing process
//! keeps. Two contexts in one process (two projects, or a test beside the
//! code it tests) never see each other's.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use logbook_index::Index;
use logbook_index::catalog::Connector;
use logbook_model::clock::Clock;
use logbook_model::notice::Notices;
use logbook_store::Project;
use logbook_store::stamp_watch::StampWatch;

use crate::Result;
use crate::ops::catalog::Background;

/// An opened project with everything its operations need. It reads as the
/// [`Project`] it holds (its config, locks, clock and notices), so the
/// store and the index are handed it as they are.
#[derive(Clone)]
pub struct Logbook {
    project: Project,
    catalog: Option<Arc<dyn Connector>>,
    /// A process that writes many times (the MCP server, the web server, a
    /// benchmark) keeps one index connection instead of reopening it.
    writer: Arc<Mutex<Option<Index>>>,
    /// The push to the team catalog that runs after writes.
    background: Arc<Background>,
}

impl std::fmt::Debug for Logbook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logbook")
            .field("project", &self.project)
            .field("catalog", &self.catalog.is_some())
            .finish_non_exhaustive()
    }
}

impl Deref for Logbook {
    type Target = Project;

    fn deref(&self) -> &Project {
        &self.project
    }
}

impl From<Project> for Logbook {
    fn from(project: Project) -> Logbook {
        Logbook::new(project)
    }
}

impl Logbook {
    /// A context for `project`, without a team catalog driver.
    pub fn new(project: Project) -> Logbook {
        Logbook {
            project,
            catalog: None,
            writer: Arc::default(),
            background: Arc::default(),
        }
    }

    /// Opens the project containing `cwd` (see [`Project::discover`]).
    pub fn discover(cwd: &Path, explicit_root: Option<&Path>) -> Result<Logbook> {
        Project::discover(cwd, explicit_root).map(Logbook::new)
    }

    /// Like [`Logbook::discover`], but a missing project is created where
    /// the first write will put it (see [`Project::discover_or_new`]).
    pub fn discover_or_new(cwd: &Path, explicit_root: Option<&Path>) -> Result<Logbook> {
        Project::discover_or_new(cwd, explicit_root).map(Logbook::new)
    }

    /// Opens the project rooted exactly at `root`.
    pub fn open(root: &Path) -> Result<Logbook> {
        Project::open(root).map(Logbook::new)
    }

    /// The project an agent's hook or tool call made from `cwd` belongs to
    /// (see [`Project::for_agent`]).
    pub fn for_agent(cwd: &Path) -> Result<Logbook> {
        Project::for_agent(cwd).map(Logbook::new)
    }

    /// This context with the team catalog's driver, which the library does
    /// not link itself (the CLI passes the PostgreSQL one).
    pub fn with_catalog(mut self, connector: Arc<dyn Connector>) -> Logbook {
        self.catalog = Some(connector);
        self
    }

    /// This context starting `program` (as `PROGRAM --root ROOT index
    /// build-text`) to build the full-text index in a process of its own.
    pub fn with_text_builder(mut self, program: PathBuf) -> Logbook {
        self.project.text_builder = Some(program);
        self
    }

    /// This context checking running runs' manifests through `stamps`, a
    /// long-lived server's watch, instead of a `stat` each per query.
    pub fn with_stamp_watch(mut self, stamps: Arc<StampWatch>) -> Logbook {
        self.project.stamps = Some(stamps);
        self
    }

    /// This context reading "now" from `clock`.
    pub fn with_clock(mut self, clock: Clock) -> Logbook {
        self.project.clock = clock;
        self
    }

    /// Another project opened with this context's clock and catalog driver
    /// (what `hooks` does for the project a settings file belongs to).
    pub fn with_project(&self, project: Project) -> Logbook {
        let (clock, text_builder) = (self.project.clock, self.project.text_builder.clone());
        Logbook {
            project: Project {
                clock,
                text_builder,
                ..project
            },
            catalog: self.catalog.clone(),
            writer: Arc::default(),
            background: Arc::default(),
        }
    }

    /// The same context with a notices sink of its own, for one request of
    /// a server: concurrent requests never show each other's notices.
    pub fn for_call(&self) -> Logbook {
        let mut call = self.clone();
        call.project.notices = Notices::default();
        call
    }

    /// The project this context opened.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The team catalog's driver, if the face passed one.
    pub fn catalog(&self) -> Option<&dyn Connector> {
        self.catalog.as_deref()
    }

    /// The cached writer connection, taken for one write (see
    /// `ops::write_through`).
    pub(crate) fn background(&self) -> Arc<Background> {
        Arc::clone(&self.background)
    }

    pub(crate) fn writer(&self) -> MutexGuard<'_, Option<Index>> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }
}

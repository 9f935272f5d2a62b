//! The team catalog's lifecycle, as [`crate::ops::index`] is the local
//! index's: installing its driver, creating its tables (`logbook team
//! init`), pushing this machine's records to it (`team push`, and the
//! bounded background push after every write), and its status. The team
//! queries are not here: they go through [`crate::ops::query`] with
//! [`Scope::Team`](crate::ops::query::Scope::Team), like the local ones.
//!
//! Nothing here runs unless `team_url` (or `LOGBOOK_TEAM_URL`) is set. The
//! database driver is not the library's: a face passes a [`Connector`] in
//! the context it opens ([`Logbook::with_catalog`]).
//!
//! Local work never waits on the team: every write notes its record in the
//! index's outbox in its own transaction (see [`logbook_index::catalog`]),
//! and [`after_write`] starts a push in the background, bounded by
//! [`deadline`]. A push that fails or is cut off leaves the notes where
//! they are; the next push (or `logbook team push`) sends them again, and
//! the catalog's upserts make that harmless.
//!
//! - `push`: [`push`], and the background push after every write
//!   ([`after_write`], [`settle`]).

mod push;

use crate::Logbook;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result};
use logbook_index::Index;
use logbook_index::catalog::{Catalog, Connector, ServerStatus};

pub use push::{BATCH, PushReport, SETTLE_AFTER, push, push_with, settle};
pub(crate) use push::{Background, after_write};

/// How long explicit team commands (`team push`, `find --team`…) wait for
/// the server before they give up.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest a write's background push may add to it: the
/// `LOGBOOK_TEAM_DEADLINE` environment variable in seconds, else 2 s.
pub fn deadline() -> Duration {
    std::env::var("LOGBOOK_TEAM_DEADLINE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(2), Duration::from_secs_f64)
}

pub(crate) fn url(p: &Logbook) -> Result<&str> {
    p.config.team_url.as_deref().ok_or_else(|| Error::Team {
        server: "(none)".into(),
        message: "no team catalog is configured".into(),
        hint: "set team_url in logbook.yaml, or LOGBOOK_TEAM_URL, to the team's postgres:// URL"
            .into(),
    })
}

pub(crate) fn connector(p: &Logbook) -> Result<&dyn Connector> {
    p.catalog().ok_or_else(|| Error::Team {
        server: "(none)".into(),
        message: "this program was built without a team catalog driver".into(),
        hint: "use the Logbook command line, which includes the PostgreSQL catalog".into(),
    })
}

/// Opens the project's team catalog, waiting at most `timeout`.
pub fn connect(p: &Logbook, timeout: Duration) -> Result<Box<dyn Catalog>> {
    connector(p)?.connect(url(p)?, timeout)
}

/// Creates or migrates the catalog's tables (`logbook team init`); returns
/// the server and the schema version.
pub fn init(p: &Logbook) -> Result<(String, i64)> {
    let url = url(p)?;
    let version = connector(p)?.init(url, COMMAND_TIMEOUT)?;
    let catalog = connector(p)?.connect(url, COMMAND_TIMEOUT)?;
    Ok((catalog.server(), version))
}

/// What `logbook team status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct TeamStatus {
    /// The catalog (host, port, database), or `None` without a team.
    pub server: Option<String>,
    /// This machine's name in the team.
    pub origin: String,
    /// Changes waiting to be pushed.
    pub backlog: u64,
    /// When a push last succeeded.
    pub last_push: Option<String>,
    /// The last push's error (with its time), cleared by a successful one.
    pub last_error: Option<String>,
    /// Whether the server answered now.
    pub reachable: bool,
    /// Why it did not.
    pub error: Option<String>,
    /// What the server holds.
    pub catalog: Option<ServerStatus>,
}

/// The team catalog's state as this machine sees it: never fails because
/// the server is down (that is what it reports).
pub fn status(p: &Logbook) -> Result<TeamStatus> {
    let Some(url) = p.config.team_url.as_deref() else {
        return Ok(TeamStatus {
            server: None,
            origin: p.config.origin(),
            backlog: 0,
            last_push: None,
            last_error: None,
            reachable: false,
            error: None,
            catalog: None,
        });
    };
    let index = Index::open(p)?;
    let mut status = TeamStatus {
        server: Some(crate::model::url::public(url)),
        origin: p.config.origin(),
        backlog: index.upkeep().outbox_len()?,
        last_push: index.upkeep().team_note("last_push")?,
        last_error: index.upkeep().team_note("last_error")?,
        reachable: false,
        error: None,
        catalog: None,
    };
    match connector(p).and_then(|c| c.connect(url, deadline().max(Duration::from_secs(5)))) {
        Ok(catalog) => {
            status.server = Some(catalog.server());
            match catalog.status() {
                Ok(s) => {
                    status.reachable = true;
                    status.catalog = Some(s);
                }
                Err(e) => status.error = Some(e.to_string()),
            }
        }
        Err(e) => status.error = Some(e.to_string()),
    }
    Ok(status)
}

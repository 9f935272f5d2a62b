//! The PostgreSQL team catalog of Logbook: the records of many machines in
//! one database, behind the library's [`logbook::catalog::Catalog`]
//! trait (as atuin keeps each database backend in its own crate).
//!
//! - [`PgConnector`] is what a face installs
//!   (`logbook::ops::catalog::install(Box::new(PgConnector))`); it opens a
//!   [`PgCatalog`]: a small connection pool (deadpool-postgres over
//!   tokio-postgres) on a runtime of its own, so the synchronous library
//!   can call it from any thread.
//! - [`migrations`] creates and upgrades the tables (`logbook team init`);
//!   a catalog's first call checks the version (a query, in the same round
//!   trip) and says what to run when it is behind or ahead.
//! - A push is one transaction per batch that first takes a lock for its
//!   origin, so two processes pushing for one machine take turns, then
//!   compares each change's version and content hash with the stored row:
//!   older or identical changes are skipped, the rest written with
//!   `unnest` arrays (one statement per table per batch).
//!
//! ```no_run
//! use std::time::Duration;
//! use logbook::catalog::Connector;
//! let catalog = logbook_team_pg::PgConnector
//!     .connect("postgres://logbook@db.internal/logbook?sslmode=require", Duration::from_secs(5))?;
//! println!("{:?}", catalog.status()?);
//! # Ok::<(), logbook::Error>(())
//! ```

pub mod migrations;
mod push;
mod query;
mod tls;

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use logbook::Error;
use logbook::catalog::{
    Catalog, Change, Connector, LiveIds, PushStats, ServerStatus, TeamOutput, TeamRun,
    TeamTranscript,
};
use logbook::error::{Next, Result, Step};
use logbook::model::query::RunQuery;
use tokio::runtime::Runtime;

/// How long `logbook team init` lets the migrations run.
const MIGRATION_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Opens [`PgCatalog`]s from `postgres://` URLs.
#[derive(Debug, Clone, Copy, Default)]
pub struct PgConnector;

/// One team catalog: a pool of connections and the time each call may take.
pub struct PgCatalog {
    pool: Pool,
    server: String,
    timeout: Duration,
    /// Whether the server's schema version was found to be this
    /// program's: checked with the first call, not at connect.
    checked: AtomicBool,
}

/// The runtime every catalog of the process shares: one worker thread,
/// enough to drive a few connections, started on first use.
fn runtime() -> Result<&'static Runtime> {
    static RT: OnceLock<std::result::Result<Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("logbook-team-pg")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| team_error("(none)", format!("cannot start the database runtime: {e}")))
}

pub(crate) fn team_error(server: &str, message: impl Into<String>) -> Error {
    let message = message.into();
    let hint =
        if message.contains("password authentication failed") || message.contains("no password") {
            Next::say("check the user and password in team_url / LOGBOOK_TEAM_URL")
        } else if message.contains("does not exist") && message.contains("database") {
            Next::say("create the database on the server (`createdb logbook`), then run ")
                .step(Step::TeamInit)
        } else if message.contains("team init") {
            Next::none()
        } else {
            Next::say("is the server up and reachable from this machine? Local work goes on; ")
                .step(Step::TeamPush)
                .text(" sends what waits once it answers")
        };
    Error::Team {
        server: server.to_string(),
        message,
        hint,
    }
}

/// `host:port/database` of a config, for messages (never the password).
fn server_name(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or("");
    format!("{host}:{port}/{db}")
}

fn pool_of(url: &str, deadline: Duration) -> Result<(Pool, String)> {
    let (url, tls) = tls::prepare(url).map_err(|e| team_error("(team_url)", e))?;
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| team_error("(team_url)", format!("not a valid postgres:// URL: {e}")))?;
    let server = server_name(&config);
    config.connect_timeout(deadline);
    config.application_name("logbook");
    let manager = Manager::from_config(
        config,
        tls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager)
        .max_size(4)
        .build()
        .map_err(|e| team_error(&server, e.to_string()))?;
    Ok((pool, server))
}

impl Connector for PgConnector {
    fn connect(&self, url: &str, deadline: Duration) -> Result<Box<dyn Catalog>> {
        // Nothing goes to the server yet: the schema is checked with the
        // first call, a query's in the same round trip (see `read`).
        let (pool, server) = pool_of(url, deadline)?;
        Ok(Box::new(PgCatalog {
            pool,
            server,
            timeout: deadline,
            checked: AtomicBool::new(false),
        }))
    }

    fn init(&self, url: &str, deadline: Duration) -> Result<i64> {
        let (pool, server) = pool_of(url, deadline)?;
        let catalog = PgCatalog {
            pool,
            server,
            // A migration rewrites tables a whole team filled: it may take
            // minutes, and being cut off only rolls it back to be redone.
            timeout: deadline.max(MIGRATION_TIMEOUT),
            // What it checks is what it makes.
            checked: AtomicBool::new(true),
        };
        catalog.run(async |c| migrations::apply(c).await)
    }
}

impl PgCatalog {
    /// Runs `f`, which may write, on a pooled connection within the
    /// catalog's timeout, once the schema is known to be this program's.
    fn run<T, F>(&self, f: F) -> Result<T>
    where
        F: AsyncFnOnce(&mut deadpool_postgres::Object) -> std::result::Result<T, String>,
    {
        self.within(async |mut client| {
            if !self.checked.load(Ordering::Relaxed) {
                let version = migrations::current(&client).await;
                self.check(version.map_err(|m| self.failed(m))?)?;
            }
            f(&mut client).await.map_err(|m| self.failed(m))
        })
    }

    /// Runs the query `f` on a pooled connection within the catalog's
    /// timeout. The first call sends the schema check and the query
    /// together: a command that opens a catalog to ask one thing (`find
    /// --team`) waits for the server once. A schema that is not this
    /// program's gives its own message, whatever the query made of it.
    fn read<T, F>(&self, f: F) -> Result<T>
    where
        F: AsyncFnOnce(&deadpool_postgres::Object) -> std::result::Result<T, String>,
    {
        self.within(async |client| {
            if !self.checked.load(Ordering::Relaxed) {
                let (version, answer) = tokio::join!(migrations::current(&client), f(&client));
                self.check(version.map_err(|m| self.failed(m))?)?;
                return answer.map_err(|m| self.failed(m));
            }
            f(&client).await.map_err(|m| self.failed(m))
        })
    }

    /// Whether the server's schema `version` is this program's; remembered
    /// when it is.
    fn check(&self, version: i64) -> Result<()> {
        migrations::check(&self.server, version)?;
        self.checked.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// The server's or the driver's `message` as this catalog's error.
    fn failed(&self, message: String) -> Error {
        team_error(&self.server, message)
    }

    /// Runs `f` with a pooled connection on the catalog's runtime, cut off
    /// at the catalog's timeout.
    fn within<T, F>(&self, f: F) -> Result<T>
    where
        F: AsyncFnOnce(deadpool_postgres::Object) -> Result<T>,
    {
        let rt = runtime()?;
        let fut = async {
            let client = self.pool.get().await.map_err(|e| {
                self.failed(match e {
                    deadpool_postgres::PoolError::Backend(e) => message_of(&e),
                    other => other.to_string(),
                })
            })?;
            f(client).await
        };
        block_on(rt, async {
            tokio::time::timeout(self.timeout, fut)
                .await
                .unwrap_or_else(|_| {
                    Err(self.failed(format!(
                        "no answer within {:.1} s",
                        self.timeout.as_secs_f64()
                    )))
                })
        })
    }
}

fn block_on<F: Future>(rt: &Runtime, f: F) -> F::Output {
    rt.block_on(f)
}

/// A driver error with the server's own message when there is one.
pub(crate) fn message_of(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => {
            let mut s = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                s = format!("{s}: {inner}");
                source = inner.source();
            }
            s
        }
    }
}

impl Catalog for PgCatalog {
    fn server(&self) -> String {
        self.server.clone()
    }

    fn push(&self, origin: &str, changes: &[Change], bulk: bool) -> Result<PushStats> {
        self.run(async |c| push::push(c, origin, changes, bulk).await)
    }

    fn find_runs(&self, q: &RunQuery) -> Result<(Vec<TeamRun>, u64)> {
        self.read(async |c| query::find_runs(c, q).await)
    }

    fn latest_output(
        &self,
        agent: &str,
        workflow: Option<&str>,
        output_type: Option<&str>,
        status: Option<&str>,
    ) -> Result<Option<TeamOutput>> {
        self.read(async |c| query::latest_output(c, agent, workflow, output_type, status).await)
    }

    fn runs(&self, ids: &[String]) -> Result<Vec<TeamRun>> {
        self.read(async |c| query::runs(c, ids).await)
    }

    fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        self.read(async |c| query::run_ids_with_prefix(c, prefix, limit).await)
    }

    fn children(&self, ids: &[String]) -> Result<Vec<(String, String)>> {
        self.read(async |c| query::children(c, ids).await)
    }

    fn output(&self, run_id: &str, file: &str) -> Result<Option<TeamOutput>> {
        self.read(async |c| query::output(c, run_id, file).await)
    }

    fn output_texts(&self, runs: &[(String, String)]) -> Result<Vec<(String, String, String)>> {
        self.read(async |c| query::output_texts(c, runs).await)
    }

    fn transcripts(&self) -> Result<Vec<TeamTranscript>> {
        self.read(async |c| query::transcripts(c).await)
    }

    fn status(&self) -> Result<ServerStatus> {
        self.read(async |c| query::status(c).await)
    }

    fn reconcile(&self, origin: &str, live: &dyn Fn() -> Result<LiveIds>) -> Result<u64> {
        self.run(async |c| push::reconcile(c, origin, live).await)
    }

    fn settle(&self) -> Result<()> {
        // VACUUM marks the new rows visible to all, which index-only scans
        // need; a user who does not own the tables gets a warning from the
        // server, not an error, and the autovacuum does it later. Only the
        // columns queries filter on are analysed: sampling the manifests'
        // and outputs' text was most of ANALYZE's work and informs no plan.
        self.run(async |c| {
            c.batch_execute(
                "VACUUM (ANALYZE) \
                   runs(origin, id, agent, workflow, status, \"user\", started_ms, deleted, tags, search), \
                   outputs(origin, run_id, seq, file, type), \
                   edges, work_sessions, transcripts, workflow_states",
            )
            .await
            .map_err(|e| message_of(&e))
        })
    }
}

//! Project-wide commands: init, demo, serve, completions.

use std::path::Path;

use anyhow::Result;
use clap::{Args, CommandFactory};
use logbook::error::Face;
use serde_json::json;

use crate::printer::Output;

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish.
    shell: clap_complete::Shell,
}

pub(crate) fn completions(args: &CompletionsArgs) -> Result<Output> {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut crate::Cli::command(), "logbook", &mut buf);
    let script = String::from_utf8(buf)?;
    Ok(Output::new(
        json!({ "shell": args.shell.to_string(), "script": script }),
        script,
    ))
}

pub(crate) fn init(root: &Path) -> Result<Output> {
    let path = logbook::ops::project::init(root)?;
    Ok(Output::new(
        json!({ "config": path }),
        format!("Wrote {} with the defaults.\n", path.display()),
    ))
}

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// Folder to fill (created; must not hold a Logbook project yet).
    #[arg(default_value = "logbook-demo")]
    dir: std::path::PathBuf,
}

pub(crate) fn demo(cwd: &Path, args: &DemoArgs) -> Result<Output> {
    let root = if args.dir.is_absolute() {
        args.dir.clone()
    } else {
        cwd.join(&args.dir)
    };
    let demo = logbook::ops::demo::fill(&root)?;
    let r = demo.root.display();
    let human = format!(
        "Filled {r} with an example project:\n  work session {}\n  {} runs in a lineage chain (docs/agent-outputs/)\n  {} transcripts, main and subagent\n  {} workflow invocations, some compacted into history\n\nTry:\n  logbook --root {r} status\n  logbook --root {r} find\n  logbook --root {r} lineage {}\n  logbook --root {r} workflow show --full\n  logbook --root {r} transcript list --all\n",
        demo.work_session,
        demo.runs.len(),
        demo.transcripts.len(),
        demo.invocations,
        demo.runs.first().map(String::as_str).unwrap_or_default(),
    );
    Ok(Output::new(serde_json::to_value(&demo)?, human))
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on, HOST[:PORT] (a name such as localhost is looked
    /// up; default 127.0.0.1:7777); anything but loopback requires --token.
    #[arg(long, value_name = "HOST:PORT", value_parser = bind_addr)]
    bind: Option<logbook_web::BindAddr>,
    /// Port to listen on (at 127.0.0.1 unless --bind names a host).
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// How long a request's headers may take to arrive, in milliseconds
    /// (tests shorten it).
    #[arg(long, hide = true, env = "LOGBOOK_SERVE_HEADER_TIMEOUT_MS")]
    header_timeout_ms: Option<u64>,
    /// How long an idle `/mcp` session lives, in milliseconds (tests
    /// shorten it).
    #[arg(long, hide = true, env = "LOGBOOK_MCP_SESSION_IDLE_MS")]
    mcp_session_idle_ms: Option<u64>,
    /// Access token every request must carry (bearer header, or the cookie
    /// the printed `?token=` link sets).
    #[arg(long, env = "LOGBOOK_TOKEN", hide_env_values = true, value_name = "T")]
    token: Option<String>,
    /// Show every machine's runs from the team catalog (team_url); runs of
    /// other machines show their outputs from the catalog's stored text.
    #[arg(long)]
    team: bool,
}

pub(crate) fn serve(ctx: &super::Context, args: &ServeArgs) -> Result<Output> {
    if args.team {
        // Say now, not on the first page view, when there is no catalog.
        logbook::ops::query::backend(&ctx.project, logbook::ops::query::Scope::Team)?;
    }
    let ms = std::time::Duration::from_millis;
    let server = logbook_web::Server::bind(
        ctx.project.clone(),
        logbook_web::Options {
            bind: logbook_web::resolve_bind(args.bind.as_ref(), args.port).map_err(ServeFailed)?,
            token: args.token.clone(),
            header_timeout: args
                .header_timeout_ms
                .map_or(logbook_web::HEADER_TIMEOUT, ms),
        },
    )
    .map_err(ServeFailed)?
    .with_team(args.team)
    .with_mcp(logbook_mcp::http_router(
        Some(ctx.project.root().to_path_buf()),
        logbook_mcp::SessionLimits {
            idle: args
                .mcp_session_idle_ms
                .map_or(logbook_mcp::SessionLimits::DEFAULT.idle, ms),
            ..logbook_mcp::SessionLimits::DEFAULT
        },
        super::context,
    ));
    let url = server.url();
    let human = format!(
        "Logbook viewer for {} at\n  {url}\nThe viewer only reads; /mcp (agents' MCP over HTTP) writes. Ctrl-C stops it.\n",
        ctx.project.root().display()
    );
    ctx.printer.print(&Output::new(
        json!({ "url": url, "root": ctx.project.root() }),
        human,
    ))?;
    server.run().map_err(ServeFailed)?;
    Ok(Output::printed())
}

/// `--bind`'s value, refused with the address's error worded for the
/// command line.
fn bind_addr(s: &str) -> std::result::Result<logbook_web::BindAddr, String> {
    s.parse()
        .map_err(|e: logbook_web::ServeError| e.word(Face::Cli))
}

/// A viewer that could not start, with what to do worded for the command
/// line: its options as flags, its steps as commands.
#[derive(Debug)]
struct ServeFailed(logbook_web::ServeError);

impl std::fmt::Display for ServeFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.word(Face::Cli))
    }
}

impl std::error::Error for ServeFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

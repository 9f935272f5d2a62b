//! `logbook export otlp`: Logbook's history as OpenTelemetry GenAI traces,
//! to any OTLP/HTTP receiver. The library decides what goes and under
//! which ids (`logbook::ops::export`); `logbook-otlp` carries it.

use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use logbook::error::Next;
use logbook::ops::export::{self, ExportOptions, ExportSummary};
use logbook::ops::params::{FindParams, RepoBase};
use logbook_otlp::{Flags, OtlpConfig, OtlpReceiver};
use serde_json::json;

use super::{Context, worded};
use crate::printer::{Output, Printer};

/// How long `--watch` waits between two rounds.
const WATCH_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Subcommand)]
pub(crate) enum ExportCommand {
    /// Send runs, work sessions and imported agent sessions as OpenTelemetry
    /// GenAI traces to an OTLP/HTTP receiver (Phoenix, Langfuse, Jaeger, Tempo…).
    Otlp(OtlpArgs),
}

#[derive(Debug, Args)]
pub(crate) struct OtlpArgs {
    /// The receiver's base URL (/v1/traces is appended unless it ends so),
    /// e.g. http://localhost:4318. Default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
    /// (used as given), else OTEL_EXPORTER_OTLP_ENDPOINT. Its query is sent
    /// but never stored or printed; a #fragment is refused.
    #[arg(long, value_name = "URL")]
    endpoint: Option<String>,
    /// Send to a link-local address (169.254.0.0/16, fe80::/10), which is
    /// refused otherwise: cloud metadata services answer there, and the
    /// headers (an API key) would go to them.
    #[arg(long)]
    allow_link_local: bool,
    /// http/protobuf (the default) or http/json; default from
    /// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL.
    #[arg(long, value_name = "PROTOCOL")]
    protocol: Option<String>,
    /// A header for each request, such as an API key (repeatable); added
    /// to OTEL_EXPORTER_OTLP_HEADERS.
    #[arg(long = "header", value_name = "K=V")]
    headers: Vec<String>,
    /// Include message text, tool arguments and results (off by default:
    /// transcripts hold secrets).
    #[arg(long)]
    content: bool,
    /// Send secrets as they are: by default every API key, private key,
    /// token or password found in what is sent is replaced by
    /// `[REDACTED:kind]` (`logbook secrets scan` lists them).
    #[arg(long)]
    no_redact: bool,
    /// Send everything again, with the same ids, whatever was sent before.
    #[arg(long)]
    all: bool,
    /// Spans per request.
    #[arg(long, value_name = "N", default_value_t = export::BATCH_SPANS)]
    batch: usize,
    /// Keep exporting what finishes, until interrupted.
    #[arg(long)]
    watch: bool,
    /// Only runs of this agent (then only runs are sent).
    #[arg(long)]
    agent: Option<String>,
    /// Only runs of this workflow, exactly or as a regular expression.
    #[arg(long, value_name = "REGEX")]
    workflow: Option<String>,
    /// Only runs of this status: completed, failed or cancelled.
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// Only runs this user started.
    #[arg(long)]
    user: Option<String>,
    /// Only runs with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only what started (runs) or was active (sessions, transcripts) at
    /// or after: RFC 3339, a date, or an age such as 2h, 3d.
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only runs whose manifest or small text outputs say these words.
    #[arg(long, value_name = "QUERY")]
    text: Option<String>,
    /// Only this repository's runs and transcripts: a remote URL, a
    /// folder, or `.`.
    #[arg(long, value_name = "REPO")]
    repo: Option<String>,
}

pub(crate) fn run(ctx: &Context, c: &ExportCommand) -> Result<Output> {
    match c {
        ExportCommand::Otlp(a) => otlp(ctx, a),
    }
}

fn otlp(ctx: &Context, a: &OtlpArgs) -> Result<Output> {
    let query = FindParams {
        agent: a.agent.clone(),
        workflow: a.workflow.clone(),
        status: a.status.clone(),
        user: a.user.clone(),
        tag: a.tag.clone(),
        since: a.since.clone(),
        text: a.text.clone(),
        repo: a.repo.clone(),
        repo_base: RepoBase::Folders(ctx.cwd.clone()),
        ..FindParams::default()
    }
    .query(ctx.project.clock.now())?;
    let runs_only = [&a.agent, &a.workflow, &a.status, &a.user, &a.tag, &a.text]
        .iter()
        .any(|f| f.is_some());
    let opts = ExportOptions {
        query,
        runs_only,
        content: a.content,
        redact: !a.no_redact,
        all: a.all,
        batch_spans: a.batch.max(1),
    };
    let flags = Flags {
        endpoint: a.endpoint.clone(),
        protocol: a.protocol.clone(),
        headers: a.headers.clone(),
        allow_link_local: a.allow_link_local,
    };
    let config = OtlpConfig::resolve(&flags, &|k| std::env::var(k).ok())?;
    if a.no_redact {
        ctx.printer.warn(
            "--no-redact: secrets in what is sent (API keys, private keys, tokens, passwords) go as they are",
        );
    }
    // A long wait for a busy receiver is said, not sat through in silence.
    let printer = Printer {
        json: ctx.printer.json,
        style: ctx.printer.style,
    };
    let mut receiver = OtlpReceiver::new(config).on_wait(move |m| printer.warn(m));
    if a.watch {
        return watch(ctx, opts, &mut receiver);
    }
    let summary = once(ctx, &opts, &mut receiver)?;
    Ok(Output::new(summary_json(&summary), human(&summary)))
}

fn once(ctx: &Context, opts: &ExportOptions, receiver: &mut OtlpReceiver) -> Result<ExportSummary> {
    let summary = ctx
        .printer
        .with_progress("exporting: {pos} spans sent", |progress| {
            export::export(&ctx.project, opts, receiver, &mut |s| {
                progress(s.spans, 0);
            })
        })?;
    Ok(summary)
}

/// Exports, then again every [`WATCH_EVERY`] (only what finished or
/// changed meanwhile goes), until SIGINT or SIGTERM; each round that sent
/// something prints its summary (a JSON line with `--json`).
fn watch(ctx: &Context, opts: ExportOptions, receiver: &mut OtlpReceiver) -> Result<Output> {
    let stop = stop_on_signal()?;
    let opts = ExportOptions { all: false, ..opts };
    let mut first = true;
    if !ctx.printer.json {
        ctx.printer.warn(&format!(
            "exporting to {} as runs finish (Ctrl-C stops)",
            receiver.config().shown
        ));
    }
    loop {
        let round = ExportOptions {
            all: first && opts.all,
            ..opts.clone()
        };
        first = false;
        let summary = once(ctx, &round, receiver)?;
        if summary.spans > 0 {
            print_round(ctx, &summary);
        }
        match stop.recv_timeout(WATCH_EVERY) {
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(Output::printed())
}

/// A channel that receives once SIGINT or SIGTERM arrives, so a watch
/// finishes the round it is in and stops without waiting out its pause.
fn stop_on_signal() -> Result<mpsc::Receiver<()>> {
    let (tx, rx) = mpsc::channel();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the signal watcher")?;
    std::thread::Builder::new()
        .name("logbook-export-signals".into())
        .spawn(move || {
            rt.block_on(async {
                let Ok(mut term) =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                else {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            });
            let _ = tx.send(());
        })
        .context("starting the signal watcher")?;
    Ok(rx)
}

/// One round of a watch: a JSON line with `--json`, else its text.
fn print_round(ctx: &Context, s: &ExportSummary) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = if ctx.printer.json {
        writeln!(stdout, "{}", summary_json(s))
    } else {
        write!(stdout, "{}", crate::printer::render(&human(s)))
    };
    let _ = stdout.flush();
}

fn summary_json(s: &ExportSummary) -> serde_json::Value {
    let mut v = serde_json::to_value(s).unwrap_or_else(|_| json!({}));
    if let Some(o) = v.as_object_mut() {
        o.insert("semconv".into(), json!(export::SEMCONV_VERSION));
    }
    v
}

fn human(s: &ExportSummary) -> String {
    let mut out = if s.spans == 0 {
        format!(
            "Nothing new to send to {} ({} records already there; {} sends them again).\n",
            s.endpoint,
            s.unchanged,
            worded(Next::none().option("all"))
        )
    } else {
        format!(
            "Sent {} spans to {} in {} requests: {} accepted, {} rejected.\n  {} work sessions, {} runs, {} transcripts; {} unchanged records skipped.\n",
            s.spans,
            s.endpoint,
            s.batches,
            s.accepted,
            s.rejected,
            s.work_sessions,
            s.runs,
            s.transcripts,
            s.unchanged
        )
    };
    if s.retries > 0 {
        out.push_str(&format!(
            "  {} requests were sent again after the receiver was busy or unreachable.\n",
            s.retries
        ));
    }
    for m in &s.partial {
        out.push_str(&format!("  The receiver partly rejected a batch: {m}\n"));
    }
    if s.running > 0 {
        out.push_str(&format!(
            "  {} runs still running: they go once they finish.\n",
            s.running
        ));
    }
    out
}

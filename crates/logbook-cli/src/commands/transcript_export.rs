//! `logbook transcript export ID --html | --markdown`: a session as one
//! file to attach to a bug report or a pull request, redacted.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use logbook_web::share::{self, Format};

use super::Context;
use crate::printer::Output;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["html", "markdown"])))]
pub(crate) struct ExportArgs {
    /// The session UUID, its first 8 or more characters, or its last 8.
    id: String,
    /// One self-contained HTML page: the viewer's rendering of every
    /// message, the stylesheet inline, no script, links and images inert.
    #[arg(long)]
    html: bool,
    /// Markdown, for a pull request or an issue.
    #[arg(long)]
    markdown: bool,
    /// Write to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Keep secrets as they are: by default every API key, private key,
    /// token or password is replaced by `[REDACTED:kind]`.
    #[arg(long)]
    no_redact: bool,
}

pub(crate) fn export(ctx: &Context, a: &ExportArgs) -> Result<Output> {
    let format = if a.html {
        Format::Html
    } else {
        Format::Markdown
    };
    if a.no_redact {
        ctx.printer.warn(
            "--no-redact: secrets in the transcript (API keys, private keys, tokens, passwords) are written as they are",
        );
    }
    match &a.output {
        Some(path) => {
            share::write_to(&ctx.project, &a.id, format, !a.no_redact, path).map_err(error)?;
            let path = path.display().to_string();
            Ok(Output::new(
                serde_json::json!({ "file": path, "redacted": !a.no_redact }),
                format!("Wrote {path}\n"),
            ))
        }
        None => {
            let mut out = std::io::stdout().lock();
            match share::write(&ctx.project, &a.id, format, !a.no_redact, &mut out) {
                Ok(()) => {}
                Err(share::ShareError::Write(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(share::ShareError::Logbook(logbook::Error::Io { source, .. }))
                    if source.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(error(e)),
            }
            let _ = out.flush();
            Ok(Output::printed())
        }
    }
}

/// The library's error as itself, so its kind decides the exit code.
fn error(e: share::ShareError) -> anyhow::Error {
    match e {
        share::ShareError::Logbook(e) => e.into(),
        share::ShareError::Write(e) => e.into(),
    }
}

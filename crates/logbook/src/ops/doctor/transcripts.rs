//! Transcripts an older reader of agent logs derived: the agents change
//! how they write their logs, and a newer [`PARSER_VERSION`] reads more of
//! them exactly (forks billed once, every tool call a tool call, titles
//! that are the person's). Doctor names each such transcript; `--fix`
//! imports its log again where the log still exists.

use std::path::Path;

use super::{Finding, Report, fix_does};
use crate::Logbook;
use crate::error::Result;
use crate::model::agent_log::{self, PARSER_VERSION};
use crate::model::transcript::Summary;
use crate::ops::transcript::{self, ImportFormat};

/// One finding per imported transcript whose parser version is older than
/// this Logbook's, re-imported with `fix` when its log is still there.
pub(super) fn check_parsers(
    p: &Logbook,
    listed: &[Summary],
    fix: bool,
    report: &mut Report,
) -> Result<()> {
    for t in listed.iter().filter(|t| t.source != "logbook") {
        let Ok(head) = logbook_store::transcript::read_head(&t.file) else {
            continue; // a corrupt file is named by its own check
        };
        let Some(src) = agent_log::source_of(&head.metadata) else {
            continue;
        };
        if src.parser >= PARSER_VERSION {
            continue;
        }
        let log = Path::new(&src.path);
        let there = logbook_store::fs::is_file(log);
        let fixed = (fix && there).then(|| reimport(p, log));
        let message = if there {
            format!(
                "imported by version {} of Logbook's agent log reader (this one is {PARSER_VERSION}, which reads {} logs more exactly) from {}",
                src.parser,
                src.format.as_str(),
                src.path
            )
        } else {
            format!(
                "imported by version {} of Logbook's agent log reader (this one is {PARSER_VERSION}); its log {} is gone, so it stays as it was imported",
                src.parser, src.path
            )
        };
        report.findings.push(Finding {
            kind: "old-parser-transcript",
            path: t.file.clone(),
            message,
            next: there.then(|| fix_does(" imports its log again")).flatten(),
            fixed,
        });
    }
    Ok(())
}

/// Imports `log` again and says what came of it.
fn reimport(p: &Logbook, log: &Path) -> String {
    match transcript::import_named(p, log, ImportFormat::Auto, None) {
        Ok(r) if !r.updated.is_empty() || !r.imported.is_empty() => {
            format!("imported again from {}", log.display())
        }
        Ok(r) => match r.skipped.first() {
            Some(s) => format!("not imported again: {}", s.reason),
            None => "imported again: nothing changed".to_string(),
        },
        Err(e) => format!("could not import it again: {e}"),
    }
}

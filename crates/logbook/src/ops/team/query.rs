//! The team queries: runs, outputs, lineage and transcripts of every
//! machine, answered from the catalog in the local shapes plus `"origin"`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::Value;

use super::{COMMAND_TIMEOUT, connect};
use crate::error::{Error, Next, Result, Step};
use crate::index::catalog::{Catalog, TeamRun};
use crate::model::ids::RunId;
use crate::model::lineage::{Lineage, lineage_of};
use crate::model::query::RunQuery;
use crate::model::repo::Repository;
use crate::model::run::{OutputRecord, Run, parse_manifest};
use crate::model::transcript::{Kind as TranscriptKind, Metadata, Summary};
use crate::ops::run::{DEFAULT_PAGE, entry};
use crate::ops::transcript::usage::{UsageBy, UsageReport, report};
use crate::store::Project;

/// A run from the catalog, with the machine it came from.
#[derive(Debug, Clone)]
pub struct OriginRun {
    /// The machine that pushed it.
    pub origin: String,
    /// The run; `folder` is its folder on that machine.
    pub run: Run,
}

fn run_of(t: TeamRun) -> Option<OriginRun> {
    let id = RunId::parse(&t.id).ok()?;
    let folder = PathBuf::from(&t.folder);
    let (manifest, _) = parse_manifest(&folder.join("manifest.json"), &t.manifest).ok()?;
    Some(OriginRun {
        origin: t.origin,
        run: Run {
            id,
            folder,
            manifest,
        },
    })
}

/// One run of a [`find`] page.
#[derive(Debug, Clone)]
pub struct TeamHit {
    /// The run, with its machine.
    pub run: OriginRun,
    /// For text queries: a fragment of the matching text, as a local
    /// `find --text` cuts it.
    pub snippet: Option<String>,
}

/// One page of [`find`].
#[derive(Debug, Clone)]
pub struct TeamPage {
    /// The runs on the page, newest first.
    pub runs: Vec<TeamHit>,
    /// How many match in all.
    pub total: u64,
}

impl TeamPage {
    /// How many matching runs come after this page.
    pub fn more(&self, offset: usize) -> u64 {
        crate::ops::run::more_after(self.total, offset, self.runs.len())
    }
}

/// `find --team`: runs of every machine matching `query`, newest first
/// (text matches too: the catalog keeps each run's words, not the counts
/// a rank needs), [`DEFAULT_PAGE`] unless the query sets a limit.
pub fn find(p: &Project, query: &RunQuery) -> Result<TeamPage> {
    query.matcher()?;
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    };
    let catalog = connect(p, COMMAND_TIMEOUT)?;
    let (runs, total) = catalog.find_runs(&query)?;
    let mut runs: Vec<TeamHit> = runs
        .into_iter()
        .filter_map(run_of)
        .map(|run| TeamHit { run, snippet: None })
        .collect();
    if let Some(words) = &query.text {
        snippets(catalog.as_ref(), &mut runs, words)?;
    }
    Ok(TeamPage { runs, total })
}

/// Cuts each hit's snippet as the local index does: from the manifest
/// when the words are there, else from the outputs' stored text, read in
/// one round trip for the runs that need it.
fn snippets(catalog: &dyn Catalog, hits: &mut [TeamHit], words: &str) -> Result<()> {
    let cut = crate::index::Snippets::new(words)?;
    let mut rest = vec![];
    for (i, hit) in hits.iter_mut().enumerate() {
        hit.snippet = cut.of_manifest(&hit.run.run.manifest)?;
        if hit.snippet.is_none() && !hit.run.run.manifest.outputs.is_empty() {
            rest.push(i);
        }
    }
    if rest.is_empty() {
        return Ok(());
    }
    let keys: Vec<(String, String)> = rest
        .iter()
        .map(|&i| (hits[i].run.origin.clone(), hits[i].run.run.id.to_string()))
        .collect();
    let texts = catalog.output_texts(&keys)?;
    for &i in &rest {
        let hit = &mut hits[i];
        let id = hit.run.run.id.to_string();
        for (_, _, text) in texts
            .iter()
            .filter(|(o, r, _)| *o == hit.run.origin && *r == id)
        {
            if let Some(s) = cut.of_text(text)? {
                hit.snippet = Some(s);
                break;
            }
        }
    }
    Ok(())
}

/// A run as `find --json` prints it, plus `"origin"`.
pub fn run_json(r: &OriginRun, now: Timestamp) -> Value {
    let mut v = serde_json::to_value(entry(&r.run, now)).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("origin".into(), Value::String(r.origin.clone()));
    }
    v
}

/// `find --team --json`: the page's runs with their origin, and for a text
/// query each one's snippet, as `find --json` gives them.
pub fn page_json(page: &TeamPage, now: Timestamp) -> Value {
    Value::Array(
        page.runs
            .iter()
            .map(|h| {
                let mut v = run_json(&h.run, now);
                if let (Value::Object(m), Some(s)) = (&mut v, &h.snippet) {
                    m.insert("snippet".into(), Value::String(s.clone()));
                }
                v
            })
            .collect(),
    )
}

/// What [`latest_output`] found in the catalog.
#[derive(Debug, Clone)]
pub struct TeamLatest {
    /// The run that registered it.
    pub run: OriginRun,
    /// Its record in the manifest.
    pub output: OutputRecord,
    /// Its path on the origin machine.
    pub path: PathBuf,
    /// Its stored text, when it is text.
    pub text: Option<String>,
    /// Whether `text` was cut.
    pub truncated: bool,
}

/// `latest-output --team`: the newest matching output of any machine.
pub fn latest_output(
    p: &Project,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Result<TeamLatest> {
    RunQuery {
        workflow: workflow.map(str::to_string),
        ..RunQuery::default()
    }
    .matcher()?;
    let found = connect(p, COMMAND_TIMEOUT)?.latest_output(agent, workflow, output_type)?;
    let found = found.and_then(|o| {
        let seq = o.seq as usize;
        let run = run_of(o.run)?;
        let output = run.run.manifest.outputs.get(seq)?.clone();
        Some(TeamLatest {
            path: run.run.output_path(&output.file),
            run,
            output,
            text: o.text,
            truncated: o.truncated,
        })
    });
    found.ok_or_else(|| {
        Error::not_found(
            "output of agent",
            agent,
            Next::of(
                Step::FindRuns {
                    agent: Some("NAME".into()),
                    team: true,
                },
                " shows that agent's runs on every machine",
            ),
        )
    })
}

/// `latest-output --team --json`: the local shape plus origin and text.
/// `unsafe` is always null: the catalog answers with the text that was
/// pushed, never through a link on the machine it came from.
pub fn latest_json(found: &TeamLatest) -> Value {
    serde_json::json!({
        "path": found.path,
        "session_id": found.run.run.manifest.session_id,
        "output": found.output,
        "missing": false,
        "unsafe": Value::Null,
        "origin": found.run.origin,
        "text": found.text,
        "truncated": found.truncated,
    })
}

/// Lineage across machines: the runs on the ancestor and descendant chains
/// of `id` in the catalog, and each one's origin.
pub fn lineage(p: &Project, id: &str, tz: &TimeZone) -> Result<(Lineage, HashMap<String, String>)> {
    let catalog = connect(p, COMMAND_TIMEOUT)?;
    let root = resolve(id)?;
    let mut runs: HashMap<String, OriginRun> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    // Up and down, one level per round trip.
    let mut frontier: Vec<String> = vec![root.clone()];
    let mut down: Vec<String> = vec![root.clone()];
    while !frontier.is_empty() || !down.is_empty() {
        let fetch: Vec<String> = frontier
            .iter()
            .chain(down.iter())
            .filter(|i| !runs.contains_key(*i))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for r in catalog.runs(&fetch)?.into_iter().filter_map(run_of) {
            runs.insert(r.run.id.to_string(), r);
        }
        let mut next_up = vec![];
        for n in frontier.drain(..) {
            if !seen.insert(format!("up:{n}")) {
                continue;
            }
            if let Some(r) = runs.get(&n) {
                next_up.extend(r.run.manifest.related().iter().cloned());
            }
        }
        let asked: Vec<String> = down
            .drain(..)
            .filter(|n| seen.insert(format!("down:{n}")))
            .collect();
        let mut next_down = vec![];
        if !asked.is_empty() {
            for (_, child) in catalog.children(&asked)? {
                next_down.push(child);
            }
        }
        frontier = next_up;
        down = next_down;
    }
    let origins = runs
        .iter()
        .map(|(k, v)| (k.clone(), v.origin.clone()))
        .collect();
    let runs = runs.into_iter().map(|(k, v)| (k, v.run)).collect();
    Ok((lineage_of(&root, runs, tz), origins))
}

/// A run id for a team query: the whole UUID (a prefix means little
/// across twenty machines' runs).
fn resolve(text: &str) -> Result<String> {
    RunId::parse(text).map(|id| id.to_string()).map_err(|_| {
        Error::invalid("run id", text, "a team query takes the whole run UUID").with_next(Next::of(
            Step::FindRuns {
                agent: None,
                team: true,
            },
            " lists them",
        ))
    })
}

/// A transcript in the catalog, as `transcript list` shows one.
#[derive(Debug, Clone, Serialize)]
pub struct OriginTranscript {
    /// The machine that pushed it.
    pub origin: String,
    /// What the local listing shows.
    #[serde(flatten)]
    pub summary: Summary,
    /// Its metadata, measured usage included.
    #[serde(skip)]
    pub metadata: Option<Metadata>,
}

/// `transcript list --team`: every machine's transcripts, newest first.
pub fn transcripts(p: &Project) -> Result<Vec<OriginTranscript>> {
    let rows = connect(p, COMMAND_TIMEOUT)?.transcripts()?;
    Ok(rows
        .into_iter()
        .map(|t| {
            let kind = if t.body.kind == "subagent" {
                TranscriptKind::Subagent
            } else {
                TranscriptKind::Main
            };
            let metadata: Option<Metadata> = serde_json::from_str(&t.body.metadata).ok();
            let measured = metadata
                .as_ref()
                .map(crate::model::transcript::measured)
                .unwrap_or_default();
            OriginTranscript {
                origin: t.origin,
                summary: Summary {
                    id: t.id,
                    kind,
                    file: PathBuf::from(&t.body.file),
                    workdir: t.body.workdir,
                    started_at: t.body.started_at,
                    last_active_at: t.body.last_active_at,
                    latest_total_tokens: t.body.latest_total_tokens.max(0) as u64,
                    parent_session_id: t.body.parent_session_id,
                    repository: metadata.as_ref().and_then(|m| Repository::in_map(&m.extra)),
                    title: t.body.title,
                    source: metadata
                        .as_ref()
                        .map_or("logbook", crate::model::transcript::source_name)
                        .to_string(),
                    messages: t.body.messages.max(0) as u64,
                    // From the metadata the catalog keeps whole: no
                    // column of its own, so no catalog migration.
                    models: measured.0,
                    usage: measured.1,
                },
                metadata,
            }
        })
        .collect())
}

/// `transcript usage --all --team`: the usage of every machine's
/// transcripts, each call counted once across the team.
pub fn usage(p: &Project, by: UsageBy) -> Result<UsageReport> {
    let entries = transcripts(p)?
        .into_iter()
        .map(|t| (Some(t.origin), t.summary, t.metadata))
        .collect();
    Ok(report(entries, by))
}

/// The stored text of one output of a run in the catalog, for the viewer.
pub fn output_text(p: &Project, run_id: &str, file: &str) -> Result<Option<(String, bool)>> {
    Ok(connect(p, COMMAND_TIMEOUT)?
        .output(run_id, file)?
        .and_then(|o| o.text.map(|t| (t, o.truncated))))
}

/// Whether `path` is on this machine's side: team answers name folders on
/// other machines, which must not be opened here.
pub fn is_local(p: &Project, origin: &str, path: &Path) -> bool {
    path.starts_with(&p.config.agent_outputs_folder) && origin == p.config.origin()
}

/// A run for the team viewer: this machine's own when it has the run, else
/// the catalog's copy (with the machine it came from).
pub fn show(p: &Project, id: &RunId) -> Result<OriginRun> {
    if let Ok(run) = crate::ops::run::show(p, id.as_str()) {
        return Ok(OriginRun {
            origin: p.config.origin(),
            run,
        });
    }
    connect(p, COMMAND_TIMEOUT)?
        .runs(&[id.to_string()])?
        .into_iter()
        .find_map(run_of)
        .ok_or_else(|| {
            Error::not_found(
                "run",
                id.to_string(),
                Next::of(
                    Step::FindRuns {
                        agent: None,
                        team: true,
                    },
                    " lists the team's runs",
                ),
            )
        })
}

/// [`find`] as the viewer pages it: the local page type, so a team list
/// renders like a local one.
pub fn find_page(p: &Project, query: &RunQuery) -> Result<crate::ops::run::Page> {
    let page = find(p, query)?;
    Ok(crate::ops::run::Page {
        hits: page
            .runs
            .into_iter()
            .map(|h| crate::index::Hit {
                run: h.run.run,
                snippet: h.snippet,
            })
            .collect(),
        total: page.total,
        exact: true,
        skipped: 0,
    })
}

/// A run's file list when its folder is on another machine: its registered
/// outputs (the files the catalog holds the text of).
pub fn tree_of(run: &OriginRun) -> crate::store::run_files::Tree {
    crate::store::run_files::Tree {
        session_id: run.run.id.to_string(),
        entries: run
            .run
            .manifest
            .outputs
            .iter()
            .map(|o| crate::store::run_files::TreeEntry {
                path: o.file.clone(),
                kind: "file",
                size: 0,
                depth: o.file.matches('/').count(),
            })
            .collect(),
        truncated: false,
    }
}

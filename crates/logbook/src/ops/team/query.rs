//! [`Team`]: the [`Backend`] over the catalog. A text search lists its
//! matches newest first (the catalog keeps each run's words, not the counts
//! a rank needs), and cuts each snippet as the local index does.

use crate::Logbook;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::error::{Error, Next, Result, Step};
use crate::model::ids::{RunId, RunRef};
use crate::model::lineage::lineage_of;
use crate::model::query::{ArchiveScope, RunQuery};
use crate::model::repo::Repository;
use crate::model::run::{Run, parse_manifest};
use crate::model::transcript::{Filter, Kind as TranscriptKind, Metadata, Summary};
use crate::ops::catalog::{COMMAND_TIMEOUT, connect};
use crate::ops::query::{
    Backend, Count, Found, LatestOutput, LatestQuery, OutputText, Page, RunLineage, Shown, Sink,
    TranscriptRow, Transcripts, drain, paged,
};
use crate::ops::transcript::ListOptions;
use crate::ops::transcript::usage::{UsageBy, UsageReport, UsageScope, report};
use logbook_index::catalog::{Catalog, TeamRun};

/// What the team scope cannot answer, refused before any query.
fn unsupported(filter: &'static str, why: &'static str) -> Error {
    Error::Unsupported {
        filter,
        scope: "team",
        why,
    }
}

/// Whether a catalog row is of `repo`: one recorded with that repository
/// (another machine's workdir says nothing about this project's folders,
/// so a row recorded without one is not).
fn of_repository(t: &Summary, repo: Option<&Repository>) -> bool {
    repo.is_none_or(|want| t.repository.as_ref().is_some_and(|have| have.matches(want)))
}

/// How many candidates an ambiguous prefix error lists.
const AMBIGUOUS_SHOWN: usize = 10;

/// [`crate::ops::query::Scope::Team`]: the project (for its own runs and
/// origin) and an open catalog.
pub(crate) struct Team<'p> {
    p: &'p Logbook,
    catalog: Box<dyn Catalog>,
}

impl<'p> Team<'p> {
    /// Connects to the project's catalog, waiting at most
    /// [`COMMAND_TIMEOUT`].
    pub(crate) fn open(p: &'p Logbook) -> Result<Team<'p>> {
        Ok(Team {
            p,
            catalog: connect(p, COMMAND_TIMEOUT)?,
        })
    }
}

/// A run from the catalog, with the machine it came from.
fn run_of(t: TeamRun) -> Option<(String, Run)> {
    let id = RunId::parse(&t.id).ok()?;
    let folder = PathBuf::from(&t.folder);
    let (manifest, _) = parse_manifest(&folder.join("manifest.json"), &t.manifest).ok()?;
    Some((
        t.origin,
        Run {
            id,
            folder,
            manifest,
        },
    ))
}

impl Backend for Team<'_> {
    fn find(
        &self,
        query: &RunQuery,
        _count: Count,
        now: Timestamp,
        sink: Option<Sink<'_>>,
    ) -> Result<Page> {
        query.matcher()?;
        if query.repo.is_some() {
            return Err(unsupported(
                "repo",
                "the catalog does not index repositories",
            ));
        }
        if query.archive != ArchiveScope::Live {
            return Err(unsupported(
                "archived",
                "the catalog keeps the live runs only",
            ));
        }
        let query = paged(query);
        let (runs, total) = self.catalog.find_runs(&query)?;
        let mut hits: Vec<Found> = runs
            .into_iter()
            .filter_map(run_of)
            .map(|(origin, run)| Found {
                run,
                snippet: None,
                origin: Some(origin),
            })
            .collect();
        if let Some(words) = &query.text {
            snippets(self.catalog.as_ref(), &mut hits, words)?;
        }
        let shown = drain(&mut hits, now, sink);
        Ok(Page {
            hits,
            shown,
            total,
            exact: true,
            skipped: 0,
            archived: 0,
            partial: None,
        })
    }

    fn resolve(&self, r: &RunRef) -> Result<RunId> {
        let prefix = match r {
            RunRef::Full(id) => return Ok(id.clone()),
            RunRef::Prefix(prefix) => prefix,
        };
        let mut ids: Vec<RunId> = self
            .catalog
            .run_ids_with_prefix(prefix, AMBIGUOUS_SHOWN)?
            .iter()
            .filter_map(|id| RunId::parse(id).ok())
            .collect();
        match ids.len() {
            1 => Ok(ids.remove(0)),
            0 => Err(Error::not_found(
                "run",
                prefix.as_str(),
                Next::of(
                    Step::FindRuns {
                        agent: None,
                        team: true,
                    },
                    " lists the team's runs",
                ),
            )),
            _ => Err(Error::AmbiguousId {
                kind: "run",
                given: prefix.clone(),
                candidates: ids.into_iter().map(|id| id.to_string()).collect(),
            }),
        }
    }

    /// This machine's own run when it has it (its folder is here), else
    /// the catalog's copy.
    fn show(&self, r: &RunRef) -> Result<Shown> {
        if let Ok(run) = crate::ops::run::show_confined(self.p, r) {
            return Ok(Shown {
                run,
                origin: Some(self.p.config.origin()),
            });
        }
        let id = self.resolve(r)?;
        self.catalog
            .runs(&[id.to_string()])?
            .into_iter()
            .find_map(run_of)
            .map(|(origin, run)| Shown {
                run,
                origin: Some(origin),
            })
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

    fn latest_output(&self, ask: &LatestQuery<'_>) -> Result<LatestOutput> {
        let status = ask.status_filter()?;
        RunQuery {
            workflow: ask.workflow.map(str::to_string),
            ..RunQuery::default()
        }
        .matcher()?;
        let found = self.catalog.latest_output(
            ask.agent,
            ask.workflow,
            ask.output_type,
            status.as_deref(),
        )?;
        let found = found.and_then(|o| {
            let seq = usize::try_from(o.seq).ok()?;
            let (origin, run) = run_of(o.run)?;
            let output = run.manifest.outputs.get(seq)?.clone();
            Some(LatestOutput {
                path: run.output_path(&output.file),
                run,
                output,
                missing: false,
                unconfined: None,
                origin: Some(origin),
                text: o.text,
                truncated: o.truncated,
            })
        });
        found.ok_or_else(|| ask.none_found(true))
    }

    /// Up and down the chains across machines, one level per round trip.
    fn lineage(&self, r: &RunRef, tz: &TimeZone) -> Result<RunLineage> {
        let root = self.resolve(r)?.to_string();
        let catalog = self.catalog.as_ref();
        let mut runs: HashMap<String, (String, Run)> = HashMap::new();
        let mut seen: HashSet<String> = HashSet::new();
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
            for (origin, run) in catalog.runs(&fetch)?.into_iter().filter_map(run_of) {
                runs.insert(run.id.to_string(), (origin, run));
            }
            let mut next_up = vec![];
            for n in frontier.drain(..) {
                if !seen.insert(format!("up:{n}")) {
                    continue;
                }
                if let Some((_, run)) = runs.get(&n) {
                    next_up.extend(run.manifest.related().iter().cloned());
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
        let origins: BTreeMap<String, String> = runs
            .iter()
            .map(|(k, (origin, _))| (k.clone(), origin.clone()))
            .collect();
        let runs = runs.into_iter().map(|(k, (_, run))| (k, run)).collect();
        Ok(RunLineage {
            graph: lineage_of(&root, runs, tz),
            origins: Some(origins),
        })
    }

    fn transcripts(&self, opts: &ListOptions) -> Result<Transcripts> {
        if opts.filter.workdir.is_some() {
            return Err(unsupported(
                "workdir",
                "workdirs are folders of other machines",
            ));
        }
        if !opts.filter.text.is_empty() {
            return Err(unsupported("text", "the catalog keeps no messages"));
        }
        if opts.live {
            return Err(unsupported(
                "live",
                "only the machine an agent writes on can tell",
            ));
        }
        let rows = self
            .rows()?
            .into_iter()
            .map(|(row, _)| row)
            .filter(|t| opts.kind.is_none_or(|k| t.summary.kind == k))
            .filter(|t| opts.filter.matches_row(&t.summary, |_, _| true))
            .filter(|t| of_repository(&t.summary, opts.repo.as_ref()))
            .skip(opts.offset)
            .take(opts.limit.unwrap_or(usize::MAX))
            .collect();
        Ok(Transcripts {
            rows,
            corrupt: vec![],
            elsewhere: 0,
        })
    }

    /// Every machine's transcripts, each call counted once across the
    /// team; the local scope does not apply to other machines', the
    /// filter does (source and model are in the metadata the catalog keeps).
    fn usage(&self, _scope: &UsageScope, by: UsageBy, filter: &Filter) -> Result<UsageReport> {
        if filter.workdir.is_some() {
            return Err(unsupported(
                "workdir",
                "workdirs are folders of other machines",
            ));
        }
        if !filter.text.is_empty() {
            return Err(unsupported("text", "the catalog keeps no messages"));
        }
        let entries = self
            .rows()?
            .into_iter()
            .filter(|(row, _)| filter.matches_row(&row.summary, |_, _| true))
            .map(|(row, metadata)| (row.origin, row.summary, metadata))
            .collect();
        Ok(report(entries, by, &crate::ops::price::table(self.p)?))
    }

    fn output_text(&self, r: &RunId, file: &str) -> Result<Option<OutputText>> {
        Ok(self.catalog.output(r.as_str(), file)?.and_then(|o| {
            o.text.map(|text| OutputText {
                text,
                truncated: o.truncated,
            })
        }))
    }
}

impl Team<'_> {
    /// Every machine's transcripts, newest first, with their metadata
    /// (measured usage included).
    fn rows(&self) -> Result<Vec<(TranscriptRow, Option<Metadata>)>> {
        let rows = self.catalog.transcripts()?;
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
                let summary = Summary {
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
                };
                (
                    TranscriptRow {
                        origin: Some(t.origin),
                        live: false,
                        cost_usd: None,
                        fork_of: metadata
                            .as_ref()
                            .and_then(crate::model::agent_log::fork_of)
                            .map(str::to_string),
                        summary,
                    },
                    metadata,
                )
            })
            .collect())
    }
}

/// Cuts each hit's snippet as the local index does: from the manifest
/// when the words are there, else from the outputs' stored text, read in
/// one round trip for the runs that need it.
fn snippets(catalog: &dyn Catalog, hits: &mut [Found], words: &str) -> Result<()> {
    let cut = logbook_index::Snippets::new(words)?;
    let mut rest = vec![];
    for (i, hit) in hits.iter_mut().enumerate() {
        hit.snippet = cut.of_manifest(&hit.run.manifest)?;
        if hit.snippet.is_none() && !hit.run.manifest.outputs.is_empty() {
            rest.push(i);
        }
    }
    if rest.is_empty() {
        return Ok(());
    }
    let origin = |h: &Found| h.origin.clone().unwrap_or_default();
    let keys: Vec<(String, String)> = rest
        .iter()
        .map(|&i| (origin(&hits[i]), hits[i].run.id.to_string()))
        .collect();
    let texts = catalog.output_texts(&keys)?;
    for &i in &rest {
        let hit = &mut hits[i];
        let (o, id) = (origin(hit), hit.run.id.to_string());
        for (_, _, text) in texts.iter().filter(|(to, tr, _)| *to == o && *tr == id) {
            if let Some(s) = cut.of_text(text)? {
                hit.snippet = Some(s);
                break;
            }
        }
    }
    Ok(())
}

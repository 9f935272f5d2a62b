//! `transcript usage`: the tokens imported sessions measured, per
//! transcript, and grouped by model, day or session.
//!
//! The numbers are the ones the import counted ([`crate::model::agent_log`]
//! states the rules) and stored in each transcript's `metadata.usage`; a
//! subagent's usage is reported on its own and rolled up into its main
//! session, and counted once in the total. A Claude Code call found in
//! several logs (resumed sessions copy earlier calls into their own file)
//! counts once, in the session that began first.

use crate::Logbook;
use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{ListOptions, list, resolve};
use crate::error::Result;
use crate::model::agent_log::{self, Usage, UsageBook};
use crate::model::price::PriceTable;
use crate::model::transcript::{Filter, Kind, Metadata, Summary};
use crate::ops::transcript::cost::{self, BookCost, CostBasis, CostNotes, MaybeCost};

/// Which transcripts a usage report covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageScope {
    /// One transcript (an id or a unique part), with its subagents.
    One(String),
    /// Those whose workdir is this project (or inside it).
    Project,
    /// Every transcript in the store.
    All,
    /// What `transcript list` lists run in this folder: its repository's
    /// (see [`super::default_scope`]); the per-user home's default.
    Repository(std::path::PathBuf),
}

/// How the rows of a usage report are grouped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UsageBy {
    /// Per model.
    #[default]
    Model,
    /// Per UTC day.
    Day,
    /// Per main session, its subagents rolled up.
    Session,
    /// Per repository ([`Summary::repo_label`]; the whole origin when two
    /// hosts hold one path).
    Repo,
}

impl UsageBy {
    /// The grouping a face received (`model`, `day`, `session`, `repo`),
    /// checked once for every face.
    pub fn parse(given: &str) -> Result<UsageBy> {
        match given.trim().to_ascii_lowercase().as_str() {
            "model" => Ok(UsageBy::Model),
            "day" => Ok(UsageBy::Day),
            "session" => Ok(UsageBy::Session),
            "repo" => Ok(UsageBy::Repo),
            _ => Err(crate::Error::invalid(
                "by",
                given.trim(),
                "expected model, day, session or repo",
            )),
        }
    }
}

/// One transcript's measured usage.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptUsage {
    /// The transcript id.
    pub id: String,
    /// The machine that pushed it (team reports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Main or subagent.
    pub kind: Kind,
    /// A subagent's main session.
    pub parent_session_id: Option<String>,
    /// The agent's working directory.
    pub workdir: String,
    /// When it began.
    pub started_at: String,
    /// When it was last active.
    pub last_active_at: String,
    /// Its own usage: what it adds to the report's total.
    pub usage: Usage,
    /// Calls its log holds that a session which began earlier already
    /// counted (Claude Code copies them into the files of resumed or
    /// copied sessions): left out of `usage` when both are in the report.
    pub duplicates: Usage,
    /// A main session's usage with its subagents' (imported ones) added.
    pub with_subagents: Usage,
    /// Its own usage per model.
    pub by_model: BTreeMap<String, Usage>,
    /// What its own usage cost (USD); `null` when a model of it is not priced.
    #[serde(rename = "cost_usd")]
    pub cost_usd: Option<f64>,
    /// What it cost with its subagents'.
    #[serde(rename = "cost_with_subagents_usd")]
    pub cost_with_subagents_usd: Option<f64>,
    /// Its own cost per model (`null`: not priced).
    pub cost_by_model: BTreeMap<String, Option<f64>>,
}

/// One row of the grouped report.
#[derive(Debug, Clone, Serialize)]
pub struct UsageRow {
    /// The model, the day or the main session id.
    pub key: String,
    /// The tokens.
    #[serde(flatten)]
    pub usage: Usage,
    /// Per day and per repository: the same tokens split by model, so a
    /// chart stacks them (empty, and left out, for the other groupings).
    #[serde(rename = "byModel", skip_serializing_if = "BTreeMap::is_empty")]
    pub by_model: BTreeMap<String, Usage>,
    /// What the tokens cost (USD); `null` when a model of them is not priced.
    pub cost_usd: Option<f64>,
    /// The cost split as `byModel` splits the tokens.
    #[serde(rename = "costByModel", skip_serializing_if = "BTreeMap::is_empty")]
    pub cost_by_model: BTreeMap<String, Option<f64>>,
}

/// What [`usage`] returns.
#[derive(Debug, Clone, Serialize)]
pub struct UsageReport {
    /// How `rows` are grouped.
    pub by: UsageBy,
    /// Every measured transcript in scope, newest first.
    pub transcripts: Vec<TranscriptUsage>,
    /// The usage grouped by `by`.
    pub rows: Vec<UsageRow>,
    /// Everything in scope, each transcript and each call counted once.
    pub total: Usage,
    /// What was left out because another session in scope counted it.
    pub duplicates: Usage,
    /// Transcripts in scope with no measured usage (not imported from an
    /// agent log), by id.
    pub unmeasured: Vec<String>,
    /// What everything in scope cost (USD), each call at its own model's
    /// price; `null` when some of it is of a model not priced.
    pub cost_usd: Option<f64>,
    /// The price table the costs were computed with, and what was assumed.
    #[serde(rename = "costBasis")]
    pub cost_basis: CostBasis,
}

/// The measured usage of the transcripts in `scope`, grouped by `by`.
pub fn usage(p: &Logbook, scope: &UsageScope, by: UsageBy) -> Result<UsageReport> {
    usage_filtered(p, scope, by, &Filter::default())
}

/// [`usage`] of only the transcripts `filter` keeps (by source, say: one
/// agent's usage), answered from the index's rows as `transcript list`.
pub fn usage_filtered(
    p: &Logbook,
    scope: &UsageScope,
    by: UsageBy,
    filter: &Filter,
) -> Result<UsageReport> {
    let mut reports = usage_grouped(p, scope, &[by], filter)?;
    match reports.pop() {
        Some(r) => Ok(r),
        None => Ok(report(vec![], by, &crate::ops::price::table(p)?)),
    }
}

/// [`usage_filtered`] grouped several ways (the usage page's per day and
/// per repository), each transcript's metadata read once for all of them.
pub fn usage_grouped(
    p: &Logbook,
    scope: &UsageScope,
    bys: &[UsageBy],
    filter: &Filter,
) -> Result<Vec<UsageReport>> {
    let (within, repo) = match scope {
        UsageScope::Project => (Some(p.root().to_path_buf()), None),
        UsageScope::Repository(cwd) => super::default_scope(p, cwd),
        _ => (None, None),
    };
    let listing = list(
        p,
        &ListOptions {
            within,
            repo,
            filter: filter.clone(),
            ..ListOptions::default()
        },
    )?;
    let wanted = match scope {
        // A whole id resolves without a look: one that names no transcript
        // is not found (as `show` says), not a report of no usage.
        UsageScope::One(text) => Some(measured(p, text)?.id),
        _ => None,
    };
    let entries = listing
        .transcripts
        .into_iter()
        .filter(|s| match &wanted {
            Some(id) => s.id == *id || s.parent_session_id.as_ref() == Some(id),
            None => true,
        })
        .map(|s| {
            let metadata = logbook_store::transcript::read_head(&s.file)
                .ok()
                .map(|h| h.metadata);
            (None, s, metadata)
        })
        .collect::<Vec<_>>();
    let table = crate::ops::price::table(p)?;
    Ok(bys
        .iter()
        .map(|by| report(entries.clone(), *by, &table))
        .collect())
}

/// The usage report over transcripts given with their metadata (and, in a
/// team report, the machine each came from): the one set of counting rules
/// for local and team reports.
pub(crate) fn report(
    entries: Vec<(Option<String>, Summary, Option<Metadata>)>,
    by: UsageBy,
    table: &PriceTable,
) -> UsageReport {
    let Gathered {
        mut books,
        mut repos,
        labels,
        unmeasured,
    } = gather(entries);
    let duplicates = drop_duplicate_calls(&mut books);
    let mut notes = CostNotes::default();
    let costs: Vec<BookCost> = books
        .iter()
        .map(|(_, book)| cost::book_cost(table, book, &mut notes))
        .collect();
    roll_up_subagents(&mut books, &costs);
    show_labels(&labels, &mut repos);
    let (total, mut rows) = rows(&books, &repos, by);
    let total_cost = cost_rows(&books, &costs, &repos, by, &mut rows);
    UsageReport {
        by,
        transcripts: books.into_iter().map(|(t, _)| t).collect(),
        rows,
        total,
        duplicates,
        unmeasured,
        cost_usd: cost::usd(total_cost),
        cost_basis: CostBasis {
            prices: table.id.clone(),
            notes: notes.lines(),
        },
    }
}

/// The transcripts of a usage report, each with its usage book, and the
/// repository each belongs to.
struct Gathered {
    books: Vec<(TranscriptUsage, UsageBook)>,
    /// Each transcript's repository identity (its label, once
    /// [`show_labels`] has run).
    repos: BTreeMap<String, String>,
    /// Each repository's identity (its origin with its host, folded as
    /// `same_origin` folds it) and the short label it is shown by, with
    /// its origin.
    labels: BTreeMap<String, (String, Option<String>)>,
    /// The transcripts that measured no usage.
    unmeasured: Vec<String>,
}

/// Reads each transcript's usage book and repository; one without a book
/// is unmeasured.
fn gather(entries: Vec<(Option<String>, Summary, Option<Metadata>)>) -> Gathered {
    let mut g = Gathered {
        books: vec![],
        repos: BTreeMap::new(),
        labels: BTreeMap::new(),
        unmeasured: vec![],
    };
    for (origin, s, metadata) in entries {
        let origin_of = s.repository.as_ref().and_then(|r| r.origin.clone());
        let identity = origin_of
            .as_deref()
            .map_or_else(|| s.repo_label(), crate::model::repo::origin_identity);
        g.labels
            .entry(identity.clone())
            .or_insert_with(|| (s.repo_label(), origin_of));
        g.repos.insert(s.id.clone(), identity);
        let Some(book) = metadata.as_ref().and_then(agent_log::usage_of) else {
            g.unmeasured.push(s.id);
            continue;
        };
        let own = book.total();
        g.books.push((
            TranscriptUsage {
                id: s.id,
                origin,
                kind: s.kind,
                parent_session_id: s.parent_session_id,
                workdir: s.workdir,
                started_at: s.started_at,
                last_active_at: s.last_active_at,
                usage: own,
                duplicates: Usage::default(),
                with_subagents: own,
                by_model: book.by_model.clone(),
                cost_usd: None,
                cost_with_subagents_usd: None,
                cost_by_model: BTreeMap::new(),
            },
            book,
        ));
    }
    g
}

/// A call Claude Code wrote into several files counts once, in the
/// session that began first; returns what the others no longer count.
fn drop_duplicate_calls(books: &mut [(TranscriptUsage, UsageBook)]) -> Usage {
    let mut order: Vec<usize> = (0..books.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| (books[i].0.started_at.clone(), books[i].0.id.clone());
        key(a).cmp(&key(b))
    });
    let mut seen: HashSet<String> = HashSet::new();
    let mut duplicates = Usage::default();
    for i in order {
        let (t, book) = &mut books[i];
        // The calls it keeps stay, to be priced one by one.
        let (kept, dropped): (Vec<_>, Vec<_>) = std::mem::take(&mut book.calls)
            .into_iter()
            .partition(|call| seen.insert(call.key().to_string()));
        for call in dropped {
            book.remove(&call);
            t.duplicates += call.usage();
            duplicates += call.usage();
        }
        book.calls = kept;
        t.usage = book.total();
        t.with_subagents = t.usage;
        t.by_model = book.by_model.clone();
    }
    duplicates
}

/// Prices each transcript, and rolls each subagent up into its main
/// session (tokens and cost), when that is in scope.
fn roll_up_subagents(books: &mut [(TranscriptUsage, UsageBook)], costs: &[BookCost]) {
    let mut rolled: BTreeMap<String, (Usage, MaybeCost)> = BTreeMap::new();
    for ((t, _), c) in books.iter_mut().zip(costs) {
        t.cost_usd = cost::usd(c.total());
        t.cost_by_model = c
            .by_model
            .iter()
            .map(|(m, c)| (m.clone(), cost::usd(*c)))
            .collect();
        if let Some(parent) = &t.parent_session_id {
            let slot = rolled
                .entry(parent.clone())
                .or_insert((Usage::default(), Some(Default::default())));
            slot.0 += t.usage;
            cost::add(&mut slot.1, c.total());
        }
    }
    for ((t, _), c) in books.iter_mut().zip(costs) {
        let mut with = c.total();
        if let Some((sub, sub_cost)) = rolled.get(&t.id) {
            t.with_subagents += *sub;
            cost::add(&mut with, *sub_cost);
        }
        t.cost_with_subagents_usd = cost::usd(with);
    }
}

/// Fills each row's cost by the grouping [`rows`] used; returns the total.
fn cost_rows(
    books: &[(TranscriptUsage, UsageBook)],
    costs: &[BookCost],
    repos: &BTreeMap<String, String>,
    by: UsageBy,
    rows: &mut [UsageRow],
) -> MaybeCost {
    let ids: Vec<&String> = books.iter().map(|(t, _)| &t.id).collect();
    let mut total = Some(Default::default());
    let mut groups: BTreeMap<String, MaybeCost> = BTreeMap::new();
    let mut split: BTreeMap<String, BTreeMap<String, MaybeCost>> = BTreeMap::new();
    let mut put = |key: &str, model: Option<&str>, c: MaybeCost| {
        cost::add(
            groups
                .entry(key.to_string())
                .or_insert(Some(Default::default())),
            c,
        );
        if let Some(m) = model {
            let row = split.entry(key.to_string()).or_default();
            cost::add(
                row.entry(m.to_string()).or_insert(Some(Default::default())),
                c,
            );
        }
    };
    for ((t, _), c) in books.iter().zip(costs) {
        cost::add(&mut total, c.total());
        match by {
            UsageBy::Repo => {
                let key = repos.get(&t.id).cloned().unwrap_or_default();
                for (m, mc) in &c.by_model {
                    put(&key, Some(m), *mc);
                }
            }
            UsageBy::Model => c.by_model.iter().for_each(|(m, mc)| put(m, None, *mc)),
            UsageBy::Day => {
                for (d, models) in &c.by_day {
                    models.iter().for_each(|(m, mc)| put(d, Some(m), *mc));
                }
            }
            UsageBy::Session => {
                let key = match &t.parent_session_id {
                    Some(parent) if ids.contains(&parent) => parent.clone(),
                    _ => t.id.clone(),
                };
                put(&key, None, c.total());
            }
        }
    }
    for row in rows.iter_mut() {
        row.cost_usd = groups.get(&row.key).copied().and_then(cost::usd);
        if let Some(models) = split.remove(&row.key).filter(|m| m.len() > 1) {
            row.cost_by_model = models.into_iter().map(|(m, c)| (m, cost::usd(c))).collect();
        }
    }
    total
}

/// Names each transcript's repository by its short label. Two
/// repositories with one short label (`org/x` on two hosts) are shown by
/// their whole origins, so neither row passes for the other.
fn show_labels(
    labels: &BTreeMap<String, (String, Option<String>)>,
    repos: &mut BTreeMap<String, String>,
) {
    let mut uses: BTreeMap<&str, usize> = BTreeMap::new();
    for (label, _) in labels.values() {
        *uses.entry(label.as_str()).or_default() += 1;
    }
    let shown: BTreeMap<String, String> = labels
        .iter()
        .map(|(identity, (label, origin))| {
            let label = match origin {
                Some(o) if uses.get(label.as_str()).copied().unwrap_or(0) > 1 => o.clone(),
                _ => label.clone(),
            };
            (identity.clone(), label)
        })
        .collect();
    for identity in repos.values_mut() {
        if let Some(label) = shown.get(identity.as_str()) {
            *identity = label.clone();
        }
    }
}

/// The total and the report's rows, grouped `by` (largest first, but by
/// day in date order), with a split by model where a row has one.
fn rows(
    books: &[(TranscriptUsage, UsageBook)],
    repos: &BTreeMap<String, String>,
    by: UsageBy,
) -> (Usage, Vec<UsageRow>) {
    let ids: Vec<&String> = books.iter().map(|(t, _)| &t.id).collect();
    let mut total = Usage::default();
    let mut groups: BTreeMap<String, Usage> = BTreeMap::new();
    let mut split: BTreeMap<String, BTreeMap<String, Usage>> = BTreeMap::new();
    for (t, book) in books {
        total += t.usage;
        match by {
            UsageBy::Repo => {
                let key = repos.get(&t.id).cloned().unwrap_or_default();
                *groups.entry(key.clone()).or_default() += t.usage;
                let models = split.entry(key).or_default();
                for (m, u) in &book.by_model {
                    *models.entry(m.clone()).or_default() += *u;
                }
            }
            UsageBy::Model => {
                for (m, u) in &book.by_model {
                    *groups.entry(m.clone()).or_default() += *u;
                }
            }
            UsageBy::Day => {
                // Each call on its own day (the book counts by each
                // call's timestamp), not the session's first day.
                for (d, models) in &book.by_day {
                    let row = split.entry(d.clone()).or_default();
                    for (m, u) in models {
                        *groups.entry(d.clone()).or_default() += *u;
                        *row.entry(m.clone()).or_default() += *u;
                    }
                }
            }
            UsageBy::Session => {
                let key = match &t.parent_session_id {
                    Some(parent) if ids.contains(&parent) => parent.clone(),
                    _ => t.id.clone(),
                };
                *groups.entry(key).or_default() += t.usage;
            }
        }
    }
    let mut rows: Vec<UsageRow> = groups
        .into_iter()
        .map(|(key, usage)| UsageRow {
            by_model: split.remove(&key).unwrap_or_default(),
            key,
            usage,
            cost_usd: None,
            cost_by_model: BTreeMap::new(),
        })
        .collect();
    if by != UsageBy::Day {
        rows.sort_by_key(|r| std::cmp::Reverse(r.usage.total_tokens));
    }
    (total, rows)
}

/// What one transcript measured, as a work session's token counts take it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Measured {
    /// The transcript id.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// The context size at its last call (seed 003's `latestTotalTokens`):
    /// a work session's `current`.
    pub latest_total_tokens: u64,
    /// The largest context size it reached (`peakTotalTokens` of an imported
    /// log, else the latest): a work session's `peak`, and what a subagent's
    /// work would have added to the main context.
    pub peak_total_tokens: u64,
    /// Every token its calls were billed for, when measured from a log.
    pub total_tokens: Option<u64>,
}

/// The measured token counts of the transcript `text` names (live or
/// archived), read from its head only.
pub fn measured(p: &Logbook, text: &str) -> Result<Measured> {
    let id = resolve(p, text)?;
    for dir in [
        p.config.transcripts_dir.clone(),
        logbook_store::transcript::archive_dir(p),
    ] {
        for (kind, path) in logbook_store::transcript::candidates(&dir, id.as_str()) {
            let Ok(head) = logbook_store::transcript::read_head(&path) else {
                continue;
            };
            if !head.id.eq_ignore_ascii_case(id.as_str()) {
                continue;
            }
            let md = &head.metadata;
            let peak = md
                .extra
                .get(agent_log::PEAK_KEY)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
                .max(md.latest_total_tokens);
            return Ok(Measured {
                id: id.to_string(),
                kind,
                latest_total_tokens: md.latest_total_tokens,
                peak_total_tokens: peak,
                total_tokens: agent_log::usage_of(md).map(|b| b.total().total_tokens),
            });
        }
    }
    Err(crate::Error::not_found(
        "transcript",
        id.as_str(),
        crate::error::Next::of(
            crate::error::Step::list_transcripts(true),
            " shows the transcripts there are",
        ),
    ))
}

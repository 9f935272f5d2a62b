//! The local backend: this project's SQLite index, every answer checked
//! against the files (see `logbook_index`); and the folder scan, which
//! answers `find` by reading every manifest and the rest as the index does.

use crate::Logbook;
use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::{
    Backend, Count, LatestOutput, LatestQuery, OutputText, Page, RunLineage, Shown, Sink,
    TranscriptRow, Transcripts, drain,
};
use crate::error::Result;
use crate::model::ids::{RunId, RunRef};
use crate::model::query::RunQuery;
use crate::model::transcript::Filter;
use crate::ops::run;
use crate::ops::transcript::usage::{UsageBy, UsageReport, UsageScope, usage_filtered};
use crate::ops::transcript::{self, ListOptions};

/// [`super::Scope::Local`].
pub(super) struct Local<'p> {
    pub(super) p: &'p Logbook,
}

impl Backend for Local<'_> {
    fn find(
        &self,
        query: &RunQuery,
        count: Count,
        now: Timestamp,
        sink: Option<Sink<'_>>,
    ) -> Result<Page> {
        match sink {
            Some(sink) => run::find_each(self.p, query, count, now, sink),
            None => run::find_page(self.p, query, count),
        }
    }

    fn resolve(&self, r: &RunRef) -> Result<RunId> {
        run::resolve_ref(self.p, r)
    }

    fn show(&self, r: &RunRef) -> Result<Shown> {
        Ok(Shown {
            run: run::show_confined(self.p, r)?,
            origin: None,
        })
    }

    fn latest_output(&self, ask: &LatestQuery<'_>) -> Result<LatestOutput> {
        run::latest_output(self.p, ask)
    }

    fn lineage(&self, r: &RunRef, tz: &TimeZone) -> Result<RunLineage> {
        Ok(RunLineage {
            graph: run::lineage_ref(self.p, r, tz)?,
            origins: None,
        })
    }

    fn transcripts(&self, opts: &ListOptions) -> Result<Transcripts> {
        let listing = transcript::list(self.p, opts)?;
        Ok(Transcripts {
            rows: listing
                .transcripts
                .into_iter()
                .map(|summary| TranscriptRow {
                    origin: None,
                    live: listing.live.contains(&summary.id),
                    cost_usd: None,
                    fork_of: transcript::listing::fork_of(&summary),
                    summary,
                })
                .collect(),
            corrupt: listing.corrupt,
            elsewhere: listing.elsewhere,
        })
    }

    fn usage(&self, scope: &UsageScope, by: UsageBy, filter: &Filter) -> Result<UsageReport> {
        usage_filtered(self.p, scope, by, filter)
    }

    /// One read of the transcripts for every grouping.
    fn usage_grouped(
        &self,
        scope: &UsageScope,
        bys: &[UsageBy],
        filter: &Filter,
    ) -> Result<Vec<UsageReport>> {
        crate::ops::transcript::usage_grouped(self.p, scope, bys, filter)
    }

    fn output_text(&self, r: &RunId, file: &str) -> Result<Option<OutputText>> {
        let read = run::read_output(self.p, r.as_str(), file)?;
        Ok(String::from_utf8(read.bytes).ok().map(|text| OutputText {
            text,
            truncated: false,
        }))
    }
}

/// [`super::Scope::Files`]: `find` by the seed's discovery algorithm (every
/// manifest read, filtered and sorted in memory), everything else as
/// [`Local`].
pub(super) struct Files<'p> {
    pub(super) p: &'p Logbook,
}

impl Files<'_> {
    fn local(&self) -> Local<'_> {
        Local { p: self.p }
    }
}

impl Backend for Files<'_> {
    fn find(
        &self,
        query: &RunQuery,
        _count: Count,
        now: Timestamp,
        sink: Option<Sink<'_>>,
    ) -> Result<Page> {
        let mut page = run::find_scan_page(self.p, query)?;
        page.shown = drain(&mut page.hits, now, sink);
        Ok(page)
    }

    fn resolve(&self, r: &RunRef) -> Result<RunId> {
        self.local().resolve(r)
    }

    fn show(&self, r: &RunRef) -> Result<Shown> {
        self.local().show(r)
    }

    fn latest_output(&self, ask: &LatestQuery<'_>) -> Result<LatestOutput> {
        self.local().latest_output(ask)
    }

    fn lineage(&self, r: &RunRef, tz: &TimeZone) -> Result<RunLineage> {
        self.local().lineage(r, tz)
    }

    fn transcripts(&self, opts: &ListOptions) -> Result<Transcripts> {
        self.local().transcripts(opts)
    }

    fn usage(&self, scope: &UsageScope, by: UsageBy, filter: &Filter) -> Result<UsageReport> {
        self.local().usage(scope, by, filter)
    }

    fn output_text(&self, r: &RunId, file: &str) -> Result<Option<OutputText>> {
        self.local().output_text(r, file)
    }
}

//! What to do after each error, as data: the one table from an [`Error`]
//! to its [`Next`], kept apart from the variants so that adding an error
//! and wording its next step are read side by side here.

use super::{Error, Face, Next, Step};

impl Error {
    /// What the person should do next, when there is something to say,
    /// worded for the command line.
    pub fn hint(&self) -> Option<String> {
        self.hint_for(Face::Cli)
    }

    /// What to do next, worded for `face`: an agent over MCP is told which
    /// tool to call where a person at the CLI is told which command to run.
    pub fn hint_for(&self, face: Face) -> Option<String> {
        self.next().map(|next| next.word(face))
    }

    /// What to do next, as data: prose the same for every face and the
    /// [`Step`]s each face words its own way; `None` when there is nothing
    /// to say.
    pub fn next(&self) -> Option<Next> {
        use Step as S;
        let next = match self {
            Error::NotFound { hint, .. }
            | Error::Team { hint, .. }
            | Error::Export { hint, .. }
            | Error::AgentSettings { hint, .. }
            | Error::AlreadyExists { hint, .. }
            | Error::Invalid { next: hint, .. }
            | Error::Config { next: hint, .. } => hint.clone(),
            Error::Unsupported { filter, .. } => Next::say("leave out ")
                .option(filter)
                .text(" to ask every machine, or ask this machine's index alone"),
            Error::RunWithoutManifest { .. } => Next::say(
                "the tool that made the folder writes the manifest when it starts the run; until then listings show it with status unknown",
            ),
            Error::RunArchived { id, .. } => Next::say("run ")
                .step(S::Unarchive { id: id.clone() })
                .text(" first: archived runs are read-only"),
            Error::RunDeleted { .. } => Next::say(
                "a deleted run cannot come back; its tombstone keeps its manifest",
            ),
            Error::RunLinked { id, .. } => Next::say(
                "those runs build on it and would name a run that is gone; archiving keeps it readable instead (",
            )
            .step(S::ArchiveOlderThan)
            .text("), or ")
            .step(S::DeleteRun {
                id: id.clone(),
                force: true,
            })
            .text(" deletes it anyway"),
            Error::NotConfirmed { id, force, .. } => Next::say("nothing was changed; ")
                .step(S::DeleteRun {
                    id: id.clone(),
                    force: *force,
                })
                .text(" deletes it"),
            Error::AmbiguousId { .. } => {
                Next::say("give more characters of the id, or the whole UUID")
            }
            Error::LineageCycle { parent, .. } => {
                Next::say("a run can only build on earlier work; ")
                    .step(S::Lineage { id: parent.clone() })
                    .text(format!(" shows what {parent} already builds on"))
            }
            Error::NotARegularFile { .. } => Next::say(
                "Logbook reads only regular files (not folders, FIFOs or devices): name one, or put one in its place",
            ),
            Error::FileTooLarge { .. } => Next::say(
                "check that this is the file you meant; Logbook reads files of that kind only up to this size",
            ),
            Error::NoAgentSession { agent } => Next::say("record its sessions with ")
                .step(S::InstallHooks {
                    agent: (*agent).to_string(),
                })
                .text(", or import them with ")
                .step(S::ImportTranscripts)
                .text("; ")
                .step(S::ListTranscripts {
                    all: false,
                    source: Some((*agent).to_string()),
                })
                .text(" lists those there are"),
            Error::NotAnAgentSession { .. } => Next::say(
                "only sessions imported from an agent's log resume in that agent; ",
            )
            .step(S::ListTranscripts {
                all: false,
                source: None,
            })
            .text(" lists the transcripts there are, with the agent each came from"),
            Error::NoActiveSession => Next::say("start one with ")
                .step(S::StartSession { yes: false })
                .text(", or resume a paused one with ")
                .step(S::ResumeSession { id: None })
                .text(" (")
                .step(S::ListSessions)
                .text(" shows them)"),
            Error::SeveralPaused { ids } => {
                let mut next = Next::say("resume one by its id: ");
                for (i, id) in ids.iter().enumerate() {
                    if i > 0 {
                        next = next.text(", ");
                    }
                    next = next.step(S::ResumeSession {
                        id: Some(id.clone()),
                    });
                }
                next
            }
            Error::SessionActive { .. } => Next::say("close it first (")
                .step(S::CloseSession)
                .text("), or use ")
                .step(S::StartSession { yes: true })
                .text(" to close it and start the new one"),
            Error::SessionClosed {
                id, workflow: true, ..
            } => Next::say("its workflow state is read-only (")
                .step(S::WorkflowState {
                    session: Some(id.clone()),
                })
                .text("); start a new session with ")
                .step(S::StartSession { yes: false }),
            Error::SessionClosed { .. } => {
                Next::say("start a new one with ").step(S::StartSession { yes: false })
            }
            Error::IdTooLong { max, .. } => Next::say("shorten ")
                .option("client")
                .text(" or ")
                .option("project")
                .text(format!(
                    ": the id is {{PREFIX}}{{YYYYMM}}-{{CLIENT}}-{{PROJECT}} and must stay within {max} bytes"
                )),
            Error::MilestoneExists {
                name, done: false, ..
            } => Next::say("mark it done with ")
                .step(S::FinishMilestone { name: name.clone() })
                .text(", or give the new one another name"),
            Error::MilestoneExists { .. } => Next::say("give the new milestone another name"),
            Error::MilestoneNotFound {
                near: Some(near), ..
            } => Next::say(format!("did you mean {near:?}? ("))
                .step(S::SessionStatus { id: None })
                .text(" lists the milestones)"),
            Error::MilestoneNotFound {
                already_done: true,
                ..
            } => Next::of(S::SessionStatus { id: None }, " lists the milestones"),
            Error::MilestoneNotFound { name, .. } => Next::say("add it first with ")
                .step(S::AddMilestone { name: name.clone() })
                .text(" (")
                .step(S::SessionStatus { id: None })
                .text(" lists the milestones)"),
            Error::SessionInTwoPlaces { .. } => {
                Next::say("compare them by hand and remove the stale one")
            }
            Error::RunFinished {
                registering: true, ..
            } => Next::say(
                "outputs can only be registered while it is running (start a new run, or link one with ",
            )
            .step(S::LinkRun)
            .text(")"),
            Error::NoInvocationInProgress { agent } => {
                Next::say("record one first with ").step(S::InvokeAgent {
                    agent: agent.clone(),
                })
            }
            Error::IdMismatch { .. } => Next::say(
                "rename the file after the id it holds, or fix the id inside (",
            )
            .step(S::Doctor { fix: false })
            .text(" lists every such file)"),
            Error::NoUserHome => Next::say(
                "set LOGBOOK_HOME to the folder where records outside any project should go",
            ),
            Error::RootMissing { .. } => Next::say("check ")
                .option("root")
                .text(" / LOGBOOK_ROOT; ")
                .step(S::Init)
                .text(" or ")
                .step(S::StartSession { yes: false })
                .text(" creates a project there"),
            Error::LockTimeout { .. } | Error::IndexBusy { .. } => {
                Next::say("is another Logbook process still running? ").step(S::WaitLonger)
            }
            Error::Conflict { .. } => Next::say("read the state again (")
                .step(S::WorkflowState { session: None })
                .text(") and retry with its version"),
            Error::TokensOutOfRange { max, .. } => {
                Next::say(format!("token counts go from 0 to {max}; give the real count ("))
                    .step(S::SetUsage)
                    .text("), or fix the file by hand")
            }
            Error::NotImported { .. } => Next::say("give a Claude Code or Codex log (")
                .option("format")
                .text(" claude-code or ")
                .option("format")
                .text(
                    " codex when its first lines do not say which agent wrote it), a seed 003 transcript, or a folder of them",
                ),
            Error::Corrupt { .. } => Next::say("fix the file or move it aside (")
                .step(S::Doctor { fix: false })
                .text(" lists every problem)"),
            Error::TextTooLong { .. } => Next::say(
                "shorten it; a long text belongs in a file in the run's folder, registered with ",
            )
            .step(S::RegisterOutput),
            // Only a damaged database is worth rebuilding: a query SQLite
            // refused says nothing about the index's health.
            Error::Index { corrupt: true, .. } => {
                Next::of(S::RebuildIndex, " recreates it from the files")
            }
            Error::HistoryIncomplete { .. } => Next::of(
                S::Doctor { fix: false },
                " reports every compaction archive that is missing or unreadable",
            ),
            Error::Io { .. } | Error::Index { .. } | Error::RunFinished { .. } => {
                return None;
            }
        };
        (!next.is_empty()).then_some(next)
    }
}

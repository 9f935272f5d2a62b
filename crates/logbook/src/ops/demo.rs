//! `logbook demo`: fills a folder with a realistic example project, written
//! through the same library calls an orchestrator would make, so every view
//! (work session, runs with lineage, transcripts, workflow history with a
//! compaction) has something to show.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::Logbook;
use crate::error::{self, Error, Next, Result};
use crate::model::run::{OutputType, RunStatus};
use crate::model::transcript::{Kind, Message, Transcript};
use crate::model::work_session::{AgentOutcome, Usage, WorkSession};
use crate::model::workflow::{AgentType, DecisionType, VerdictDecision};
use crate::ops::work_session::{self as ws, StartOptions};
use crate::ops::workflow::{self, Complete, Invoke, NewDecision, NewVerdict, Target};
use crate::ops::{run, transcript};
use logbook_store::config::{CONFIG_FILE, Config, STATE_DIR};

/// What the demo created, for the CLI to print.
#[derive(Debug, Serialize)]
pub struct Demo {
    /// The project root that was filled.
    pub root: PathBuf,
    /// The work session started.
    pub work_session: String,
    /// The runs created, oldest first.
    pub runs: Vec<String>,
    /// The transcripts saved.
    pub transcripts: Vec<String>,
    /// Invocations recorded in the workflow history.
    pub invocations: u64,
}

struct Step {
    agent: &'static str,
    title: &'static str,
    workflow: &'static str,
    description: &'static str,
    input: (&'static str, &'static str),
    file: &'static str,
    kind: OutputType,
    body: &'static str,
    status: RunStatus,
}

const STEPS: [Step; 4] = [
    Step {
        agent: "alex",
        title: "Alex the Facilitator",
        workflow: "intake-app",
        description: "Initial requirements gathering for application development",
        input: ("project_name", "Laptop refresh"),
        file: "initial-requirements.md",
        kind: OutputType::Document,
        body: "# Initial requirements\n\n- 10 laptops for the sales team\n- 16 GB RAM, 14-inch\n- Budget approved\n",
        status: RunStatus::Completed,
    },
    Step {
        agent: "casey",
        title: "Casey",
        workflow: "deep-dive-app",
        description: "Detailed requirements from the intake",
        input: ("category", "Application Development"),
        file: "detailed-requirements.md",
        kind: OutputType::Document,
        body: "# Detailed requirements\n\n## Hardware\nBusiness laptops, docking stations.\n\n## Delivery\nBefore the sales kick-off.\n",
        status: RunStatus::Completed,
    },
    Step {
        agent: "pixel",
        title: "Pixel",
        workflow: "build-stories",
        description: "User stories from the detailed requirements",
        input: ("project_name", "Laptop refresh"),
        file: "stories/story-1.md",
        kind: OutputType::Artifact,
        body: "# Story 1: order laptops\n\nAs a sales lead I want ten laptops so that the team can travel light.\n",
        status: RunStatus::Running,
    },
    Step {
        agent: "quinn",
        title: "Quinn the Auditor",
        workflow: "deep-dive-security",
        description: "Security review of the laptop image",
        input: ("category", "Security"),
        file: "findings.json",
        kind: OutputType::Data,
        body: "{\"findings\": [{\"id\": 1, \"severity\": \"medium\", \"title\": \"Disk encryption off by default\"}]}\n",
        status: RunStatus::Failed,
    },
];

/// Fills `root` (which must not hold a Logbook project yet) with the example.
pub fn fill(root: &Path) -> Result<Demo> {
    let p = open_empty(root)?;
    let session = start_session(&p)?;
    let sid = Some(session.session_id.as_str());
    let target = Target {
        session: Some(session.session_id.clone()),
        expect_version: None,
    };
    let mut runs: Vec<String> = vec![];
    for (i, step) in STEPS.iter().enumerate() {
        let run_id = record_step(&p, sid, &target, i, step, runs.last())?;
        runs.push(run_id);
    }
    ws::complete_milestone(&p, sid, "Requirements gathered")?;
    ws::record_usage(&p, sid, Usage::Add(41_500))?;
    review_rounds(&p, &target)?;
    decide(&p, &target)?;
    let loaded = workflow::load(&p, Some(&session.session_id))?;
    let invocations = loaded
        .state
        .orchestrator_workflow
        .as_ref()
        .map_or(0, |w| w.total_invocations());
    let transcripts = save_transcripts(&p, root)?;
    Ok(Demo {
        root: root.to_path_buf(),
        work_session: session.session_id,
        runs,
        transcripts,
        invocations,
    })
}

/// Creates the project in `root`, refusing a folder that already holds one.
fn open_empty(root: &Path) -> Result<Logbook> {
    for marker in [STATE_DIR, CONFIG_FILE] {
        if logbook_store::config::marker_exists(&root.join(marker)) {
            return Err(Error::AlreadyExists {
                path: root.join(marker),
                hint: Next::say("that folder already holds a Logbook project; give ")
                    .step(error::Step::Demo)
                    .text(" a new folder"),
            });
        }
    }
    logbook_store::fs::create_folder(root)?;
    Config::init(root)?;
    Logbook::open(root)
}

/// The demo's work session, with its milestones and a note.
fn start_session(p: &Logbook) -> Result<WorkSession> {
    let session = ws::start(
        p,
        StartOptions {
            client: Some("ACME".into()),
            project: Some("LAPTOPS".into()),
            ..StartOptions::default()
        },
    )?;
    let sid = Some(session.session_id.as_str());
    ws::add_milestone(p, sid, "Requirements gathered")?;
    ws::add_milestone(p, sid, "Stories written")?;
    ws::add_milestone(p, sid, "Security review passed")?;
    ws::add_note(p, sid, "Client prefers 14-inch models")?;
    Ok(session)
}

/// One step: its run (related to the previous one) with its output, the
/// workflow's invocation, and, unless it is still running, its finish.
/// Returns the run's id.
fn record_step(
    p: &Logbook,
    sid: Option<&str>,
    target: &Target,
    i: usize,
    step: &Step,
    previous: Option<&String>,
) -> Result<String> {
    let started = run::start(
        p,
        run::StartOptions {
            agent: step.agent.into(),
            title: Some(step.title.into()),
            bundle: Some("bmad/bmm".into()),
            workflow: Some(step.workflow.into()),
            description: Some(step.description.into()),
            inputs: vec![(step.input.0.into(), step.input.1.into())],
            related: previous.cloned().into_iter().collect(),
            tags: vec!["demo".into()],
            user: Some("demo".into()),
            workflow_file: None,
            path_trust: logbook_store::PathTrust::User,
            metadata: serde_json::Map::new(),
        },
    )?;
    let path = started.folder.join(step.file);
    logbook_store::run_files::write_as_agent(&path, step.body.as_bytes())?;
    run::register_output(
        p,
        started.session_id.as_str(),
        step.file,
        step.kind.clone(),
        step.description,
    )?;
    let mut context = Map::new();
    context.insert(
        "run_id".into(),
        Value::String(started.session_id.to_string()),
    );
    workflow::invoke(
        p,
        target,
        Invoke {
            agent: agent_type(i),
            prompt: format!("{} for the laptop refresh", step.description),
            context,
            ..Invoke::default()
        },
    )?;
    if step.status != RunStatus::Running {
        finish_step(p, sid, target, i, step, &started)?;
    }
    ws::add_artifact(
        p,
        sid,
        &format!("docs/agent-outputs/{}/{}", started.session_id, step.file),
        Some(step.agent),
    )?;
    Ok(started.session_id.to_string())
}

/// A finished step: its run's status, the invocation's completion, and
/// the tokens its agent kept out of the main context.
fn finish_step(
    p: &Logbook,
    sid: Option<&str>,
    target: &Target,
    i: usize,
    step: &Step,
    started: &run::Started,
) -> Result<()> {
    let failed = step.status == RunStatus::Failed;
    run::finish(p, started.session_id.as_str(), step.status.clone())?;
    workflow::complete(
        p,
        target,
        Complete {
            agent: agent_type(i),
            summary: format!("{} written to {}", step.file, started.folder.display()),
            artifacts: vec![step.file.into()],
            recommendations: vec![],
            blockers: if failed {
                vec!["Disk encryption must be on before sign-off".into()]
            } else {
                vec![]
            },
            handoff_to: None,
            reason: String::new(),
            failed: false,
        },
    )?;
    let tokens = 20_000 + 7_000 * i as u64;
    // The run is already in agents_spawned (linked at start); its
    // tokens are what isolation saved.
    let outcome = if failed {
        AgentOutcome::Failed
    } else {
        AgentOutcome::Completed
    };
    ws::finish_agent(p, sid, started.session_id.as_str(), tokens, None, outcome)?;
    Ok(())
}

/// Enough review rounds to push the history past ten entries, so the
/// demo shows a compaction and `workflow show --full` has work to do.
fn review_rounds(p: &Logbook, target: &Target) -> Result<()> {
    for round in 1..=4 {
        for agent in [AgentType::Critic, AgentType::Qa] {
            workflow::invoke(
                p,
                target,
                Invoke {
                    agent: agent.clone(),
                    prompt: format!("Review round {round}"),
                    ..Invoke::default()
                },
            )?;
            workflow::complete(
                p,
                target,
                Complete {
                    agent,
                    summary: format!("Round {round}: no new issues"),
                    artifacts: vec![],
                    recommendations: vec![],
                    blockers: vec![],
                    handoff_to: None,
                    reason: String::new(),
                    failed: false,
                },
            )?;
        }
    }
    Ok(())
}

/// The workflow's one decision and one verdict.
fn decide(p: &Logbook, target: &Target) -> Result<()> {
    workflow::decide(
        p,
        target,
        NewDecision {
            kind: DecisionType::Technical,
            description: "Standardise on 14-inch business laptops".into(),
            rationale: "Weight and battery life matter most to travelling sales staff".into(),
            decided_by: AgentType::Architect,
            approved_by: vec![AgentType::Critic],
            rejected_by: vec![],
        },
    )?;
    workflow::verdict(
        p,
        target,
        NewVerdict {
            agent: AgentType::Security,
            decision: VerdictDecision::Conditional,
            confidence: 0.8,
            reasoning: "Acceptable once disk encryption is enforced".into(),
            conditions: vec!["Disk encryption on by default".into()],
            blockers: vec![],
        },
    )?;
    Ok(())
}

/// A main transcript and its subagent's, linked both ways; returns their ids.
fn save_transcripts(p: &Logbook, root: &Path) -> Result<Vec<String>> {
    let main_id = uuid::Uuid::new_v4().to_string();
    let sub_id = uuid::Uuid::new_v4().to_string();
    let workdir = root.to_string_lossy().into_owned();
    let mut main = Transcript::new(&main_id, &workdir);
    main.messages = vec![
        message(
            "user",
            json!([{"type": "text", "content": "I need to purchase 10 laptops for the sales team"}]),
            None,
        ),
        message(
            "assistant",
            json!([
                {"type": "text", "content": "I'll gather the requirements first."},
                {"type": "subagent", "subagentId": sub_id, "subagentName": "analyst", "status": "completed"}
            ]),
            Some(json!({"prompt_tokens": 1830, "completion_tokens": 412, "total_tokens": 2242})),
        ),
    ];
    main.metadata.latest_total_tokens = 2242;
    transcript::save(p, &mut main, Kind::Main)?;
    let mut sub = Transcript::new(&sub_id, &workdir);
    sub.messages = vec![
        message(
            "user",
            json!([{"type": "text", "content": "Analyse the laptop request: models, budget, delivery."}]),
            None,
        ),
        message(
            "assistant",
            json!([{"type": "text", "content": "Recommend 14-inch business laptops, 16 GB RAM."}]),
            Some(json!({"prompt_tokens": 950, "completion_tokens": 210, "total_tokens": 1160})),
        ),
    ];
    sub.metadata.latest_total_tokens = 1160;
    sub.metadata.parent_session_id = Some(main_id.clone());
    transcript::save(p, &mut sub, Kind::Subagent)?;
    Ok(vec![main_id, sub_id])
}

fn agent_type(step: usize) -> AgentType {
    [
        AgentType::Analyst,
        AgentType::Planner,
        AgentType::Implementer,
        AgentType::Security,
    ][step % 4]
        .clone()
}

fn message(role: &str, blocks: Value, usage: Option<Value>) -> Message {
    Message {
        role: role.into(),
        blocks: match blocks {
            Value::Array(b) => b,
            other => vec![other],
        },
        usage,
        metadata: None,
        extra: Map::new(),
    }
}

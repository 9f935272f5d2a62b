//! Lineage: runs link to earlier runs through `related_sessions`. Walking
//! that graph both ways (ancestors and descendants) must survive what other
//! tools may write: cycles and ids with no run are reported, never looped on.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use jiff::tz::TimeZone;
use serde::Serialize;

use crate::naming;
use crate::run::Run;

/// The lineage graph around one run.
#[derive(Debug, Clone, Serialize)]
pub struct Lineage {
    /// The run asked about.
    pub root: String,
    /// Every run reached, the root first; dangling ids have `missing: true`.
    pub nodes: Vec<LineageNode>,
    /// `from` is the earlier run, `to` the run naming it in `related_sessions`.
    pub edges: Vec<LineageEdge>,
    /// Runs the root builds on, transitively, nearest first.
    pub ancestors: Vec<String>,
    /// Runs building on the root, transitively, nearest first.
    pub descendants: Vec<String>,
    /// Each cycle found, as the ids around it (first repeated at the end).
    pub cycles: Vec<Vec<String>>,
    /// Ids named in `related_sessions` that have no run.
    pub dangling: Vec<String>,
}

/// One run in a lineage graph.
#[derive(Debug, Clone, Serialize)]
pub struct LineageNode {
    /// The run id.
    pub session_id: String,
    /// Folder label, or the bare id when missing.
    pub label: String,
    /// `execution.status`, empty when missing.
    pub status: String,
    /// True for an id with no (readable) run.
    pub missing: bool,
    /// When a missing run was deleted (`logbook delete` left a tombstone
    /// in the archive); `None` for a run there is, or one never recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
}

/// A `related_sessions` link, earlier run → later run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct LineageEdge {
    /// The earlier run (named in `related_sessions`).
    pub from: String,
    /// The run that names it.
    pub to: String,
}

/// Builds the lineage of run `id` from `runs`, which must hold at least the
/// root's ancestors and descendants (the index loads just those).
pub fn lineage_of(id: &str, runs: HashMap<String, Run>, tz: &TimeZone) -> Lineage {
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut ids: Vec<&String> = runs.keys().collect();
    ids.sort();
    for rid in ids {
        for parent in runs[rid].manifest.related() {
            children
                .entry(parent.as_str())
                .or_default()
                .push(rid.as_str());
        }
    }
    let parents_of = |n: &str| -> Vec<String> {
        runs.get(n)
            .map(|r| r.manifest.related().to_vec())
            .unwrap_or_default()
    };
    let children_of = |n: &str| -> Vec<String> {
        children
            .get(n)
            .map(|c| c.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default()
    };

    let mut walk = Walk::default();
    walk.run(id, &parents_of, true);
    let ancestors = std::mem::take(&mut walk.order);
    walk.seen.clear();
    walk.run(id, &children_of, false);
    let descendants = std::mem::take(&mut walk.order);

    let mut node_ids = vec![id.to_string()];
    for n in ancestors.iter().chain(&descendants) {
        if !node_ids.contains(n) {
            node_ids.push(n.clone());
        }
    }
    let nodes: Vec<LineageNode> = node_ids
        .iter()
        .map(|n| match runs.get(n) {
            Some(r) => LineageNode {
                session_id: n.clone(),
                label: naming::folder_label(&r.manifest, tz),
                status: r.manifest.execution.status.to_string(),
                missing: false,
                deleted_at: None,
            },
            None => LineageNode {
                session_id: n.clone(),
                label: n.clone(),
                status: String::new(),
                missing: true,
                deleted_at: None,
            },
        })
        .collect();
    let dangling = nodes
        .iter()
        .filter(|n| n.missing)
        .map(|n| n.session_id.clone())
        .collect();
    Lineage {
        root: id.to_string(),
        nodes,
        edges: walk.edges.into_iter().collect(),
        ancestors: ancestors.into_iter().filter(|a| a != id).collect(),
        descendants: descendants.into_iter().filter(|d| d != id).collect(),
        cycles: walk.cycles,
        dangling,
    }
}

#[derive(Default)]
struct Walk {
    seen: BTreeSet<String>,
    order: Vec<String>,
    edges: BTreeSet<LineageEdge>,
    cycles: Vec<Vec<String>>,
}

impl Walk {
    /// Breadth-first, so `order` is nearest first; a neighbour already on a
    /// path back to the start closes a cycle, found by searching that path.
    fn run(&mut self, start: &str, next: &dyn Fn(&str) -> Vec<String>, upward: bool) {
        let mut queue = std::collections::VecDeque::from([start.to_string()]);
        let mut via: HashMap<String, String> = HashMap::new();
        self.seen.insert(start.to_string());
        while let Some(n) = queue.pop_front() {
            for m in next(&n) {
                let edge = if upward {
                    LineageEdge {
                        from: m.clone(),
                        to: n.clone(),
                    }
                } else {
                    LineageEdge {
                        from: n.clone(),
                        to: m.clone(),
                    }
                };
                self.edges.insert(edge);
                if self.seen.contains(&m) {
                    // m reached again: a cycle if m is n itself or one of n's
                    // predecessors on the path from the start.
                    let mut path = vec![n.clone()];
                    let mut cur = n.clone();
                    while cur != m {
                        match via.get(&cur) {
                            Some(prev) => {
                                cur = prev.clone();
                                path.push(cur.clone());
                            }
                            None => break,
                        }
                    }
                    if cur == m {
                        path.reverse();
                        path.push(m.clone());
                        // Cycles read in edge direction, earlier → later.
                        if upward {
                            path.reverse();
                        }
                        if !self.cycles.iter().any(|c| same_cycle(c, &path)) {
                            self.cycles.push(path);
                        }
                    }
                    continue;
                }
                self.seen.insert(m.clone());
                via.insert(m.clone(), n.clone());
                self.order.push(m.clone());
                queue.push_back(m);
            }
        }
    }
}

fn same_cycle(a: &[String], b: &[String]) -> bool {
    let set = |c: &[String]| c.iter().cloned().collect::<BTreeSet<_>>();
    set(a) == set(b)
}

impl Lineage {
    fn node(&self, id: &str) -> Option<&LineageNode> {
        self.nodes.iter().find(|n| n.session_id == id)
    }

    fn describe(&self, id: &str) -> String {
        match self.node(id) {
            Some(LineageNode {
                missing: true,
                deleted_at: Some(at),
                ..
            }) => format!("{id} (deleted {at}; its tombstone is in the archive)"),
            Some(n) if n.missing => format!("{id} (missing: no run with this id)"),
            Some(n) => format!("{} [{}] {}", n.label, n.status, n.session_id),
            None => id.to_string(),
        }
    }

    /// A text tree: the root, its ancestors, its descendants, then any
    /// cycles and dangling ids.
    pub fn to_tree(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.describe(&self.root));
        let up = |n: &str| -> Vec<String> {
            self.edges
                .iter()
                .filter(|e| e.to == n)
                .map(|e| e.from.clone())
                .collect()
        };
        let down = |n: &str| -> Vec<String> {
            self.edges
                .iter()
                .filter(|e| e.from == n)
                .map(|e| e.to.clone())
                .collect()
        };
        for (title, next) in [
            ("builds on", &up as &dyn Fn(&str) -> Vec<String>),
            ("built on by", &down),
        ] {
            let first = next(&self.root);
            if first.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{title}:");
            let mut path = vec![self.root.clone()];
            self.branch(&mut out, &first, next, "", &mut path);
        }
        for c in &self.cycles {
            let _ = writeln!(out, "cycle: {}", c.join(" -> "));
        }
        for d in &self.dangling {
            let _ = writeln!(
                out,
                "dangling: {d} is named in related_sessions but has no run"
            );
        }
        out
    }

    fn branch(
        &self,
        out: &mut String,
        items: &[String],
        next: &dyn Fn(&str) -> Vec<String>,
        indent: &str,
        path: &mut Vec<String>,
    ) {
        for (i, item) in items.iter().enumerate() {
            let last = i + 1 == items.len();
            let (elbow, cont) = if last {
                ("└── ", "    ")
            } else {
                ("├── ", "│   ")
            };
            if path.contains(item) {
                let _ = writeln!(out, "{indent}{elbow}{item} (cycle: already on this path)");
                continue;
            }
            let _ = writeln!(out, "{indent}{elbow}{}", self.describe(item));
            path.push(item.clone());
            let more = next(item);
            self.branch(out, &more, next, &format!("{indent}{cont}"), path);
            path.pop();
        }
    }

    /// Graphviz `dot`, earlier runs pointing at the runs that build on them.
    pub fn to_dot(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut out = String::from("digraph lineage {\n  rankdir=LR;\n  node [shape=box];\n");
        for n in &self.nodes {
            let mut attrs = format!("label={}", q(&format!("{}\n{}", n.label, n.session_id)));
            if n.missing {
                attrs.push_str(", style=dashed");
            }
            if n.session_id == self.root {
                attrs.push_str(", penwidth=2");
            }
            let _ = writeln!(out, "  {} [{attrs}];", q(&n.session_id));
        }
        for e in &self.edges {
            let _ = writeln!(out, "  {} -> {};", q(&e.from), q(&e.to));
        }
        out.push_str("}\n");
        out
    }

    /// A Mermaid flowchart of the same graph.
    pub fn to_mermaid(&self) -> String {
        let key = |id: &str| {
            let i = self
                .nodes
                .iter()
                .position(|n| n.session_id == id)
                .unwrap_or(0);
            format!("n{i}")
        };
        let mut out = String::from("graph LR\n");
        for n in &self.nodes {
            let text = format!("{}<br/>{}", n.label, n.session_id).replace('"', "#quot;");
            let suffix = if n.missing { ":::missing" } else { "" };
            let _ = writeln!(out, "  {}[\"{text}\"]{suffix}", key(&n.session_id));
        }
        for e in &self.edges {
            let _ = writeln!(out, "  {} --> {}", key(&e.from), key(&e.to));
        }
        if self.nodes.iter().any(|n| n.missing) {
            out.push_str("  classDef missing stroke-dasharray: 5 5\n");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::ids::RunId;

    const A: &str = "aaaaaaaa-0000-4000-8000-000000000001";
    const B: &str = "bbbbbbbb-0000-4000-8000-000000000002";
    const C: &str = "cccccccc-0000-4000-8000-000000000003";
    const D: &str = "dddddddd-0000-4000-8000-000000000004";
    /// Named in `related_sessions`, never given a run.
    const X: &str = "eeeeeeee-0000-4000-8000-00000000000e";

    /// A run of `agent` whose workflow is `workflow`, still running (so its
    /// label does not depend on a date), building on `related`.
    fn run(id: &str, agent: &str, workflow: &str, related: &[&str]) -> (String, Run) {
        let manifest = serde_json::from_value(json!({
            "session_id": id,
            "agent": {"name": agent},
            "workflow": {"name": workflow},
            "execution": {"started_at": "2025-10-06T17:00:00Z", "status": "running"},
            "related_sessions": related,
        }))
        .unwrap();
        let run = Run {
            id: RunId::parse(id).unwrap(),
            folder: PathBuf::from("/runs").join(id),
            manifest,
        };
        (id.to_string(), run)
    }

    fn runs(list: Vec<(String, Run)>) -> HashMap<String, Run> {
        list.into_iter().collect()
    }

    /// a → b → c: c builds on b, b on a.
    fn chain() -> HashMap<String, Run> {
        runs(vec![
            run(A, "alex", "intake", &[]),
            run(B, "blake", "design", &[A]),
            run(C, "casey", "build", &[B]),
        ])
    }

    fn edge(from: &str, to: &str) -> LineageEdge {
        LineageEdge {
            from: from.into(),
            to: to.into(),
        }
    }

    fn node_ids(l: &Lineage) -> Vec<&str> {
        l.nodes.iter().map(|n| n.session_id.as_str()).collect()
    }

    #[test]
    fn chain_from_the_middle() {
        let l = lineage_of(B, chain(), &TimeZone::UTC);
        assert_eq!(l.root, B);
        assert_eq!(l.ancestors, [A]);
        assert_eq!(l.descendants, [C]);
        assert_eq!(l.edges, [edge(A, B), edge(B, C)]);
        assert_eq!(node_ids(&l), [B, A, C]);
        assert!(l.nodes.iter().all(|n| !n.missing));
        assert_eq!(l.nodes[0].label, "blake - design (In Progress)");
        assert_eq!(l.nodes[0].status, "running");
        assert!(l.cycles.is_empty());
        assert!(l.dangling.is_empty());
    }

    #[test]
    fn chain_from_either_end_is_nearest_first() {
        let from_c = lineage_of(C, chain(), &TimeZone::UTC);
        assert_eq!(from_c.ancestors, [B, A]);
        assert!(from_c.descendants.is_empty());
        assert_eq!(from_c.edges, [edge(A, B), edge(B, C)]);

        let from_a = lineage_of(A, chain(), &TimeZone::UTC);
        assert!(from_a.ancestors.is_empty());
        assert_eq!(from_a.descendants, [B, C]);
        assert_eq!(node_ids(&from_a), [A, B, C]);
    }

    #[test]
    fn diamond_visits_the_shared_run_once_and_is_no_cycle() {
        // b and c both build on a; d builds on both.
        let diamond = || {
            runs(vec![
                run(A, "alex", "intake", &[]),
                run(B, "blake", "design", &[A]),
                run(C, "casey", "design", &[A]),
                run(D, "drew", "build", &[B, C]),
            ])
        };
        let down = lineage_of(A, diamond(), &TimeZone::UTC);
        assert_eq!(down.descendants, [B, C, D]);
        assert_eq!(down.edges, [edge(A, B), edge(A, C), edge(B, D), edge(C, D)]);
        assert!(down.cycles.is_empty());

        let up = lineage_of(D, diamond(), &TimeZone::UTC);
        assert_eq!(up.ancestors, [B, C, A]);
        assert!(up.descendants.is_empty());
        assert_eq!(up.edges, down.edges);
        assert_eq!(node_ids(&up), [D, B, C, A]);
        assert!(up.cycles.is_empty());
    }

    #[test]
    fn cycle_is_reported_once_and_walked_once() {
        // a builds on c, b on a, c on b: a → b → c → a.
        let l = lineage_of(
            A,
            runs(vec![
                run(A, "alex", "intake", &[C]),
                run(B, "blake", "design", &[A]),
                run(C, "casey", "build", &[B]),
            ]),
            &TimeZone::UTC,
        );
        assert_eq!(l.cycles, [vec![A, B, C, A]]);
        assert_eq!(l.ancestors, [C, B]);
        assert_eq!(l.descendants, [B, C]);
        assert_eq!(l.edges, [edge(A, B), edge(B, C), edge(C, A)]);
        assert_eq!(node_ids(&l), [A, C, B]);
        assert!(l.dangling.is_empty());
    }

    #[test]
    fn a_run_naming_itself_is_a_cycle_of_one() {
        let l = lineage_of(
            A,
            runs(vec![run(A, "alex", "intake", &[A])]),
            &TimeZone::UTC,
        );
        assert_eq!(l.cycles, [vec![A, A]]);
        assert_eq!(l.edges, [edge(A, A)]);
        assert!(l.ancestors.is_empty());
        assert!(l.descendants.is_empty());
        assert_eq!(node_ids(&l), [A]);
    }

    #[test]
    fn dangling_id_is_a_missing_node() {
        let l = lineage_of(
            B,
            runs(vec![
                run(B, "blake", "design", &[X]),
                run(C, "casey", "build", &[B]),
            ]),
            &TimeZone::UTC,
        );
        assert_eq!(l.dangling, [X]);
        assert_eq!(l.ancestors, [X]);
        assert_eq!(l.descendants, [C]);
        assert_eq!(l.edges, [edge(B, C), edge(X, B)]);
        let missing = &l.nodes[1];
        assert_eq!(missing.session_id, X);
        assert!(missing.missing);
        assert_eq!(missing.label, X);
        assert_eq!(missing.status, "");
        assert_eq!(
            l.nodes.iter().filter(|n| n.missing).count(),
            1,
            "only the dangling id is missing"
        );
    }

    #[test]
    fn finished_runs_are_labelled_with_their_completion_time() {
        let mut all = chain();
        let a = all.get_mut(A).unwrap();
        a.manifest.execution.status = crate::run::RunStatus::Completed;
        a.manifest.execution.completed_at = Some("2025-10-06T17:09:30Z".into());
        let l = lineage_of(B, all, &TimeZone::UTC);
        let node = l.nodes.iter().find(|n| n.session_id == A).unwrap();
        assert_eq!(node.label, "alex - intake (Oct 6, 2025, 5:09 PM)");
        assert_eq!(node.status, "completed");
    }

    #[test]
    fn tree_of_a_chain() {
        let tree = lineage_of(B, chain(), &TimeZone::UTC).to_tree();
        let want = format!(
            "blake - design (In Progress) [running] {B}\n\
             builds on:\n\
             └── alex - intake (In Progress) [running] {A}\n\
             built on by:\n\
             └── casey - build (In Progress) [running] {C}\n"
        );
        assert_eq!(tree, want);
    }

    #[test]
    fn tree_branches_and_nests() {
        // b and c build on a; d builds on b.
        let l = lineage_of(
            A,
            runs(vec![
                run(A, "alex", "intake", &[]),
                run(B, "blake", "design", &[A]),
                run(C, "casey", "design", &[A]),
                run(D, "drew", "build", &[B]),
            ]),
            &TimeZone::UTC,
        );
        let want = format!(
            "alex - intake (In Progress) [running] {A}\n\
             built on by:\n\
             ├── blake - design (In Progress) [running] {B}\n\
             │   └── drew - build (In Progress) [running] {D}\n\
             └── casey - design (In Progress) [running] {C}\n"
        );
        assert_eq!(l.to_tree(), want);
    }

    #[test]
    fn tree_stops_at_cycles_and_names_dangling_ids() {
        let cyclic = lineage_of(
            A,
            runs(vec![
                run(A, "alex", "intake", &[C]),
                run(B, "blake", "design", &[A]),
                run(C, "casey", "build", &[B]),
            ]),
            &TimeZone::UTC,
        );
        let want = format!(
            "alex - intake (In Progress) [running] {A}\n\
             builds on:\n\
             └── casey - build (In Progress) [running] {C}\n    \
                 └── blake - design (In Progress) [running] {B}\n        \
                     └── {A} (cycle: already on this path)\n\
             built on by:\n\
             └── blake - design (In Progress) [running] {B}\n    \
                 └── casey - build (In Progress) [running] {C}\n        \
                     └── {A} (cycle: already on this path)\n\
             cycle: {A} -> {B} -> {C} -> {A}\n"
        );
        assert_eq!(cyclic.to_tree(), want);

        let dangling = lineage_of(
            B,
            runs(vec![run(B, "blake", "design", &[X])]),
            &TimeZone::UTC,
        );
        let want = format!(
            "blake - design (In Progress) [running] {B}\n\
             builds on:\n\
             └── {X} (missing: no run with this id)\n\
             dangling: {X} is named in related_sessions but has no run\n"
        );
        assert_eq!(dangling.to_tree(), want);
    }

    #[test]
    fn dot_of_a_small_graph() {
        let dot = lineage_of(
            B,
            runs(vec![
                run(A, "alex", "intake", &[]),
                run(B, "blake", "design", &[A, X]),
            ]),
            &TimeZone::UTC,
        )
        .to_dot();
        let want = format!(
            "digraph lineage {{\n  \
               rankdir=LR;\n  \
               node [shape=box];\n  \
               \"{B}\" [label=\"blake - design (In Progress)\n{B}\", penwidth=2];\n  \
               \"{A}\" [label=\"alex - intake (In Progress)\n{A}\"];\n  \
               \"{X}\" [label=\"{X}\n{X}\", style=dashed];\n  \
               \"{A}\" -> \"{B}\";\n  \
               \"{X}\" -> \"{B}\";\n\
             }}\n"
        );
        assert_eq!(dot, want);
    }

    #[test]
    fn dot_and_mermaid_escape_quotes() {
        let mut all = runs(vec![run(A, "alex", "intake", &[])]);
        all.get_mut(A).unwrap().manifest.agent.title = Some(r#"Alex "the" \ Facilitator"#.into());
        let l = lineage_of(A, all, &TimeZone::UTC);
        assert!(
            l.to_dot().contains(&format!(
                "  \"{A}\" [label=\"Alex \\\"the\\\" \\\\ Facilitator - intake (In Progress)\n{A}\", penwidth=2];\n"
            )),
            "{}",
            l.to_dot()
        );
        assert_eq!(
            l.to_mermaid(),
            format!(
                "graph LR\n  n0[\"Alex #quot;the#quot; \\ Facilitator - intake (In Progress)<br/>{A}\"]\n"
            )
        );
    }

    #[test]
    fn mermaid_of_a_chain() {
        let m = lineage_of(B, chain(), &TimeZone::UTC).to_mermaid();
        let want = format!(
            "graph LR\n  \
               n0[\"blake - design (In Progress)<br/>{B}\"]\n  \
               n1[\"alex - intake (In Progress)<br/>{A}\"]\n  \
               n2[\"casey - build (In Progress)<br/>{C}\"]\n  \
               n1 --> n0\n  \
               n0 --> n2\n"
        );
        assert_eq!(m, want);
        assert!(!m.contains("classDef"));
    }

    #[test]
    fn mermaid_marks_missing_nodes() {
        let m = lineage_of(
            B,
            runs(vec![run(B, "blake", "design", &[X])]),
            &TimeZone::UTC,
        )
        .to_mermaid();
        let want = format!(
            "graph LR\n  \
               n0[\"blake - design (In Progress)<br/>{B}\"]\n  \
               n1[\"{X}<br/>{X}\"]:::missing\n  \
               n1 --> n0\n  \
               classDef missing stroke-dasharray: 5 5\n"
        );
        assert_eq!(m, want);
    }
}

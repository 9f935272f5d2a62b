//! Lineage: runs link to earlier runs through `related_sessions`. Walking
//! that graph both ways (ancestors and descendants) must survive what other
//! tools may write: cycles and ids with no run are reported, never looped on.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use jiff::tz::TimeZone;
use serde::Serialize;

use crate::model::naming;
use crate::model::run::Run;

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
            },
            None => LineageNode {
                session_id: n.clone(),
                label: n.clone(),
                status: String::new(),
                missing: true,
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

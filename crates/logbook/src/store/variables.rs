//! Workflow-engine variables (seed 000, "Configuration Requirements" and
//! "Path Resolution"): what an agent needs to know to write into its run
//! folder, and the resolution of a BMAD-style `workflow.yaml`'s path values.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::ids::RunId;
use crate::model::run::MANIFEST_FILE;
use crate::model::template::{self, Placeholder};
use crate::model::text;
use crate::store::{self, Project};

/// Keys of a workflow.yaml that describe it rather than name a path.
const DESCRIPTIVE_KEYS: [&str; 6] = [
    "name",
    "description",
    "author",
    "version",
    "inputs",
    "session_id",
];

/// A workflow.yaml as far as a run needs it.
#[derive(Debug, Clone)]
pub struct WorkflowFile {
    /// The file, absolute.
    pub path: PathBuf,
    /// `name:`, the manifest's `workflow.name`.
    pub name: Option<String>,
    /// `description:`, the manifest's `workflow.description`.
    pub description: Option<String>,
    /// `inputs:`, copied into the manifest's `inputs`.
    pub inputs: Map<String, Value>,
    /// Every other top-level string value, in file order, unresolved.
    pub values: Vec<(String, String)>,
    /// `{output_folder}` per the bundle config (else Logbook's).
    pub output_folder: PathBuf,
    /// `{config_source}:agent_outputs_folder` per the bundle config (else Logbook's).
    pub agent_outputs_folder: PathBuf,
    /// The bundle config's other string keys, for `{config_source}:KEY`.
    pub config_values: Map<String, Value>,
    /// The bundle config's `user_name`, the run's default user.
    pub user: Option<String>,
    /// Things worth telling the user (e.g. the bundle config is missing).
    pub warnings: Vec<String>,
}

/// The variables every run has: `session_id`, `session_folder`,
/// `manifest_file` and `default_output_file`, all absolute.
pub fn base(id: &RunId, folder: &Path) -> Map<String, Value> {
    let s = |p: PathBuf| Value::String(p.to_string_lossy().into_owned());
    let mut m = Map::new();
    m.insert("session_id".into(), Value::String(id.to_string()));
    m.insert("session_folder".into(), s(folder.to_path_buf()));
    m.insert("manifest_file".into(), s(folder.join(MANIFEST_FILE)));
    m.insert("default_output_file".into(), s(folder.join("output.md")));
    m
}

fn config_error(path: &Path, reason: String) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        reason,
    }
}

/// Reads a workflow.yaml and the bundle config its `config_source` names
/// (falling back to Logbook's config when there is none).
pub fn read_workflow_file(p: &Project, path: &Path) -> Result<WorkflowFile> {
    let path = store::absolute(p.root(), path);
    let Some(text) = store::read_optional(&path)? else {
        return Err(Error::not_found(
            "workflow file",
            path.display().to_string(),
            "",
        ));
    };
    let doc: Value = text::parse_yaml(&path, "workflow.yaml", &text)?;
    let Value::Object(doc) = doc else {
        return Err(config_error(
            &path,
            "expected a mapping of keys at the top level".into(),
        ));
    };
    let text_of = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let inputs = match doc.get("inputs") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return Err(config_error(&path, "key inputs: expected a mapping".into())),
    };
    let values = doc
        .iter()
        .filter(|(k, _)| !DESCRIPTIVE_KEYS.contains(&k.as_str()))
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect();
    let mut wf = WorkflowFile {
        name: text_of("name").filter(|s| !s.trim().is_empty()),
        description: text_of("description"),
        inputs,
        values,
        output_folder: p.config.output_folder.clone(),
        agent_outputs_folder: p.config.agent_outputs_folder.clone(),
        config_values: Map::new(),
        user: None,
        warnings: vec![],
        path,
    };
    if let Some(source) = text_of("config_source").filter(|s| !s.trim().is_empty()) {
        read_bundle_config(p, &mut wf, &source)?;
    }
    Ok(wf)
}

fn read_bundle_config(p: &Project, wf: &mut WorkflowFile, source: &str) -> Result<()> {
    let root = p.root().to_string_lossy().into_owned();
    let source = render_known(&wf.path, "config_source", source, &[("project-root", &root)])?;
    let source_path = store::absolute(p.root(), Path::new(&source));
    let Some(text) = store::read_optional(&source_path)? else {
        wf.warnings.push(format!(
            "bundle config {} not found; using logbook.yaml's output folders",
            source_path.display()
        ));
        return Ok(());
    };
    let doc: Value = text::parse_yaml(&source_path, "bundle config.yaml", &text)?;
    let Value::Object(doc) = doc else {
        return Err(config_error(
            &source_path,
            "expected a mapping of keys at the top level".into(),
        ));
    };
    let get = |k: &str| {
        doc.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    if let Some(out) = get("output_folder") {
        let resolved = render_known(&source_path, "output_folder", out, &[("project-root", &root)])?;
        wf.output_folder = store::absolute(p.root(), Path::new(&resolved));
    }
    if let Some(aof) = get("agent_outputs_folder") {
        let output_folder = wf.output_folder.to_string_lossy().into_owned();
        let resolved = render_known(
            &source_path,
            "agent_outputs_folder",
            aof,
            &[("project-root", &root), ("output_folder", &output_folder)],
        )?;
        wf.agent_outputs_folder = store::absolute(p.root(), Path::new(&resolved));
    }
    wf.user = get("user_name").or_else(|| get("user")).map(str::to_string);
    wf.config_values = doc;
    Ok(())
}

/// Substitutes the `{name}` placeholders `known` lists in the value of
/// `key`, refusing any other by name.
fn render_known(path: &Path, key: &str, value: &str, known: &[(&str, &str)]) -> Result<String> {
    template::render(value, |placeholder| {
        let found = match placeholder {
            Placeholder::Single(name) => known.iter().find(|(k, _)| *k == name),
            _ => None,
        };
        match found {
            Some((_, v)) => Ok((*v).to_string()),
            None => {
                let allowed: Vec<String> = known.iter().map(|(k, _)| format!("{{{k}}}")).collect();
                Err(format!(
                    "unknown placeholder {placeholder}; allowed: {}",
                    allowed.join(", ")
                ))
            }
        }
    })
    .map_err(|reason| config_error(path, format!("key {key}: {reason}")))
}

/// Resolves every path value of `wf` for run `id` in `folder` and adds them
/// to `vars` (the base variables stay as they are: they are the truth).
pub fn resolve_into(
    p: &Project,
    wf: &WorkflowFile,
    id: &RunId,
    folder: &Path,
    vars: &mut Map<String, Value>,
) -> Result<()> {
    let r = Resolver { p, wf, id, folder };
    for (key, template) in &wf.values {
        let value = r.resolve(key, template, &mut vec![key.clone()])?;
        match key.as_str() {
            "session_folder" | "manifest_file" => {
                let ours = vars.get(key).and_then(Value::as_str).unwrap_or_default();
                if Path::new(&value) != Path::new(ours) {
                    return Err(config_error(
                        &wf.path,
                        format!(
                            "key {key} resolves to {value}, but Logbook keeps this run at {ours}; make agent_outputs_folder in the bundle config and in logbook.yaml agree"
                        ),
                    ));
                }
            }
            _ => {
                vars.insert(key.clone(), Value::String(value));
            }
        }
    }
    Ok(())
}

struct Resolver<'a> {
    p: &'a Project,
    wf: &'a WorkflowFile,
    id: &'a RunId,
    folder: &'a Path,
}

impl Resolver<'_> {
    /// Substitutes every placeholder of `template` (the value of `key`);
    /// `stack` holds the keys being resolved, so a reference cycle is an
    /// error rather than a loop.
    fn resolve(&self, key: &str, template: &str, stack: &mut Vec<String>) -> Result<String> {
        // The lookup's own errors are already complete; they travel through
        // the templater's sentence-only channel in this slot.
        let mut failure: Option<Error> = None;
        let rendered = template::render(template, |placeholder| {
            let value = match placeholder {
                Placeholder::Double("session_id") | Placeholder::Single("session_id") => {
                    Ok(self.id.to_string())
                }
                Placeholder::Double(other) => Err(self.unknown(key, &format!("{{{{{other}}}}}"))),
                Placeholder::Single("session_folder") => {
                    Ok(self.folder.to_string_lossy().into_owned())
                }
                Placeholder::Single("project-root") => {
                    Ok(self.p.root().to_string_lossy().into_owned())
                }
                Placeholder::Single("output_folder") => {
                    Ok(self.wf.output_folder.to_string_lossy().into_owned())
                }
                Placeholder::Single("agent_outputs_folder") => {
                    Ok(self.wf.agent_outputs_folder.to_string_lossy().into_owned())
                }
                Placeholder::ConfigSource(cfg_key) => self.config_value(key, cfg_key),
                Placeholder::Single(other) => self.workflow_value(key, other, stack),
            };
            value.map_err(|e| {
                let sentence = e.to_string();
                failure = Some(e);
                sentence
            })
        });
        match (rendered, failure) {
            (Ok(v), _) => Ok(v),
            (Err(_), Some(e)) => Err(e),
            (Err(reason), None) => Err(self.error(key, reason)),
        }
    }

    fn config_value(&self, key: &str, cfg_key: &str) -> Result<String> {
        match cfg_key {
            "agent_outputs_folder" => {
                Ok(self.wf.agent_outputs_folder.to_string_lossy().into_owned())
            }
            "output_folder" => Ok(self.wf.output_folder.to_string_lossy().into_owned()),
            other => match self.wf.config_values.get(other).and_then(Value::as_str) {
                Some(v) => {
                    let root = self.p.root().to_string_lossy();
                    render_known(&self.wf.path, key, v, &[("project-root", &root)])
                }
                None => Err(self.unknown(key, &format!("{{config_source}}:{other}"))),
            },
        }
    }

    /// `{name}` naming another key of the same workflow.yaml.
    fn workflow_value(&self, key: &str, name: &str, stack: &mut Vec<String>) -> Result<String> {
        let Some((_, template)) = self.wf.values.iter().find(|(k, _)| k == name) else {
            return Err(self.unknown(key, &format!("{{{name}}}")));
        };
        if stack.iter().any(|k| k == name) {
            return Err(self.error(
                key,
                format!(
                    "{{{name}}} refers back to itself ({} → {name})",
                    stack.join(" → ")
                ),
            ));
        }
        stack.push(name.to_string());
        let resolved = self.resolve(name, template, stack);
        stack.pop();
        resolved
    }

    fn unknown(&self, key: &str, placeholder: &str) -> Error {
        self.error(
            key,
            format!(
                "unknown placeholder {placeholder}; known: {{{{session_id}}}}, {{session_id}}, {{session_folder}}, {{project-root}}, {{output_folder}}, {{config_source}}:agent_outputs_folder and the file's own keys"
            ),
        )
    }

    fn error(&self, key: &str, reason: String) -> Error {
        config_error(&self.wf.path, format!("key {key}: {reason}"))
    }
}

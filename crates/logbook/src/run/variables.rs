//! Workflow-engine variables (seed 000, "Configuration Requirements" and
//! "Path Resolution"): what an agent needs to know to write into its run
//! folder, and the resolution of a BMAD-style `workflow.yaml`'s path values.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::project::Project;
use crate::store;

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
pub(super) fn base(id: &str, folder: &Path) -> Map<String, Value> {
    let s = |p: PathBuf| Value::String(p.to_string_lossy().into_owned());
    let mut m = Map::new();
    m.insert("session_id".into(), Value::String(id.to_string()));
    m.insert("session_folder".into(), s(folder.to_path_buf()));
    m.insert("manifest_file".into(), s(folder.join(super::MANIFEST_FILE)));
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
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        p.root().join(path)
    };
    let Some(text) = store::read_optional(&path)? else {
        return Err(Error::not_found(
            "workflow file",
            path.display().to_string(),
            "",
        ));
    };
    let doc: Value = store::parse_yaml(&path, "workflow.yaml", &text)?;
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
    let source_path = absolute(p.root(), &source.replace("{project-root}", &root));
    if source_path.to_string_lossy().contains('{') {
        return Err(config_error(
            &wf.path,
            format!("key config_source: only {{project-root}} may appear in {source:?}"),
        ));
    }
    let Some(text) = store::read_optional(&source_path)? else {
        wf.warnings.push(format!(
            "bundle config {} not found; using logbook.yaml's output folders",
            source_path.display()
        ));
        return Ok(());
    };
    let doc: Value = store::parse_yaml(&source_path, "bundle config.yaml", &text)?;
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
        let resolved = out.replace("{project-root}", &root);
        check_no_placeholder(&source_path, "output_folder", &resolved)?;
        wf.output_folder = absolute(p.root(), &resolved);
    }
    if let Some(aof) = get("agent_outputs_folder") {
        let resolved = aof
            .replace("{project-root}", &root)
            .replace("{output_folder}", &wf.output_folder.to_string_lossy());
        check_no_placeholder(&source_path, "agent_outputs_folder", &resolved)?;
        wf.agent_outputs_folder = absolute(p.root(), &resolved);
    }
    wf.user = get("user_name").or_else(|| get("user")).map(str::to_string);
    wf.config_values = doc;
    Ok(())
}

fn check_no_placeholder(path: &Path, key: &str, value: &str) -> Result<()> {
    match value.find('{') {
        Some(i) => {
            let name: String = value[i..]
                .chars()
                .take_while(|&c| c != '}')
                .skip(1)
                .collect();
            Err(config_error(
                path,
                format!(
                    "key {key}: unknown placeholder {{{name}}}; allowed: {{project-root}}, {{output_folder}}"
                ),
            ))
        }
        None => Ok(()),
    }
}

fn absolute(root: &Path, s: &str) -> PathBuf {
    let p = Path::new(s);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    }
}

/// Resolves every path value of `wf` for run `id` in `folder` and adds them
/// to `vars` (the base variables stay as they are: they are the truth).
pub(super) fn resolve_into(
    p: &Project,
    wf: &WorkflowFile,
    id: &str,
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
    id: &'a str,
    folder: &'a Path,
}

impl Resolver<'_> {
    /// Substitutes every placeholder of `template` (the value of `key`);
    /// `stack` holds the keys being resolved, so a reference cycle is an
    /// error rather than a loop.
    fn resolve(&self, key: &str, template: &str, stack: &mut Vec<String>) -> Result<String> {
        let mut out = String::new();
        let mut rest = template;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let after = &rest[start..];
            if let Some(inner) = after.strip_prefix("{{") {
                let Some(end) = inner.find("}}") else {
                    return Err(self.error(key, format!("unclosed '{{{{' in {template:?}")));
                };
                let name = inner[..end].trim();
                if name != "session_id" {
                    return Err(self.unknown(key, &format!("{{{{{name}}}}}")));
                }
                out.push_str(self.id);
                rest = &inner[end + 2..];
                continue;
            }
            let Some(end) = after.find('}') else {
                return Err(self.error(key, format!("unclosed '{{' in {template:?}")));
            };
            let name = &after[1..end];
            rest = &after[end + 1..];
            let value = match name {
                "session_id" => self.id.to_string(),
                "session_folder" => self.folder.to_string_lossy().into_owned(),
                "project-root" => self.p.root().to_string_lossy().into_owned(),
                "output_folder" => self.wf.output_folder.to_string_lossy().into_owned(),
                "agent_outputs_folder" => {
                    self.wf.agent_outputs_folder.to_string_lossy().into_owned()
                }
                "config_source" => match rest.strip_prefix(':') {
                    Some(tail) => {
                        let len = tail
                            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                            .unwrap_or(tail.len());
                        let cfg_key = &tail[..len];
                        rest = &tail[len..];
                        self.config_value(key, cfg_key)?
                    }
                    None => self.workflow_value(key, "config_source", stack)?,
                },
                other => self.workflow_value(key, other, stack)?,
            };
            out.push_str(&value);
        }
        out.push_str(rest);
        Ok(out)
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
                    Ok(v.replace("{project-root}", &root))
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

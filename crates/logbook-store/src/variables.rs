//! Workflow-engine variables (seed 000, "Configuration Requirements" and
//! "Path Resolution"): what an agent needs to know to write into its run
//! folder, and the resolution of a BMAD-style `workflow.yaml`'s path values.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::{PathTrust, Project};
use logbook_model::error::{Error, Result};
use logbook_model::ids::RunId;
use logbook_model::run::MANIFEST_FILE;
use logbook_model::template::{self, Placeholder};
use logbook_model::text;

/// Keys of a workflow.yaml that describe it rather than name a path.
const DESCRIPTIVE_KEYS: [&str; 6] = [
    "name",
    "description",
    "author",
    "version",
    "inputs",
    "session_id",
];

/// The largest workflow.yaml or bundle config.yaml read (real ones are a
/// few KiB).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A workflow.yaml as far as a run needs it.
#[derive(Debug, Clone)]
pub struct WorkflowFile {
    /// The file, absolute.
    pub path: PathBuf,
    /// `name:`, the manifest's `workflow.name`.
    pub name: Option<String>,
    /// `description:`, the manifest's `workflow.description`.
    pub description: Option<String>,
    /// The bundle it belongs to, the manifest's `agent.bundle`: from its
    /// path (`bmad/{bundle}/workflows/…`), else its bundle config's folder.
    pub bundle: Option<String>,
    /// The bundle config its `config_source` names, when it was read.
    pub bundle_config: Option<PathBuf>,
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
    Error::config(path, reason)
}

/// Reads a workflow.yaml and the bundle config its `config_source` names
/// (falling back to Logbook's config when there is none); `trust` says
/// whether both must lie inside the project root.
pub fn read_workflow_file(p: &Project, path: &Path, trust: PathTrust) -> Result<WorkflowFile> {
    let path = crate::resolve_named(p.root(), path, trust, "workflow_file")?;
    let Some(text) = crate::read_regular(&path, "workflow file", MAX_CONFIG_BYTES)? else {
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
        description: text_of("description").filter(|s| !s.trim().is_empty()),
        bundle: crate::config::bundle_of(p.root(), &path),
        bundle_config: None,
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
        read_bundle_config(p, &mut wf, &source, trust)?;
    }
    Ok(wf)
}

fn read_bundle_config(
    p: &Project,
    wf: &mut WorkflowFile,
    source: &str,
    trust: PathTrust,
) -> Result<()> {
    let root = p.root().to_string_lossy().into_owned();
    let source = render_known(
        &wf.path,
        "config_source",
        source,
        &[("project-root", &root)],
    )?;
    let source_path = crate::resolve_named(p.root(), Path::new(&source), trust, "config_source")?;
    let Some(text) = crate::read_regular(&source_path, "bundle config", MAX_CONFIG_BYTES)? else {
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
        let resolved = render_known(
            &source_path,
            "output_folder",
            out,
            &[("project-root", &root)],
        )?;
        wf.output_folder = crate::absolute(p.root(), Path::new(&resolved));
    }
    if let Some(aof) = get("agent_outputs_folder") {
        let output_folder = wf.output_folder.to_string_lossy().into_owned();
        let resolved = render_known(
            &source_path,
            "agent_outputs_folder",
            aof,
            &[("project-root", &root), ("output_folder", &output_folder)],
        )?;
        wf.agent_outputs_folder = crate::absolute(p.root(), Path::new(&resolved));
    }
    wf.user = get("user_name").or_else(|| get("user")).map(str::to_string);
    if wf.bundle.is_none() {
        wf.bundle = crate::config::bundle_of(p.root(), &source_path);
    }
    wf.bundle_config = Some(source_path);
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
                // A bundle whose folder differs from Logbook's is said once
                // by `run start` (the run stays in Logbook's folder, which
                // the variables name); only another layout is refused.
                let bundle_elsewhere = folder.parent() != Some(wf.agent_outputs_folder.as_path());
                if Path::new(&value) != Path::new(ours) && !bundle_elsewhere {
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tempfile::TempDir;

    use super::*;

    const ID: &str = "3f2c9d14-4b5e-4789-81ab-cdef12345678";

    fn fixture(name: &str) -> String {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/shared/fixtures"
        ))
        .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A project in a temp folder with Logbook's default paths (no
    /// logbook.yaml): runs under `{root}/docs/agent-outputs`.
    fn project() -> (TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let p = Project::open(dir.path()).unwrap();
        (dir, p)
    }

    fn write(p: &Project, rel: &str, text: &str) -> PathBuf {
        let path = p.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The run Logbook would create: id [`ID`] in its own runs folder.
    fn run_folder(p: &Project) -> (RunId, PathBuf) {
        let id = RunId::parse(ID).unwrap();
        let folder = id.folder(&p.config.agent_outputs_folder);
        (id, folder)
    }

    /// Reads `workflow.yaml` (written with `text`) and resolves it for the
    /// run of [`run_folder`], on top of the base variables.
    fn resolve(p: &Project, text: &str) -> Result<Map<String, Value>> {
        write(p, "workflow.yaml", text);
        let wf = read_workflow_file(p, Path::new("workflow.yaml"), PathTrust::User)?;
        let (id, folder) = run_folder(p);
        let mut vars = base(&id, &folder);
        resolve_into(p, &wf, &id, &folder, &mut vars)?;
        Ok(vars)
    }

    fn get<'a>(vars: &'a Map<String, Value>, key: &str) -> &'a str {
        vars.get(key)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no variable {key} in {vars:?}"))
    }

    fn path_of(p: &Path) -> String {
        p.to_string_lossy().into_owned()
    }

    /// The reason of an [`Error::Config`] about `file`.
    fn config_reason(err: Error, file: &Path) -> String {
        match err {
            Error::Config { path, reason, .. } => {
                assert_eq!(path, file);
                reason
            }
            other => panic!("expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn base_variables_are_absolute_paths_of_the_run() {
        let id = RunId::parse(ID).unwrap();
        let vars = base(&id, Path::new("/p/docs/agent-outputs").join(ID).as_path());
        assert_eq!(
            Value::Object(vars),
            json!({
                "session_id": ID,
                "session_folder": format!("/p/docs/agent-outputs/{ID}"),
                "manifest_file": format!("/p/docs/agent-outputs/{ID}/manifest.json"),
                "default_output_file": format!("/p/docs/agent-outputs/{ID}/output.md"),
            })
        );
    }

    #[test]
    fn bmad_fixture_reads_and_resolves() {
        let (_dir, p) = project();
        write(&p, "bmad/bmm/config.yaml", &fixture("bmad-config.yaml"));
        let wf_path = write(&p, "workflow.yaml", &fixture("workflow.yaml"));
        let wf = read_workflow_file(&p, Path::new("workflow.yaml"), PathTrust::User).unwrap();
        let root = p.root();

        assert_eq!(wf.path, wf_path);
        assert_eq!(wf.name.as_deref(), Some("intake-app"));
        assert_eq!(
            wf.description.as_deref(),
            Some("Initial requirements gathering for application development")
        );
        assert_eq!(
            Value::Object(wf.inputs.clone()),
            json!({"category": "Application Development", "request_type": "application"})
        );
        // Descriptive keys (name, description, author, session_id, inputs)
        // are not path values; the rest keep the file's order.
        let keys: Vec<&str> = wf.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "config_source",
                "session_folder",
                "manifest_file",
                "default_output_file",
                "requirements_file",
                "attachments_folder"
            ]
        );
        assert_eq!(wf.output_folder, root.join("docs"));
        assert_eq!(wf.agent_outputs_folder, root.join("docs/agent-outputs"));
        assert_eq!(wf.user.as_deref(), Some("Bryan"));
        assert!(wf.warnings.is_empty(), "{:?}", wf.warnings);

        let (id, folder) = run_folder(&p);
        let mut vars = base(&id, &folder);
        resolve_into(&p, &wf, &id, &folder, &mut vars).unwrap();
        assert_eq!(get(&vars, "session_id"), ID);
        assert_eq!(get(&vars, "session_folder"), path_of(&folder));
        assert_eq!(
            get(&vars, "manifest_file"),
            path_of(&folder.join("manifest.json"))
        );
        assert_eq!(
            get(&vars, "default_output_file"),
            path_of(&folder.join("output.md"))
        );
        assert_eq!(
            get(&vars, "requirements_file"),
            path_of(&folder.join("initial-requirements.md"))
        );
        assert_eq!(
            get(&vars, "attachments_folder"),
            path_of(&folder.join("attachments"))
        );
        assert_eq!(
            get(&vars, "config_source"),
            path_of(&root.join("bmad/bmm/config.yaml"))
        );
        assert_eq!(vars.len(), 7, "{vars:?}");
    }

    #[test]
    fn every_placeholder_form() {
        let (_dir, p) = project();
        // The bundle config moves both folders away from Logbook's.
        write(
            &p,
            "bmad/config.yaml",
            "user_name: Dana\noutput_folder: '{project-root}/out'\nagent_outputs_folder: '{output_folder}/runs'\nteam_folder: '{project-root}/team'\n",
        );
        let vars = resolve(
            &p,
            "name: w\nconfig_source: '{project-root}/bmad/config.yaml'\n\
             root_file: '{project-root}/a.md'\n\
             report: '{output_folder}/reports/{session_id}.md'\n\
             handlebars: '{output_folder}/{{session_id}}/{{ session_id }}.txt'\n\
             runs: '{config_source}:agent_outputs_folder/all'\n\
             outs: '{config_source}:output_folder'\n\
             team: '{config_source}:team_folder/notes'\n\
             user: '{config_source}:user_name'\n\
             here: '{session_folder}/x'\n",
        )
        .unwrap();
        let root = p.root();
        assert_eq!(get(&vars, "root_file"), path_of(&root.join("a.md")));
        assert_eq!(
            get(&vars, "report"),
            path_of(&root.join(format!("out/reports/{ID}.md")))
        );
        assert_eq!(
            get(&vars, "handlebars"),
            path_of(&root.join(format!("out/{ID}/{ID}.txt")))
        );
        assert_eq!(get(&vars, "runs"), path_of(&root.join("out/runs/all")));
        assert_eq!(get(&vars, "outs"), path_of(&root.join("out")));
        assert_eq!(get(&vars, "team"), path_of(&root.join("team/notes")));
        assert_eq!(get(&vars, "user"), "Dana");
        let (_, folder) = run_folder(&p);
        assert_eq!(get(&vars, "here"), path_of(&folder.join("x")));
        // The base variables are untouched.
        assert_eq!(get(&vars, "session_folder"), path_of(&folder));
    }

    #[test]
    fn keys_refer_to_other_keys_in_any_order() {
        let (_dir, p) = project();
        let vars = resolve(
            &p,
            "name: w\n\
             final: '{middle}/c.md'\n\
             middle: '{top}/b'\n\
             top: '{project-root}/a'\n",
        )
        .unwrap();
        let root = p.root();
        assert_eq!(get(&vars, "top"), path_of(&root.join("a")));
        assert_eq!(get(&vars, "middle"), path_of(&root.join("a/b")));
        assert_eq!(get(&vars, "final"), path_of(&root.join("a/b/c.md")));
    }

    #[test]
    fn a_reference_cycle_is_an_error_naming_it() {
        let (_dir, p) = project();
        let text = "name: w\na: '{b}/x'\nb: '{c}/y'\nc: '{a}/z'\n";
        let err = resolve(&p, text).unwrap_err();
        assert_eq!(
            config_reason(err, &p.root().join("workflow.yaml")),
            "key c: {a} refers back to itself (a → b → c → a)"
        );

        let err = resolve(&p, "name: w\nloop: '{loop}/x'\n").unwrap_err();
        assert_eq!(
            config_reason(err, &p.root().join("workflow.yaml")),
            "key loop: {loop} refers back to itself (loop → loop)"
        );
    }

    #[test]
    fn an_unknown_placeholder_names_the_key_and_the_placeholder() {
        let (_dir, p) = project();
        let file = p.root().join("workflow.yaml");
        for (text, key, placeholder) in [
            ("out: '{project-root}/{nope}/x'\n", "out", "{nope}"),
            ("out: '{{run_id}}.md'\n", "out", "{{run_id}}"),
            (
                "config_source: ''\nout: '{config_source}:missing_key/x'\n",
                "out",
                "{config_source}:missing_key",
            ),
            // Through a reference: the key whose value holds it is named.
            (
                "first: '{second}'\nsecond: '{bogus}'\n",
                "second",
                "{bogus}",
            ),
        ] {
            let err = resolve(&p, text).unwrap_err();
            let reason = config_reason(err, &file);
            let want = format!("key {key}: unknown placeholder {placeholder}; known: ");
            assert!(reason.starts_with(&want), "{reason:?} for {text:?}");
        }
    }

    #[test]
    fn an_unclosed_placeholder_names_the_key() {
        let (_dir, p) = project();
        let err = resolve(&p, "out: '{project-root/x'\n").unwrap_err();
        let reason = config_reason(err, &p.root().join("workflow.yaml"));
        assert!(reason.starts_with("key out: unclosed '{'"), "{reason}");
    }

    #[test]
    fn a_missing_bundle_config_warns_and_falls_back() {
        let (_dir, p) = project();
        write(
            &p,
            "workflow.yaml",
            "name: w\nconfig_source: '{project-root}/bmad/missing/config.yaml'\n\
             session_folder: '{config_source}:agent_outputs_folder/{{session_id}}'\n\
             out: '{output_folder}/o.md'\n",
        );
        let wf = read_workflow_file(&p, Path::new("workflow.yaml"), PathTrust::User).unwrap();
        let missing = p.root().join("bmad/missing/config.yaml");
        assert_eq!(
            wf.warnings,
            [format!(
                "bundle config {} not found; using logbook.yaml's output folders",
                missing.display()
            )]
        );
        assert_eq!(wf.output_folder, p.config.output_folder);
        assert_eq!(wf.agent_outputs_folder, p.config.agent_outputs_folder);
        assert_eq!(wf.user, None);
        assert!(wf.config_values.is_empty());

        let (id, folder) = run_folder(&p);
        let mut vars = base(&id, &folder);
        resolve_into(&p, &wf, &id, &folder, &mut vars).unwrap();
        assert_eq!(get(&vars, "session_folder"), path_of(&folder));
        assert_eq!(
            get(&vars, "out"),
            path_of(&p.root().join("docs").join("o.md"))
        );
    }

    #[test]
    fn no_config_source_uses_logbooks_folders() {
        let (_dir, p) = project();
        let vars = resolve(
            &p,
            "name: w\nsession_folder: '{config_source}:agent_outputs_folder/{{session_id}}'\n\
             manifest_file: '{session_folder}/manifest.json'\n",
        )
        .unwrap();
        let (_, folder) = run_folder(&p);
        assert_eq!(get(&vars, "session_folder"), path_of(&folder));
        assert_eq!(
            get(&vars, "manifest_file"),
            path_of(&folder.join("manifest.json"))
        );
    }

    #[test]
    fn a_bundle_folder_elsewhere_keeps_logbooks_session_folder_and_another_layout_is_an_error() {
        let (_dir, p) = project();
        write(
            &p,
            "bmad/config.yaml",
            "agent_outputs_folder: '{project-root}/elsewhere'\n",
        );
        // The bundle's folder is not Logbook's: the run stays where Logbook
        // keeps it (`run start` warns), never refused, never written elsewhere.
        let vars = resolve(
            &p,
            "name: w\nconfig_source: '{project-root}/bmad/config.yaml'\n\
             session_folder: '{config_source}:agent_outputs_folder/{{session_id}}'\n",
        )
        .unwrap();
        let (_, folder) = run_folder(&p);
        assert_eq!(get(&vars, "session_folder"), path_of(&folder));

        let err = resolve(&p, "name: w\nmanifest_file: '{project-root}/m.json'\n").unwrap_err();
        let reason = config_reason(err, &p.root().join("workflow.yaml"));
        assert!(
            reason.starts_with(&format!(
                "key manifest_file resolves to {}, but Logbook keeps this run at {}",
                p.root().join("m.json").display(),
                folder.join("manifest.json").display()
            )),
            "{reason}"
        );
    }

    #[test]
    fn name_description_and_inputs_are_read() {
        let (_dir, p) = project();
        write(
            &p,
            "wf/workflow.yaml",
            "name: deep-dive-api\ndescription: Look closely\n\
             inputs:\n  depth: 3\n  topics: [auth, billing]\n  owner: Dana\n",
        );
        let wf = read_workflow_file(&p, Path::new("wf/workflow.yaml"), PathTrust::User).unwrap();
        assert_eq!(wf.path, p.root().join("wf/workflow.yaml"));
        assert_eq!(wf.name.as_deref(), Some("deep-dive-api"));
        assert_eq!(wf.description.as_deref(), Some("Look closely"));
        assert_eq!(
            Value::Object(wf.inputs),
            json!({"depth": 3, "topics": ["auth", "billing"], "owner": "Dana"})
        );
        assert!(wf.values.is_empty());
        assert_eq!(wf.user, None);

        // A blank name is no name; no inputs is an empty map.
        write(&p, "blank.yaml", "name: '  '\n");
        let wf = read_workflow_file(&p, Path::new("blank.yaml"), PathTrust::User).unwrap();
        assert_eq!(wf.name, None);
        assert_eq!(wf.description, None);
        assert!(wf.inputs.is_empty());
    }

    #[test]
    fn unreadable_workflow_files_are_refused() {
        let (_dir, p) = project();
        let err = read_workflow_file(&p, Path::new("nowhere.yaml"), PathTrust::User).unwrap_err();
        assert!(
            matches!(&err, Error::NotFound { kind: "workflow file", id, .. } if *id == path_of(&p.root().join("nowhere.yaml"))),
            "{err:?}"
        );

        let file = write(&p, "list.yaml", "- a\n- b\n");
        let err = read_workflow_file(&p, Path::new("list.yaml"), PathTrust::User).unwrap_err();
        assert_eq!(
            config_reason(err, &file),
            "expected a mapping of keys at the top level"
        );

        let file = write(&p, "inputs.yaml", "name: w\ninputs: [a, b]\n");
        let err = read_workflow_file(&p, Path::new("inputs.yaml"), PathTrust::User).unwrap_err();
        assert_eq!(config_reason(err, &file), "key inputs: expected a mapping");

        // The bundle config path may only use {project-root}.
        let file = write(
            &p,
            "source.yaml",
            "config_source: '{output_folder}/c.yaml'\n",
        );
        let err = read_workflow_file(&p, Path::new("source.yaml"), PathTrust::User).unwrap_err();
        assert_eq!(
            config_reason(err, &file),
            "key config_source: unknown placeholder {output_folder}; allowed: {project-root}"
        );
    }
}

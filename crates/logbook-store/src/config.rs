//! Where things live: the project root, `logbook.yaml`, and the placeholder
//! substitution of seed 000's path resolver (`{project-root}`,
//! `{output_folder}`, `{sessions_dir}`). Nothing needs configuring.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use logbook_model::archive::{Age, Retention, archivable_status};
use logbook_model::error::{Error, Next, Result, Step};
use logbook_model::template::{self, Placeholder};

/// The config file's name at the project root.
pub const CONFIG_FILE: &str = "logbook.yaml";
/// Logbook's own folder at the project root (index, locks, default stores).
pub const STATE_DIR: &str = ".logbook";

/// Every key of `logbook.yaml` with its default and the comment `logbook
/// init` writes beside it: the one table both the loader and `init` read, so
/// they cannot disagree.
pub const DEFAULTS: &[(&str, &str, &str)] = &[
    ("output_folder", "'{project-root}/docs'", ""),
    (
        "agent_outputs_folder",
        "'{output_folder}/agent-outputs'",
        "unset: a BMAD bundle config's (bmad/*/config.yaml), else this",
    ),
    ("sessions_dir", "'{project-root}/.logbook/sessions'", ""),
    ("session_archive_dir", "'{sessions_dir}/archive'", ""),
    (
        "archive_folder",
        "'{agent_outputs_folder}-archive'",
        "where archiving moves finished runs: beside the runs folder, not in it",
    ),
    (
        "transcripts_dir",
        "'{project-root}/.logbook/transcripts'",
        "",
    ),
    ("user", "''", "empty: $USER, else 'unknown'"),
    (
        "default_bundle",
        "''",
        "agent.bundle of a run nothing else names one for, e.g. bmad/bmm",
    ),
    ("default_prefix", "SES", ""),
    ("token_budget", "150000", ""),
    (
        "team_url",
        "''",
        "empty: $LOGBOOK_TEAM_URL, else no team catalog",
    ),
    ("origin", "''", "empty: $LOGBOOK_ORIGIN, else the host name"),
    (
        "hook_context_bytes",
        "8192",
        "the most an agent's hook adds to its context after a compaction",
    ),
    (
        "budget_action",
        "warn",
        "past a work session's budget the hooks warn the agent; block: deny its tool calls past --max-cost",
    ),
    (
        "retention",
        "{}",
        "e.g. {archive_after: 90d, statuses: [completed, failed]}; applied only when archiving by policy",
    ),
];

/// The default of `key` as a value (quotes removed).
fn default_of(key: &str) -> &'static str {
    DEFAULTS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map_or("", |(_, v, _)| v.trim_matches('\''))
}

/// Whether a project marker (`logbook.yaml`, `.logbook/`) is at `path`:
/// `logbook demo` fills only a folder without one.
pub fn marker_exists(path: &Path) -> bool {
    path.exists()
}

/// The text `logbook init` writes: every key at its default, commented.
pub(crate) fn default_config_text() -> String {
    let mut out = String::from(
        "# Logbook configuration. Every key is optional; these are the defaults.\n\
         # Placeholders: {project-root}, {output_folder}, {agent_outputs_folder}, {sessions_dir}.\n",
    );
    for (key, value, comment) in DEFAULTS {
        // Written commented out: set, it would overrule the bundle's folder.
        let unset = if *key == "agent_outputs_folder" {
            "# "
        } else {
            ""
        };
        let line = format!("{unset}{key}: {value}");
        if comment.is_empty() {
            out.push_str(&line);
        } else {
            // A key longer than the column still needs the space YAML
            // wants before a comment.
            out.push_str(&format!("{line:<19} # {comment}"));
        }
        out.push('\n');
    }
    out
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    output_folder: Option<String>,
    agent_outputs_folder: Option<String>,
    archive_folder: Option<String>,
    sessions_dir: Option<String>,
    session_archive_dir: Option<String>,
    transcripts_dir: Option<String>,
    user: Option<String>,
    default_bundle: Option<String>,
    default_prefix: Option<String>,
    token_budget: Option<u64>,
    team_url: Option<String>,
    origin: Option<String>,
    hook_context_bytes: Option<u64>,
    budget_action: Option<String>,
    retention: Option<RawRetention>,
}

/// `retention:` as written: both keys optional, validated on load.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRetention {
    archive_after: Option<String>,
    statuses: Option<Vec<String>>,
}

/// What `archive_folder` defaulted to before the archive moved out of the
/// seed's folder (and what `logbook init` wrote into `logbook.yaml`): a
/// `logbook.yaml` naming exactly this means the default, not a choice.
pub const OLD_ARCHIVE_DEFAULT: &str = "{agent_outputs_folder}/.archive";

/// An archive in the older default place and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyArchive {
    /// `{agent_outputs_folder}/.archive`.
    pub from: PathBuf,
    /// The default `archive_folder`.
    pub to: PathBuf,
}

/// The resolved configuration: absolute paths and settled defaults.
#[derive(Debug, Clone)]
pub struct Config {
    /// The project root every relative path hangs from.
    pub root: PathBuf,
    /// `logbook.yaml` if one was read.
    pub source: Option<PathBuf>,
    /// Seed 000's `{output_folder}`.
    pub output_folder: PathBuf,
    /// Where run folders live (`{agent_outputs_folder}/{uuid}/`): what
    /// `logbook.yaml` sets, else the BMAD bundle config's (seed 000 says the
    /// folder is "configured in bundle config.yaml"), else the default.
    pub agent_outputs_folder: PathBuf,
    /// Who decided [`Config::agent_outputs_folder`].
    pub agent_outputs_source: FolderSource,
    /// The project's BMAD bundle config (`bmad/*/config.yaml`, the first by
    /// name that reads), if there is one.
    pub bundle: Option<BundleConfig>,
    /// `agent.bundle` of runs that name none another way (`default_bundle`).
    pub default_bundle: Option<String>,
    /// Where work session YAML and workflow state files live.
    pub sessions_dir: PathBuf,
    /// Where closed work sessions are moved.
    pub session_archive_dir: PathBuf,
    /// Where `logbook archive` moves finished run folders, out of the live
    /// set every listing walks (`{archive_folder}/{uuid}/`).
    pub archive_folder: PathBuf,
    /// An archive in the older default place, inside the runs folder
    /// (where a seed 000 reader lists it as a session), still to be moved
    /// to the default: `doctor --fix` and the next `logbook archive` move
    /// it. Until then [`Config::archive_folder`] is that folder, unless the
    /// default exists already (a move cut short), so nothing is hidden.
    pub legacy_archive: Option<LegacyArchive>,
    /// The retention policy `logbook archive --policy` applies; `None`
    /// when `logbook.yaml` sets none (nothing is ever archived implicitly).
    pub retention: Option<Retention>,
    /// Where transcripts live.
    pub transcripts_dir: PathBuf,
    /// The user recorded on runs: config, else `$USER`, else `unknown`.
    pub user: String,
    /// Prefix of new work session ids.
    pub default_prefix: String,
    /// Token budget of new work sessions, and the default for files without one.
    pub token_budget: u64,
    /// The team's PostgreSQL catalog (`postgres://…`), if this machine
    /// shares its records; `None` keeps everything local.
    pub team_url: Option<String>,
    /// This machine's name in the team as configured (`origin`, else
    /// `$LOGBOOK_ORIGIN`); see [`Config::origin`].
    origin: Option<String>,
    /// The most a hook's resume context holds (`hook_context_bytes`).
    pub hook_context_bytes: usize,
    /// `budget_action: block`: past a work session's dollar limit the hooks
    /// deny tool calls (`warn`, the default, only tells the agent).
    pub budget_block: bool,
}

/// Where [`Config::agent_outputs_folder`] came from: what `doctor` and
/// `run start` compare when the bundle and `logbook.yaml` disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderSource {
    /// `logbook.yaml` sets `agent_outputs_folder`.
    LogbookYaml,
    /// The bundle config at this path sets it (and `logbook.yaml` does not).
    Bundle(PathBuf),
    /// Nobody sets it: Logbook's default, `{output_folder}/agent-outputs`.
    Default,
}

/// A BMAD bundle's `config.yaml`, as far as Logbook follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleConfig {
    /// The file, absolute.
    pub path: PathBuf,
    /// The bundle as a manifest names it (`agent.bundle`): its folder
    /// relative to the project root, e.g. `bmad/bmm`.
    pub bundle: String,
    /// Its `agent_outputs_folder`, resolved (its `{output_folder}` is its
    /// own `output_folder`, else Logbook's); `None` when it sets none.
    pub agent_outputs_folder: Option<PathBuf>,
}

/// Where the bundle configs of a BMAD project live: `bmad/{bundle}/config.yaml`.
pub const BUNDLE_DIR: &str = "bmad";

/// The bundle a path inside `root` belongs to (`bmad/{bundle}/…`), as
/// `agent.bundle` names it: `bmad/bmm` for `bmad/bmm/workflows/x/workflow.yaml`.
pub(crate) fn bundle_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_str()?;
    let second = parts.next()?.as_os_str().to_str()?;
    // A file directly in `bmad/` names no bundle.
    parts.next()?;
    (first == BUNDLE_DIR).then(|| format!("{first}/{second}"))
}

/// Reads the project's bundle config: `bmad/*/config.yaml`, the first by
/// name that is a readable YAML mapping. One that is unreadable is passed
/// over here (listing must not fail on it) and read again, with its error,
/// by whatever uses it explicitly.
fn discover_bundle(root: &Path, output_folder: &Path) -> Option<BundleConfig> {
    let dir = root.join(BUNDLE_DIR);
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("config.yaml"))
        .collect();
    candidates.sort();
    candidates
        .into_iter()
        .find_map(|path| read_bundle(root, &path, output_folder).ok().flatten())
}

/// Reads the bundle config at `path` (`Ok(None)` when there is none): its
/// bundle name and resolved `agent_outputs_folder`.
pub(crate) fn read_bundle(
    root: &Path,
    path: &Path,
    output_folder: &Path,
) -> Result<Option<BundleConfig>> {
    let Some(text) =
        crate::read_regular(path, "bundle config", crate::variables::MAX_CONFIG_BYTES)?
    else {
        return Ok(None);
    };
    let doc: serde_json::Value =
        logbook_model::text::parse_yaml(path, "bundle config.yaml", &text)?;
    let get = |k: &str| {
        doc.get(k)
            .and_then(serde_json::Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let resolver = Resolver {
        path,
        text: &text,
        root,
    };
    let own_output = match get("output_folder") {
        Some(o) => resolver.path("output_folder", o, &[])?,
        None => output_folder.to_path_buf(),
    };
    let agent_outputs_folder = match get("agent_outputs_folder") {
        Some(a) => {
            Some(resolver.path("agent_outputs_folder", a, &[("output_folder", &own_output)])?)
        }
        None => None,
    };
    let folder = path.parent().unwrap_or(root);
    let bundle = bundle_of(root, &folder.join("config.yaml")).unwrap_or_else(|| {
        folder
            .strip_prefix(root)
            .unwrap_or(folder)
            .to_string_lossy()
            .into_owned()
    });
    Ok(Some(BundleConfig {
        path: path.to_path_buf(),
        bundle,
        agent_outputs_folder,
    }))
}

impl Config {
    /// When `logbook.yaml` sets `agent_outputs_folder` and the project's
    /// bundle config sets another: the bundle config and its folder. Runs
    /// go to `logbook.yaml`'s, which the bundle's own tools never read, so
    /// `doctor` and `run start` say so.
    pub fn bundle_disagreement(&self) -> Option<(&Path, &Path)> {
        let bundle = self.bundle.as_ref()?;
        let theirs = bundle.agent_outputs_folder.as_deref()?;
        (self.agent_outputs_source == FolderSource::LogbookYaml
            && theirs != self.agent_outputs_folder)
            .then_some((bundle.path.as_path(), theirs))
    }

    /// Logbook's own default runs folder, `{output_folder}/agent-outputs`:
    /// where runs went before the bundle's folder was followed.
    pub fn default_agent_outputs_folder(&self) -> PathBuf {
        self.output_folder.join("agent-outputs")
    }

    /// Finds the project root for `cwd`: `explicit` if given, else the
    /// nearest ancestor holding `logbook.yaml` or `.logbook/`, else `cwd`.
    pub fn discover(cwd: &Path, explicit: Option<&Path>) -> Result<Config> {
        let root = match explicit {
            Some(r) => crate::root_path(cwd, r),
            None => Config::marked_root(cwd).unwrap_or(cwd).to_path_buf(),
        };
        Config::load(&root)
    }

    /// The nearest folder at or above `cwd` that holds a `logbook.yaml` or a
    /// `.logbook/` folder: the project a command run there belongs to.
    pub(crate) fn marked_root(cwd: &Path) -> Option<&Path> {
        cwd.ancestors()
            .find(|d| d.join(CONFIG_FILE).is_file() || d.join(STATE_DIR).is_dir())
    }

    /// Reads `{root}/logbook.yaml` (if present) and resolves every path.
    pub fn load(root: &Path) -> Result<Config> {
        let path = root.join(CONFIG_FILE);
        // Same rule as a workflow.yaml: a FIFO or a huge file named
        // logbook.yaml must not hang or exhaust every command.
        let text = crate::read_regular(&path, "config file", crate::variables::MAX_CONFIG_BYTES)?;
        let raw = parse_raw(&path, text.as_deref())?;
        let text = text.unwrap_or_default();
        let resolver = Resolver {
            path: &path,
            text: &text,
            root,
        };
        let folders = resolver.folders(&raw)?;
        let retention = match raw.retention {
            None => None,
            // `retention: {}`, as `logbook init` writes it: no policy.
            Some(RawRetention {
                archive_after: None,
                statuses: None,
            }) => None,
            Some(r) => Some(resolver.retention(r)?),
        };
        let user = raw
            .user
            .filter(|u| !u.trim().is_empty())
            .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
            .unwrap_or_else(|| "unknown".into());
        let team_url = raw
            .team_url
            .filter(|u| !u.trim().is_empty())
            .or_else(|| env_value("LOGBOOK_TEAM_URL"));
        let origin = raw
            .origin
            .filter(|o| !o.trim().is_empty())
            .or_else(|| env_value("LOGBOOK_ORIGIN"));
        let default_prefix = resolver.default_prefix(raw.default_prefix)?;
        let budget_block = resolver.budget_block(raw.budget_action.as_deref())?;
        Ok(Config {
            root: root.to_path_buf(),
            source: (!text.is_empty() || path.is_file()).then_some(path),
            output_folder: folders.output_folder,
            agent_outputs_folder: folders.agent_outputs_folder,
            agent_outputs_source: folders.agent_outputs_source,
            bundle: folders.bundle,
            default_bundle: raw.default_bundle.filter(|b| !b.trim().is_empty()),
            sessions_dir: folders.sessions_dir,
            session_archive_dir: folders.session_archive_dir,
            archive_folder: folders.archive_folder,
            legacy_archive: folders.legacy_archive,
            retention,
            transcripts_dir: folders.transcripts_dir,
            user,
            default_prefix,
            token_budget: raw
                .token_budget
                .unwrap_or_else(|| default_of("token_budget").parse().unwrap_or(150_000)),
            team_url,
            origin,
            budget_block,
            hook_context_bytes: raw
                .hook_context_bytes
                .and_then(|b| usize::try_from(b).ok())
                .unwrap_or_else(|| default_of("hook_context_bytes").parse().unwrap_or(8192)),
        })
    }

    /// This machine's name in the team, stored beside every record it
    /// pushes: the configured one, else the host name. Asked only by team
    /// commands, so no other command looks the host name up.
    pub fn origin(&self) -> String {
        self.origin.clone().unwrap_or_else(host_name)
    }

    /// `{root}/.logbook`: index, locks and default stores.
    pub fn state_dir(&self) -> PathBuf {
        self.root.join(STATE_DIR)
    }

    /// Writes `logbook.yaml` with the defaults; refuses to overwrite one.
    pub fn init(root: &Path) -> Result<PathBuf> {
        let path = root.join(CONFIG_FILE);
        if path.exists() {
            return Err(Error::AlreadyExists {
                path,
                hint: "edit it, or remove it to start from the defaults".into(),
            });
        }
        crate::write_atomic(&path, default_config_text().as_bytes())?;
        std::fs::create_dir_all(root.join(STATE_DIR))
            .map_err(|e| Error::io(root.join(STATE_DIR), e))?;
        crate::state_ignore::ensure(&root.join(STATE_DIR))?;
        Ok(path)
    }
}

fn env_value(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The machine's host name: the default origin of its records in a team.
fn host_name() -> String {
    crate::sys::host_name()
        .or_else(|| env_value("HOSTNAME"))
        .unwrap_or_else(|| "unknown".into())
}

/// `logbook.yaml`'s text as its raw keys (none for a missing or blank
/// file).
fn parse_raw(path: &Path, text: Option<&str>) -> Result<RawConfig> {
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(RawConfig::default());
    };
    serde_saphyr::from_str(t).map_err(|e| {
        // Said from the raw value, which names the field in the file's
        // words; the parser's own first line otherwise.
        let reason = match logbook_model::text::parse_yaml::<RawConfig>(path, "config file", t) {
            Err(Error::Corrupt { reason, .. }) => reason,
            _ => logbook_model::text::yaml_error(&e),
        };
        Error::config(path, reason).with_next(
            Next::say("see ")
                .step(Step::Init)
                .text(" for the keys and their defaults"),
        )
    })
}

/// Every folder a config names, resolved.
struct Folders {
    output_folder: PathBuf,
    agent_outputs_folder: PathBuf,
    agent_outputs_source: FolderSource,
    bundle: Option<BundleConfig>,
    archive_folder: PathBuf,
    legacy_archive: Option<LegacyArchive>,
    sessions_dir: PathBuf,
    session_archive_dir: PathBuf,
    transcripts_dir: PathBuf,
}

struct Resolver<'a> {
    path: &'a Path,
    text: &'a str,
    root: &'a Path,
}

impl Resolver<'_> {
    /// Every folder of `raw`, resolved in the order they may name each
    /// other.
    fn folders(&self, raw: &RawConfig) -> Result<Folders> {
        let output_folder = self.path(
            "output_folder",
            raw.output_folder
                .as_deref()
                .unwrap_or(default_of("output_folder")),
            &[],
        )?;
        let bundle = discover_bundle(self.root, &output_folder);
        let (agent_outputs_folder, agent_outputs_source) =
            self.agent_outputs_folder(raw, &output_folder, bundle.as_ref())?;
        let (archive_folder, legacy_archive) =
            self.archive_folder(raw, &output_folder, &agent_outputs_folder)?;
        let sessions_dir = self.path(
            "sessions_dir",
            raw.sessions_dir
                .as_deref()
                .unwrap_or(default_of("sessions_dir")),
            &[("output_folder", output_folder.as_path())],
        )?;
        let session_archive_dir = self.path(
            "session_archive_dir",
            raw.session_archive_dir
                .as_deref()
                .unwrap_or(default_of("session_archive_dir")),
            &[
                ("output_folder", output_folder.as_path()),
                ("sessions_dir", sessions_dir.as_path()),
            ],
        )?;
        let transcripts_dir = self.path(
            "transcripts_dir",
            raw.transcripts_dir
                .as_deref()
                .unwrap_or(default_of("transcripts_dir")),
            &[
                ("output_folder", output_folder.as_path()),
                ("sessions_dir", sessions_dir.as_path()),
            ],
        )?;
        Ok(Folders {
            output_folder,
            agent_outputs_folder,
            agent_outputs_source,
            bundle,
            archive_folder,
            legacy_archive,
            sessions_dir,
            session_archive_dir,
            transcripts_dir,
        })
    }

    /// The runs folder: as set, else the bundle's, else the default; and
    /// which of those it is.
    fn agent_outputs_folder(
        &self,
        raw: &RawConfig,
        output_folder: &Path,
        bundle: Option<&BundleConfig>,
    ) -> Result<(PathBuf, FolderSource)> {
        let bundle_folder = bundle.and_then(|b| {
            b.agent_outputs_folder
                .clone()
                .map(|f| (f, FolderSource::Bundle(b.path.clone())))
        });
        let vars: &[(&str, &Path)] = &[("output_folder", output_folder)];
        Ok(match (raw.agent_outputs_folder.as_deref(), bundle_folder) {
            (Some(set), _) => (
                self.path("agent_outputs_folder", set, vars)?,
                FolderSource::LogbookYaml,
            ),
            (None, Some(theirs)) => theirs,
            (None, None) => (
                self.path(
                    "agent_outputs_folder",
                    default_of("agent_outputs_folder"),
                    vars,
                )?,
                FolderSource::Default,
            ),
        })
    }

    /// The archive folder, and the older default archive still in use
    /// when the folder is not set; refused when it is the runs folder.
    fn archive_folder(
        &self,
        raw: &RawConfig,
        output_folder: &Path,
        agent_outputs_folder: &Path,
    ) -> Result<(PathBuf, Option<LegacyArchive>)> {
        let archive_vars: &[(&str, &Path)] = &[
            ("output_folder", output_folder),
            ("agent_outputs_folder", agent_outputs_folder),
        ];
        let set = raw
            .archive_folder
            .as_deref()
            // The defaults as `init` wrote them are the default, not a
            // choice: an older archive is then still looked for.
            .filter(|a| ![OLD_ARCHIVE_DEFAULT, default_of("archive_folder")].contains(&a.trim()));
        let (archive_folder, legacy_archive) = match set {
            Some(set) => (self.path("archive_folder", set, archive_vars)?, None),
            None => {
                let to = self.path("archive_folder", default_of("archive_folder"), archive_vars)?;
                let from = self.path("archive_folder", OLD_ARCHIVE_DEFAULT, archive_vars)?;
                if crate::fs::is_folder(&from) {
                    let in_use = if crate::fs::is_folder(&to) {
                        to.clone()
                    } else {
                        from.clone()
                    };
                    (in_use, Some(LegacyArchive { from, to }))
                } else {
                    (to, None)
                }
            }
        };
        if archive_folder == agent_outputs_folder {
            return Err(self.error(
                "archive_folder",
                "is the agent outputs folder itself; archived runs need a folder of their own (the default is '{agent_outputs_folder}-archive')".into(),
            ));
        }
        Ok((archive_folder, legacy_archive))
    }

    /// `default_prefix` as set, or the default, checked.
    fn default_prefix(&self, set: Option<String>) -> Result<String> {
        let default_prefix = set.unwrap_or_else(|| default_of("default_prefix").into());
        logbook_model::work_session::validate_prefix(&default_prefix).map_err(|e| {
            Error::config(
                self.path,
                format!(
                    "line {}: key default_prefix: {e}",
                    self.line_of("default_prefix")
                ),
            )
        })?;
        Ok(default_prefix)
    }

    /// `budget_action` as set: `warn` (the default) or `block`.
    fn budget_block(&self, set: Option<&str>) -> Result<bool> {
        match set.map(str::trim).unwrap_or("warn") {
            "warn" | "" => Ok(false),
            "block" => Ok(true),
            other => Err(Error::config(
                self.path,
                format!(
                    "line {}: key budget_action: {other:?} is neither warn nor block",
                    self.line_of("budget_action")
                ),
            )),
        }
    }

    fn line_of(&self, key: &str) -> usize {
        self.text
            .lines()
            .position(|l| l.trim_start().starts_with(&format!("{key}:")))
            .map_or(0, |i| i + 1)
    }

    /// Substitutes `{project-root}` and the named earlier values, refusing any
    /// other placeholder by name rather than leaving it half-substituted.
    fn path(&self, key: &str, template: &str, known: &[(&str, &Path)]) -> Result<PathBuf> {
        let out = template::render(template, |placeholder| {
            let value = match placeholder {
                Placeholder::Single("project-root") => Some(self.root),
                Placeholder::Single(name) => {
                    known.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
                }
                _ => None,
            };
            match value {
                Some(v) => Ok(v.to_string_lossy().into_owned()),
                None => {
                    let allowed: Vec<String> = std::iter::once("{project-root}".to_string())
                        .chain(known.iter().map(|(k, _)| format!("{{{k}}}")))
                        .collect();
                    Err(format!(
                        "unknown placeholder {placeholder}; allowed here: {}",
                        allowed.join(", ")
                    ))
                }
            }
        })
        .map_err(|reason| self.error(key, reason))?;
        Ok(crate::absolute(self.root, Path::new(&out)))
    }

    /// `retention:` checked: an age Logbook reads and statuses a finished
    /// run can have.
    fn retention(&self, raw: RawRetention) -> Result<Retention> {
        let after = raw.archive_after.ok_or_else(|| {
            self.error(
                "retention",
                "has no archive_after; write e.g. `retention: {archive_after: 90d}`".into(),
            )
        })?;
        let archive_after = Age::parse(&after)
            .map_err(|reason| self.error("retention", format!("archive_after: {reason}")))?;
        let statuses = match raw.statuses {
            None => Retention::DEFAULT_STATUSES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(list) => {
                for s in &list {
                    archivable_status(s)
                        .map_err(|reason| self.error("retention", format!("statuses: {reason}")))?;
                }
                list
            }
        };
        Ok(Retention {
            archive_after,
            statuses,
        })
    }

    fn error(&self, key: &str, reason: String) -> Error {
        Error::config(
            self.path,
            format!("line {}: key {key}: {reason}", self.line_of(key)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_resolve_under_root() {
        let dir = tempfile::tempdir().unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(
            c.agent_outputs_folder,
            dir.path().join("docs/agent-outputs")
        );
        assert_eq!(
            c.session_archive_dir,
            dir.path().join(".logbook/sessions/archive")
        );
        assert_eq!(c.token_budget, 150_000);
    }

    #[test]
    fn unknown_placeholder_names_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "token_budget: 5\nsessions_dir: '{nope}/s'\n",
        )
        .unwrap();
        let err = Config::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        assert!(err.contains("sessions_dir"), "{err}");
        assert!(err.contains("{nope}"), "{err}");
    }

    #[test]
    fn bmad_layout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CONFIG_FILE),
            "sessions_dir: _bmad-output/sessions\n",
        )
        .unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(c.sessions_dir, dir.path().join("_bmad-output/sessions"));
        assert_eq!(
            c.session_archive_dir,
            dir.path().join("_bmad-output/sessions/archive")
        );
    }

    #[test]
    fn init_text_is_the_defaults_table() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), default_config_text()).unwrap();
        let from_file = Config::load(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join(CONFIG_FILE)).unwrap();
        let built_in = Config::load(dir.path()).unwrap();
        assert_eq!(
            from_file.agent_outputs_folder,
            built_in.agent_outputs_folder
        );
        assert_eq!(from_file.transcripts_dir, built_in.transcripts_dir);
        assert_eq!(from_file.token_budget, built_in.token_budget);
        assert_eq!(from_file.default_prefix, built_in.default_prefix);
        for (key, _, _) in DEFAULTS {
            assert!(default_config_text().contains(&format!("{key}: ")), "{key}");
        }
    }
}

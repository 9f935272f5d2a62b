//! A PostgreSQL server of a test's own, for the team catalog's tests:
//! started in a temp folder, on a free loopback port, as an unprivileged
//! user (PostgreSQL refuses to run as root, and CI runs as root), and
//! stopped when the test ends; and project roots standing for the team's
//! machines.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::TestProject;

/// A PostgreSQL server of the test's own.
pub(crate) struct Pg {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub(crate) port: u16,
}

/// The folder of PostgreSQL's programs (`initdb`, `pg_ctl`, `createdb`,
/// `psql`): Debian's newest `/usr/lib/postgresql/N/bin` first (its `PATH`
/// has wrappers but no `initdb`), then `pg_config --bindir`, Homebrew's
/// newest `postgresql@N` keg, Homebrew's `bin` folders and `PATH`.
fn pg_bin() -> Option<PathBuf> {
    /// `parent/{prefix}VERSION/bin` for each such folder, newest first.
    fn newest_first(parent: &str, prefix: &str) -> Vec<PathBuf> {
        let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let version = name
                    .strip_prefix(prefix)?
                    .split('.')
                    .map(|n| n.parse().ok())
                    .collect::<Option<Vec<u32>>>()?;
                Some((version, e.path().join("bin")))
            })
            .collect();
        found.sort();
        found.into_iter().rev().map(|(_, bin)| bin).collect()
    }
    fn pg_config_bindir() -> Option<PathBuf> {
        let out = Command::new("pg_config")
            .arg("--bindir")
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }
    let path = std::env::var_os("PATH");
    newest_first("/usr/lib/postgresql", "")
        .into_iter()
        .chain(std::iter::once_with(pg_config_bindir).flatten())
        .chain(newest_first("/opt/homebrew/opt", "postgresql@"))
        .chain(newest_first("/usr/local/opt", "postgresql@"))
        .chain(["/opt/homebrew/bin", "/usr/local/bin"].map(PathBuf::from))
        .chain(path.iter().flat_map(std::env::split_paths))
        .find(|dir| dir.join("initdb").is_file())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Pg {
    pub(crate) fn start() -> Pg {
        let bin = pg_bin().unwrap_or_else(|| {
            panic!(
                "PostgreSQL is not installed (no initdb under /usr/lib/postgresql, Homebrew, \
                 `pg_config --bindir` or PATH): the team tests need a real server; \
                 `apt-get install -y postgresql` (.ci/run does) or `brew install postgresql@17`"
            )
        });
        let dir = tempfile::Builder::new()
            .prefix("logbook-pg-")
            .tempdir()
            .expect("temp dir");
        // The server's user must own its data folder and reach the temp dir.
        let _ = Command::new("chmod")
            .args(["0777"])
            .arg(dir.path())
            .status();
        let pg = Pg {
            dir,
            bin,
            port: free_port(),
        };
        let data = pg.data();
        let out = pg
            .as_server(&pg.bin.join("initdb"))
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data)
            .output()
            .expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.up();
        pg
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn as_server(&self, program: &Path) -> Command {
        if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    /// Starts (or restarts) the server and waits until it answers.
    pub(crate) fn up(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let out = self
            .as_server(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-o", &opts, "-l"])
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-t", "60", "start"])
            .stdin(Stdio::null())
            .output()
            .expect("run pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
        );
    }

    pub(crate) fn down(&self) {
        let _ = self
            .as_server(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(["-m", "fast", "-w", "stop"])
            .stdin(Stdio::null())
            .output();
    }

    /// A new database; its URL.
    pub(crate) fn database(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                name,
            ])
            .output()
            .expect("run createdb");
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!(
            "postgres://postgres@127.0.0.1:{}/{name}?sslmode=disable",
            self.port
        )
    }

    /// One SQL query's rows, tab-separated, through `psql`.
    pub(crate) fn sql(&self, db: &str, query: &str) -> Vec<String> {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", db, "-At", "-F", "\t", "-c", query])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {query}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        self.down();
    }
}

/// A project root standing for one machine of the team.
pub(crate) fn machine(url: &str, origin: &str) -> TestProject {
    let t = TestProject::new();
    t.write(
        "logbook.yaml",
        &format!("team_url: '{url}'\norigin: {origin}\n"),
    );
    t
}

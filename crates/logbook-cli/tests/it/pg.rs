//! A PostgreSQL server of a test's own, for the team catalog's tests:
//! started in a temp folder, on a free loopback port, as an unprivileged
//! user (PostgreSQL refuses to run as root, and CI runs as root), and
//! stopped when the test ends; and project roots standing for the team's
//! machines.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::harness::TestProject;
use crate::pg_bin::pg_bin;

/// A PostgreSQL server of the test's own.
pub(crate) struct Pg {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub(crate) port: u16,
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

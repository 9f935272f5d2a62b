//! A PostgreSQL server of the benchmark's own for the team rows, started as
//! the tests start theirs: in a temp folder, on a free loopback port, as an
//! unprivileged user when run as root, stopped on drop.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};

use crate::pg_bin::pg_bin;

pub(crate) struct Pg {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl Pg {
    pub(crate) fn start() -> Result<Pg> {
        let bin = pg_bin().context(
            "no PostgreSQL found (no initdb under /usr/lib/postgresql, Homebrew, \
             `pg_config --bindir` or PATH): apt-get install postgresql, or brew install postgresql@17",
        )?;
        let dir = tempfile::Builder::new()
            .prefix("logbook-bench-pg-")
            .tempdir()?;
        Command::new("chmod").arg("0777").arg(dir.path()).status()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let pg = Pg { dir, bin, port };
        let data = pg.dir.path().join("data");
        pg.check(
            pg.as_server(&pg.bin.join("initdb"))
                .args([
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "-D",
                ])
                .arg(&data),
        )?;
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c shared_buffers=256MB",
            pg.port,
            pg.dir.path().display()
        );
        pg.check(
            pg.as_server(&pg.bin.join("pg_ctl"))
                .arg("-D")
                .arg(&data)
                .args(["-o", &opts, "-l"])
                .arg(pg.dir.path().join("server.log"))
                .args(["-w", "-t", "60", "start"]),
        )?;
        pg.check(Command::new(pg.bin.join("createdb")).args([
            "-h",
            "127.0.0.1",
            "-p",
            &pg.port.to_string(),
            "-U",
            "postgres",
            "team",
        ]))?;
        Ok(pg)
    }

    pub(crate) fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/team?sslmode=disable",
            self.port
        )
    }

    /// `psql` connecting to the catalog's database to run `SELECT 1`, as
    /// `logbook` connects (no TLS, no `.psqlrc`): the floor of any command
    /// that opens a connection of its own.
    pub(crate) fn select_one(&self) -> Command {
        let mut c = Command::new(self.bin.join("psql"));
        c.args([
            "-X",
            "-Atq",
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
        ])
        .args(["-U", "postgres", "-d", "team", "-c", "SELECT 1"])
        .env("PGSSLMODE", "disable")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        c
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

    fn check(&self, c: &mut Command) -> Result<()> {
        let out = c.stdin(Stdio::null()).output()?;
        if !out.status.success() {
            bail!("{c:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let _ = self
            .as_server(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "fast", "-w", "stop"])
            .stdin(Stdio::null())
            .output();
    }
}

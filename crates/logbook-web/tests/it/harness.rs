//! A demo project, a server on 127.0.0.1:0 in a background thread, and a
//! raw HTTP/1.1 client that sends the request line exactly as given.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use logbook::Project;

/// A temp project filled by `logbook demo`, served on an ephemeral port.
pub(crate) struct Served {
    /// Kept so the folder lives as long as the server.
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) addr: SocketAddr,
    pub(crate) demo: logbook::ops::demo::Demo,
}

impl Served {
    /// The demo project, served without a token.
    pub(crate) fn demo() -> Served {
        Served::demo_with(None, |_| {})
    }

    /// The demo project, changed by `prepare` before the server starts.
    pub(crate) fn demo_with(token: Option<&str>, prepare: impl FnOnce(&Path)) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let demo = logbook::ops::demo::fill(&root).unwrap();
        prepare(&root);
        let project = Project::open(&root).unwrap();
        let server = logbook_web::Server::bind(
            project,
            logbook_web::Options {
                bind: "127.0.0.1:0".parse().unwrap(),
                token: token.map(str::to_string),
                ..Default::default()
            },
        )
        .unwrap();
        let addr = server.local_addr().unwrap();
        std::thread::spawn(move || server.run());
        Served {
            _dir: dir,
            root,
            addr,
            demo,
        }
    }

    pub(crate) fn project(&self) -> Project {
        Project::open(&self.root).unwrap()
    }

    pub(crate) fn outputs(&self) -> PathBuf {
        self.root.join("docs/agent-outputs")
    }

    /// `GET target` with a loopback Host header.
    pub(crate) fn get(&self, target: &str) -> Reply {
        self.request("GET", target, &[])
    }

    pub(crate) fn get_json(&self, target: &str) -> serde_json::Value {
        let r = self.get(target);
        assert_eq!(r.status, 200, "GET {target}: {}", r.text());
        serde_json::from_slice(&r.body).unwrap()
    }

    pub(crate) fn request(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("Connection: close\r\n");
        if method != "GET" && method != "HEAD" {
            head.push_str("Content-Length: 0\r\n");
        }
        head.push_str("\r\n");
        raw(self.addr, head.as_bytes())
    }
}

/// What came back.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `bytes` as they are and reads the whole response.
pub(crate) fn raw(addr: SocketAddr, bytes: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).unwrap();
    let mut buf = vec![];
    let _ = s.read_to_end(&mut buf);
    parse(&buf)
}

fn parse(buf: &[u8]) -> Reply {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(buf.len());
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let mut body = buf.get(split + 4..).unwrap_or_default().to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&b[..eol])
                .split(';')
                .next()
                .unwrap_or("0")
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 || b.len() < eol + 2 + size {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[(eol + 4 + size).min(b.len())..];
    }
}

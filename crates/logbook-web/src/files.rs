//! Run files over HTTP. The path is taken from the request as it was sent
//! (still percent-encoded), so an encoded separator or a double encoding is
//! seen and refused before anything is decoded; the decoded path is then
//! checked and resolved by `logbook::ops::run_files` (no `..`, no symlink
//! out of the run, whole-component comparison). Files are streamed, never
//! read whole, and leave with a sandboxing policy.

use std::io::Read;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use logbook::model::ids::RunRef;
use logbook::ops::query;
use logbook::ops::run_files;

use crate::AppState;
use crate::guard::{FILE_CSP, Refusal};

/// Escapes the encoded forms of `/`, `\`, NUL and `%` itself (double
/// encoding) that a plain path never needs.
const REFUSED_ENCODINGS: [&str; 4] = ["%2f", "%5c", "%00", "%25"];

/// Splits `{uuid}/files/{path}` (the raw, encoded rest of a request path
/// after its prefix) into the run id and the decoded file path.
pub(crate) fn split_raw(rest: &str) -> Result<(RunRef, String), Refusal> {
    let (id, path) = rest.split_once("/files/").ok_or(Refusal::NotFound)?;
    let id = crate::api::run_ref(id)?;
    let lower = path.to_ascii_lowercase();
    if REFUSED_ENCODINGS.iter().any(|e| lower.contains(e)) {
        return Err(Refusal::Denied);
    }
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| Refusal::Denied)?;
    // The library checks every part (`..`, `.`, backslash, NUL, absolute,
    // overlong); refusing them here too keeps the error the same for every
    // spelling.
    run_files::check_path(&decoded).map_err(|_| Refusal::Denied)?;
    Ok((id, decoded.into_owned()))
}

/// The content type a run file is sent with. Markup that a browser would
/// run (HTML, XML) goes as plain text; SVG keeps its type so `<img>` shows
/// it, and the sandbox policy keeps its scripts from running when opened
/// directly.
pub(crate) fn content_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "json" => "application/json",
        "md" | "markdown" | "txt" | "log" | "csv" | "tsv" | "yaml" | "yml" | "toml" | "rs"
        | "py" | "js" | "ts" | "sh" | "html" | "htm" | "xhtml" | "xml" | "css" => {
            "text/plain; charset=utf-8"
        }
        _ => "application/octet-stream",
    }
}

/// Whether a file is an image the file page shows inline.
pub(crate) fn is_image(path: &str) -> bool {
    content_type(path).starts_with("image/")
}

/// What a file request is answered with: this machine's file, or the
/// text the team catalog keeps of another machine's run's output.
enum Served {
    File(run_files::RunFile),
    Text(query::OutputText, String),
}

/// `GET /api/runs/{uuid}/files/{path}`: the file, read-only; `?download=1`
/// asks the browser to save it. Under `serve --team` the run is the one
/// the pages show: another machine's run gives the text the catalog keeps
/// of its output, or says where the file is.
pub(crate) async fn raw(State(state): State<Arc<AppState>>, uri: Uri) -> Result<Response, Refusal> {
    let rest = uri
        .path()
        .strip_prefix("/api/runs/")
        .ok_or(Refusal::NotFound)?;
    let (id, path) = split_raw(rest)?;
    let download = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "download=1"));
    let project = state.project.for_call();
    let scope = state.scope;
    let served = tokio::task::spawn_blocking(move || -> Result<_, Refusal> {
        let backend = query::backend(&project, scope)?;
        let shown = backend.show(&id)?;
        if let Some(text) = remote(&project, backend.as_ref(), &shown, &path)? {
            return Ok(Served::Text(text, path));
        }
        Ok(Served::File(run_files::open(
            &project,
            &shown.run.id,
            &path,
        )?))
    })
    .await
    .map_err(|_| Refusal::Internal)??;
    let opened = match served {
        Served::File(opened) => opened,
        Served::Text(text, path) => return Ok(remote_text(text, &path, download)),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let mut file = opened.file;
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx
                        .blocking_send(Ok(Bytes::copy_from_slice(&buf[..n])))
                        .is_err()
                    {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.blocking_send(Err(e));
                    break;
                }
            }
        }
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    let mut r = body.into_response();
    headers(
        &mut r,
        &opened.path,
        opened.size,
        content_type(&opened.path),
        download,
    );
    Ok(r)
}

/// The text of file `path` of another machine's run, from `backend` (the
/// one that answered `shown`); `None` for a run of this machine, whose
/// files are read from its folder. A file the catalog holds no text of is
/// refused with where it is, never looked for in this project.
pub(crate) fn remote(
    p: &logbook::Logbook,
    backend: &dyn query::Backend,
    shown: &query::Shown,
    path: &str,
) -> Result<Option<query::OutputText>, Refusal> {
    if !query::is_remote(p, shown) {
        return Ok(None);
    }
    match backend.output_text(&shown.run.id, path)? {
        Some(text) => Ok(Some(text)),
        None => Err(Refusal::Elsewhere {
            run: shown.run.id.to_string(),
            path: path.to_string(),
            origin: shown.origin.clone().unwrap_or_default(),
        }),
    }
}

/// The text the team catalog keeps of another machine's run's output, sent
/// as text whatever the file's name says (the catalog keeps UTF-8 text
/// only); `X-Logbook-Truncated` when the catalog kept only its start.
fn remote_text(text: query::OutputText, path: &str, download: bool) -> Response {
    let kind = match content_type(path) {
        t if t.starts_with("text/") || t == "application/json" => t,
        _ => "text/plain; charset=utf-8",
    };
    let size = text.text.len() as u64;
    let mut r = text.text.into_response();
    headers(&mut r, path, size, kind, download);
    if text.truncated {
        r.headers_mut()
            .insert("x-logbook-truncated", HeaderValue::from_static("true"));
    }
    r
}

/// The headers every run file leaves with: its type and length, the
/// sandboxing policy, no caching, and a file name when it is downloaded.
fn headers(r: &mut Response, path: &str, size: u64, kind: &'static str, download: bool) {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(FILE_CSP),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if download {
        let name: String = path
            .rsplit('/')
            .next()
            .unwrap_or("file")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
            h.insert(header::CONTENT_DISPOSITION, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "3f2c9d14-4b5e-4789-81ab-cdef12345678";

    #[test]
    fn encoded_separators_and_double_encoding_are_refused() {
        for bad in [
            "..%2fx",
            "a%2Fb",
            "a%5cb",
            "a%00b",
            "%252e%252e/x",
            "%2e%2e/x",
            "a/%2e%2e/b",
            "a\\b",
            "/etc/passwd",
            "%ff",
        ] {
            assert!(
                split_raw(&format!("{ID}/files/{bad}")).is_err(),
                "{bad} passed"
            );
        }
        assert_eq!(
            split_raw(&format!("{ID}/files/a%20b/c.md")).unwrap().1,
            "a b/c.md"
        );
        assert_eq!(
            split_raw("not-a-uuid/files/a.md").unwrap_err(),
            Refusal::NotFound
        );
    }
}

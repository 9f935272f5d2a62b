//! Resources: each run's output files (`logbook://runs/{uuid}/{path}`),
//! listed a page of runs at a time and read with the path rules of
//! `run output` (through [`logbook::ops::run::read_output`]), and the
//! active work session's resume summary (`logbook://session/resume`).

use rmcp::ErrorData;
use rmcp::model::{
    ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};

use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::{resume, run, run_files};

use crate::tool_error;

/// The URI of the active work session's resume summary.
pub(crate) const RESUME_URI: &str = "logbook://session/resume";
const RUNS_PREFIX: &str = "logbook://runs/";
/// How many runs one page of the resource listing covers.
const RUNS_PER_PAGE: usize = 20;

/// The resource template for run files.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("logbook://runs/{uuid}/{path}", "run file")
            .with_title("A file in a run's output folder")
            .with_description(
                "A file of run {uuid} (full UUID), {path} relative to its folder; the manifest and paths leading outside the folder are refused",
            ),
    ]
}

/// One page of resources: the resume summary first, then the registered
/// outputs of [`RUNS_PER_PAGE`] runs, newest first; the cursor is the
/// offset of the next page of runs.
pub(crate) fn list(p: &Logbook, cursor: Option<&str>) -> Result<ListResourcesResult, ErrorData> {
    let offset = match cursor {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            ErrorData::invalid_params(format!("cursor {c:?} is not one this server gave"), None)
        })?,
    };
    let mut resources = vec![];
    if offset == 0 {
        resources.push(
            Resource::new(RESUME_URI, "resume")
                .with_title("Where the active work session stands")
                .with_description(
                    "The resume summary of the active work session (the resume prompt's text)",
                )
                .with_mime_type("text/markdown"),
        );
    }
    let query = RunQuery {
        limit: Some(RUNS_PER_PAGE),
        offset,
        ..RunQuery::default()
    };
    // This machine only, on purpose: a resource is read from the run's
    // folder here (`read_output`), so listing another machine's runs would
    // offer URIs that cannot be read.
    let page = query::find(p, &query, FindOptions::new(Scope::Local)).map_err(tool_error)?;
    let now = p.clock.now();
    for hit in &page.hits {
        let entry = query::entry(&hit.run, now);
        // An output that is no longer the run's own is not offered: reading
        // it would be refused.
        let own = hit
            .run
            .manifest
            .outputs
            .iter()
            .filter(|o| run_files::unconfined(&hit.run.folder, &o.file).is_none());
        for o in own {
            resources.push(
                Resource::new(
                    format!("{RUNS_PREFIX}{}/{}", hit.run.id, encode(&o.file)),
                    o.file.clone(),
                )
                .with_title(format!("{} — {}", entry.label, o.file))
                .with_description(format!("{} ({})", o.description, o.output_type))
                .with_mime_type(mime(&o.file)),
            );
        }
    }
    let mut result = ListResourcesResult::with_all_items(resources);
    if page.more(offset) > 0 {
        result.next_cursor = Some((offset + page.hits.len()).to_string());
    }
    Ok(result)
}

/// Reads the resource `uri` names, as the files are now.
pub(crate) fn read(p: &Logbook, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri == RESUME_URI {
        let text = resume::context(p, None, resume::Detail::Brief, logbook::error::Face::Mcp)
            .map_err(tool_error)?;
        return Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/markdown"),
        ]));
    }
    let Some(rest) = uri.strip_prefix(RUNS_PREFIX) else {
        return Err(ErrorData::resource_not_found(
            format!(
                "no resource {uri}; resources are {RESUME_URI} and logbook://runs/{{uuid}}/{{path}}"
            ),
            None,
        ));
    };
    let Some((id, path)) = rest.split_once('/') else {
        return Err(ErrorData::invalid_params(
            format!("{uri} names no file; write logbook://runs/{{uuid}}/{{path}}"),
            None,
        ));
    };
    let path = decode(path).ok_or_else(|| {
        ErrorData::invalid_params(format!("{uri}: bad percent-encoding in the path"), None)
    })?;
    let file = run::read_output(p, id, &path).map_err(tool_error)?;
    let mime = mime(&file.file);
    let contents = match String::from_utf8(file.bytes) {
        Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
        Err(e) => ResourceContents::blob(base64(e.as_bytes()), uri)
            .with_mime_type("application/octet-stream"),
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

fn mime(file: &str) -> &'static str {
    let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("svg") => "image/svg+xml",
        _ => "text/plain",
    }
}

/// Percent-encodes what may not stand in a URI path (`/` is kept).
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc_4648() {
        assert_eq!(super::base64(b""), "");
        assert_eq!(super::base64(b"f"), "Zg==");
        assert_eq!(super::base64(b"fo"), "Zm8=");
        assert_eq!(super::base64(b"foo"), "Zm9v");
        assert_eq!(super::base64(b"foob"), "Zm9vYg==");
        assert_eq!(super::base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn paths_round_trip_through_uris() {
        for p in ["a.md", "sub dir/ü.md", "100%.txt", "a/b/c"] {
            assert_eq!(super::decode(&super::encode(p)).as_deref(), Some(p));
        }
        assert_eq!(super::decode("%zz"), None);
    }
}

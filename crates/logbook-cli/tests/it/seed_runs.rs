//! Runs as seed 000's own readers take them (issue 45): `latest-output`
//! answers from completed work unless asked, the required manifest fields
//! are filled, the bundle's `agent_outputs_folder` is followed, `execution`
//! keys come in the seed's order, a missing output file is "not found", and
//! `doctor` names what the seed's schema would reject.

use serde_json::json;

use crate::harness::TestProject;

#[test]
fn registering_an_output_file_that_does_not_exist_is_not_found() {
    let p = TestProject::new();
    let started = p.start_run("quill", "gather-needs", &[]);
    let id = started["session_id"].as_str().unwrap();
    let r = p.run(&[
        "run",
        "output",
        id,
        "notes/never-written.md",
        "--type",
        "document",
        "--description",
        "not there",
    ]);
    let err = r.not_found();
    assert!(err.contains("never-written.md not found"), "{err}");
    assert!(
        err.contains("write the file into the run folder first"),
        "{err}"
    );
    let manifest = p.json(&["run", "show", id]);
    assert_eq!(manifest["manifest"]["outputs"], json!([]));
}

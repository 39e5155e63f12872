//! A known difference's reason carries the run's own values: `{EXPR}` in `known_difference` is
//! measured and printed in the report, so the reason stays true when the model changes.

mod common;

use common::{reproduce_tiny as reproduce, tiny_repro_dir, TINY_REPRO as TINY};

#[test]
fn a_known_differences_values_are_this_runs() {
    let text = TINY
        .replace(
            "plot = { kind = \"bars\" }",
            "plot = { kind = \"bars\" }\nnotes = [\"handoff takes {us_per_op(handoff)} us here\"]",
        )
        .replace(
            "claim = \"us_per_op(handoff) < us_per_op(mild)\"",
            "claim = \"us_per_op(handoff) > us_per_op(mild)\"\n\
         known_difference = \"ours {us_per_op(handoff)} against {us_per_op(mild)} us, \
         {us_per_op(mild) / us_per_op(handoff)} times; {{not a value}}\"",
        );
    assert_ne!(text, TINY);
    let dir = tiny_repro_dir("known-values", &text);
    let o = reproduce(&dir, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rep/tiny.json")).unwrap()).unwrap();
    let file = &report["files"][0];
    let claim = &file["claims"][0];
    let reason = claim["verdict"]["reason"]
        .as_str()
        .unwrap_or_else(|| panic!("a known difference: {claim}"));
    // The values the claim's own detail prints are the ones the reason names.
    let detail = claim["detail"].as_str().unwrap();
    let (lhs, rest) = detail.split_once(" > ").unwrap();
    let rhs = rest.split_whitespace().next().unwrap();
    assert!(
        reason.starts_with(&format!("ours {lhs} against {rhs} us, ")),
        "{reason} / {detail}"
    );
    assert!(reason.ends_with(" times; {not a value}"), "{reason}");
    assert!(!reason.contains("us_per_op("), "{reason}");
    assert_eq!(
        file["notes"][0].as_str(),
        Some(format!("handoff takes {lhs} us here").as_str())
    );
    let md = std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap();
    assert!(md.contains(&format!("ours {lhs} against {rhs} us")), "{md}");
}

#[test]
fn a_value_the_file_cannot_have_exits_2_before_anything_runs() {
    for (reason, says) in [
        ("ours {us_per_op(nowhere)}", "unknown point `nowhere`"),
        ("ours {us_per_op(handoff)", "never closed"),
        ("ours } here", "`}}`"),
    ] {
        let text = TINY.replace(
            "claim = \"us_per_op(handoff) < us_per_op(mild)\"",
            &format!(
                "claim = \"us_per_op(handoff) < us_per_op(mild)\"\nknown_difference = \"{reason}\""
            ),
        );
        let dir = tiny_repro_dir("known-bad", &text);
        let o = reproduce(&dir, &[]);
        assert_eq!(o.status.code(), Some(2), "{reason}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("t.toml")
                && err.contains("reproduce.claim.0.known_difference")
                && err.contains(says),
            "{reason}: {err}"
        );
        assert!(!dir.join("rep/tiny.md").exists(), "{reason}");
    }
}

//! Tests of the KnowledgePulse model: skills, units, the ledger and the scores.

use serde_json::json;

use super::ledger::{Event, EventKind, event_path, rfc3339};
use super::scores::Ledger;
use super::skill::{derived_id, parse_skill, with_id, word_count};
use super::unit::{check, from_value, read_file, render, structure_score};
use super::{Rejection, check_id};

const SKILL: &str = "---\nname: pdf-tables\ndescription: Extract tables from PDF files into CSV. Use it when a user hands you a PDF report and asks for its numbers.\ndomain: documents\ntags: [pdf, csv]\nversion: 1.2\n---\n\n# PDF tables\n\n- Open the file with pdfplumber.\n";

#[test]
fn a_skill_reads_its_frontmatter_and_scores_its_structure() {
    let skill = parse_skill(SKILL).unwrap();
    assert_eq!(skill.name, "pdf-tables");
    assert_eq!(skill.domain.as_deref(), Some("documents"));
    assert_eq!(skill.tags, vec!["pdf", "csv"]);
    assert_eq!(skill.version.as_deref(), Some("1.2"));
    assert_eq!(skill.id, None);
    // Description ≥ 12 words, structured, domain, tags; the body has fewer than 50 words.
    assert_eq!(skill.structure, 0.9);
    assert_eq!(
        skill.id_at("skills/pdf/SKILL.md"),
        derived_id("skills/pdf/SKILL.md")
    );
    assert_eq!(derived_id("skills/pdf/SKILL.md").len(), "skill-".len() + 16);
}

#[test]
fn a_skill_with_only_name_and_description_scores_half() {
    let skill = parse_skill("---\nname: a\ndescription: b\n---\nshort\n").unwrap();
    assert_eq!(skill.structure, 0.5);
    assert_eq!(skill.tags, Vec::<String>::new());
}

#[test]
fn bad_skills_are_rejected_with_the_reason() {
    let invalid = |text: &str| match parse_skill(text) {
        Err(Rejection::Invalid(m)) => m,
        other => panic!("{other:?}"),
    };
    assert!(invalid("# no frontmatter\n").contains("has no YAML frontmatter"));
    assert_eq!(
        invalid("---\ndescription: d\n---\n"),
        "the SKILL.md frontmatter needs a non-empty `name`"
    );
    assert_eq!(
        invalid("---\nname: n\n---\n"),
        "the SKILL.md frontmatter needs a non-empty `description`"
    );
    assert_eq!(
        invalid("---\nname: n\ndescription: \"\"\n---\n"),
        "the SKILL.md frontmatter needs a non-empty `description`"
    );
    let big = format!(
        "---\nname: n\ndescription: d\n---\n{}",
        "x".repeat(256 * 1024)
    );
    assert!(invalid(&big).contains("at most 262144 (256 KiB)"));
    assert!(matches!(
        parse_skill("---\nname: n\ndescription: d\nid: ../../etc\n---\n"),
        Err(Rejection::BadId(_))
    ));
}

#[test]
fn an_id_is_added_as_the_first_frontmatter_line_keeping_line_endings() {
    assert_eq!(
        with_id("---\nname: a\n---\nbody\n", "skill-1"),
        "---\nid: skill-1\nname: a\n---\nbody\n"
    );
    assert_eq!(
        with_id("---\r\nname: a\r\n---\r\n", "skill-1"),
        "---\r\nid: skill-1\r\nname: a\r\n---\r\n"
    );
    let added = with_id(SKILL, "skill-x");
    assert_eq!(parse_skill(&added).unwrap().id.as_deref(), Some("skill-x"));
}

#[test]
fn ids_that_could_escape_their_folder_are_refused() {
    for bad in ["", "../x", "a/b", "a..b", ".hidden", "-x", "a b", "é"] {
        assert!(check_id(bad).is_err(), "{bad}");
    }
    for good in ["ku-1", "skill-0a1b", "A.b_c-9"] {
        assert_eq!(check_id(good), Ok(()), "{good}");
    }
}

#[test]
fn japanese_counts_one_word_per_two_characters() {
    assert_eq!(word_count("two words"), 2);
    assert_eq!(word_count("日本語の文章です"), 4);
    assert_eq!(word_count("PDF の表を抽出"), 3);
}

fn trace() -> serde_json::Value {
    json!({
        "schema_version": "1.0",
        "type": "ReasoningTrace",
        "id": "ku-trace-1",
        "title": "Find a flaky test",
        "summary": "Bisect the seed to find the order-dependent test.",
        "domain": "debugging",
        "tags": ["testing"],
        "task": "A test fails one run in ten.",
        "steps": [{"thought": "Run with a fixed seed", "action": "pytest -p randomly", "observation": "fails with seed 7"}],
        "outcome": "The test shared a temp folder."
    })
}

#[test]
fn a_valid_unit_passes_and_scores_its_optional_fields() {
    assert_eq!(check(&trace()), Ok(()));
    // tags filled; author, context, lessons missing: 0.5 + 0.125.
    assert_eq!(structure_score(&trace()), 0.625);
    let mut full = trace();
    full["author"] = json!("ana");
    full["context"] = json!("CI only");
    full["lessons"] = json!(["Give each test its own folder"]);
    assert_eq!(structure_score(&full), 1.0);
}

#[test]
fn schema_errors_name_the_pointer_and_the_rule() {
    let err = |v: serde_json::Value| match check(&v) {
        Err(Rejection::Invalid(m)) => m,
        other => panic!("{other:?}"),
    };
    let mut no_steps = trace();
    no_steps["steps"] = json!([]);
    assert_eq!(
        err(no_steps),
        "the unit does not match schema 1.0 at `/steps`: [] has less than 1 item (rule `minItems`)"
    );
    let mut missing = trace();
    missing.as_object_mut().unwrap().remove("outcome");
    assert_eq!(
        err(missing),
        "the unit does not match schema 1.0 at the top level (``): \"outcome\" is a required property (rule `required`)"
    );
    let mut wrong = trace();
    wrong["steps"][0]["thought"] = json!(3);
    assert_eq!(
        err(wrong),
        "the unit does not match schema 1.0 at `/steps/0/thought`: 3 is not of type \"string\" (rule `type`)"
    );
    let mut extra = trace();
    extra["colour"] = json!("red");
    assert!(err(extra).contains("at the top level (``): Unevaluated properties are not allowed ('colour' was unexpected) (rule `unevaluatedProperties`)"));
    let mut kind = trace();
    kind["type"] = json!("Recipe");
    assert_eq!(
        err(kind),
        "unknown unit type `Recipe`; the types are ReasoningTrace, ToolCallPattern, ExpertSOP"
    );
    let mut version = trace();
    version["schema_version"] = json!("2.0");
    assert_eq!(
        err(version),
        "unknown schema_version `2.0`; this server knows 1.0"
    );
    let mut id = trace();
    id["id"] = json!("../../outside");
    assert!(matches!(check(&id), Err(Rejection::BadId(_))));
}

#[test]
fn a_unit_file_round_trips_through_its_json_block() {
    let unit = from_value(trace()).unwrap();
    let text = render(&unit);
    assert!(text.starts_with("---\nkp: knowledge-unit\nid: \"ku-trace-1\"\ntype: \"ReasoningTrace\"\ndomain: \"debugging\"\nschema_version: \"1.0\"\ntitle: \"Find a flaky test\"\ntags: [\"testing\"]\n---\n\n# Find a flaky test\n"));
    assert!(text.contains("## Steps\n\n1. Run with a fixed seed Action: pytest -p randomly Observation: fails with seed 7\n"));
    let back = read_file(&text).unwrap();
    assert_eq!(back, unit);
    // The frontmatter is YAML the parser reads as the filters expect.
    let parsed = crate::parse::parse(&text);
    assert_eq!(parsed.frontmatter.unwrap()["type"], json!("ReasoningTrace"));
}

#[test]
fn sop_and_pattern_units_validate_and_render() {
    let sop = json!({
        "schema_version": "1.0", "type": "ExpertSOP", "id": "ku-sop",
        "title": "Rotate a key", "summary": "Rotate the signing key.", "domain": "security",
        "goal": "A new key in use", "prerequisites": ["admin access"],
        "steps": ["Create the key", "Deploy it"], "checks": ["Old tokens fail"]
    });
    let unit = from_value(sop).unwrap();
    assert_eq!(unit.structure, 0.75);
    assert_eq!(read_file(&render(&unit)).unwrap(), unit);
    let pattern = json!({
        "schema_version": "1.0", "type": "ToolCallPattern", "id": "ku-pat",
        "title": "Search then read", "summary": "Search, then read by pointer.", "domain": "folio",
        "tool": "kb_search", "when_to_use": "Before quoting a note",
        "arguments": {"query": {"type": "string", "required": true}},
        "example_calls": [{"arguments": {"query": "ladder"}, "note": "then kb_read"}],
        "pitfalls": ["The index may lag"]
    });
    let unit = from_value(pattern).unwrap();
    assert_eq!(unit.structure, 0.75);
    assert_eq!(read_file(&render(&unit)).unwrap(), unit);
}

#[test]
fn rfc3339_formats_milliseconds_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(rfc3339(1_780_271_941_123), "2026-05-31T23:59:01.123Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
}

fn event(
    kind: EventKind,
    item: &str,
    agent: &str,
    valid: Option<bool>,
    time: &str,
) -> (String, Event) {
    let e = Event {
        event: kind,
        item: item.into(),
        item_kind: "unit".into(),
        agent: agent.into(),
        valid,
        feedback: None,
        time: time.into(),
    };
    let bytes = e.to_bytes();
    (event_path(&e, 1, &bytes), e)
}

#[test]
fn an_event_file_round_trips_and_is_named_by_item_time_and_hash() {
    let (path, e) = event(
        EventKind::Validation,
        "ku-1",
        "bob",
        Some(true),
        "2026-01-01T00:00:00.000Z",
    );
    assert!(path.starts_with("knowledge/ledger/ku-1/0000000000001-"));
    assert!(path.ends_with(".json"));
    assert_eq!(Event::from_bytes(&e.to_bytes()).unwrap(), e);
}

#[test]
fn scores_follow_the_documented_formulas() {
    use EventKind::*;
    let ledger = Ledger::from_events(vec![
        event(
            Contribution,
            "u1",
            "alice",
            None,
            "2026-01-01T00:00:00.000Z",
        ),
        event(
            Contribution,
            "u2",
            "alice",
            None,
            "2026-01-01T00:00:01.000Z",
        ),
        event(
            Contribution,
            "u3",
            "carol",
            None,
            "2026-01-01T00:00:02.000Z",
        ),
        // Bob changes his mind on u1: the later verdict counts.
        event(
            Validation,
            "u1",
            "bob",
            Some(true),
            "2026-01-02T00:00:00.000Z",
        ),
        event(
            Validation,
            "u1",
            "bob",
            Some(false),
            "2026-01-03T00:00:00.000Z",
        ),
        event(
            Validation,
            "u2",
            "bob",
            Some(true),
            "2026-01-03T00:00:00.000Z",
        ),
        // Alice's verdict on her own unit does not count.
        event(
            Validation,
            "u2",
            "alice",
            Some(false),
            "2026-01-04T00:00:00.000Z",
        ),
        // Carol has one positive verdict on u3 (from alice): r(carol) = 2/3.
        event(
            Validation,
            "u3",
            "alice",
            Some(true),
            "2026-01-04T00:00:00.000Z",
        ),
        event(
            Validation,
            "u2",
            "carol",
            Some(true),
            "2026-01-05T00:00:00.000Z",
        ),
    ]);
    // alice: P = 2 (bob on u2, carol on u2), N = 1 (bob on u1): (2 + 1) / (3 + 2).
    let alice = ledger.reputation("alice");
    assert_eq!(
        (
            alice.score,
            alice.contributions,
            alice.positive,
            alice.negative
        ),
        (0.6, 2, 2, 1)
    );
    assert_eq!(ledger.reputation("bob").score, 0.5);
    assert_eq!(ledger.reputation("bob").contributions, 0);
    assert_eq!(ledger.reputation("carol").score, 0.6667);
    // u1: bob (0.5) says false; s = 1: (2·1 + 0) / (2 + 0.5) = 0.8.
    assert_eq!(ledger.quality("u1", 1.0), 0.8);
    // u2: bob (0.5) and carol (2/3) say true; s = 0.5: (1 + 0.5 + 2/3) / (2 + 0.5 + 2/3) = 0.6842.
    assert_eq!(ledger.quality("u2", 0.5), 0.6842);
    // An item nobody judged keeps its structural score.
    assert_eq!(ledger.quality("u9", 0.625), 0.625);
    assert_eq!(ledger.contributor("u3"), Some("carol"));
}

//! Tests of the KnowledgePulse tools: contributions, searches, verdicts, reputation,
//! refusals that write nothing, and scores rebuilt from the files alone.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{err, ok, snapshot};
use crate::host::knowledge::{
    ContributeKnowledgeArgs, ContributeSkillArgs, PrivateAccess, ReputationArgs,
    SearchKnowledgeArgs, SearchSkillArgs, ValidateArgs,
};
use crate::host::{Host, Options};
use crate::knowledge::Visibility;

const SKILL: &str = "---\nname: csv-cleanup\ndescription: Clean messy CSV exports before analysis so that every column has one type and one unit of measure.\ndomain: data\ntags: [csv, cleaning]\n---\n\n# CSV cleanup\n\n- Trim spaces and normalise decimal commas.\n";

fn open(root: &std::path::Path, private: &std::path::Path) -> Arc<Host> {
    let kb = Host::open(Options {
        root: root.to_path_buf(),
        db: None,
        allow_writes: true,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap()
    .with_private_dir(private.to_path_buf());
    let last = kb.reindex_blocking(false).unwrap();
    assert!(last.ok, "{last:?}");
    Arc::new(kb)
}

fn unit(id: &str) -> serde_json::Map<String, Value> {
    json!({
        "schema_version": "1.0", "type": "ExpertSOP", "id": id,
        "title": "Restore a database backup", "summary": "Restore last night's backup into staging.",
        "domain": "operations", "tags": ["backup"],
        "goal": "Staging holds last night's data", "steps": ["Fetch the dump", "Load it"],
        "checks": ["Row counts match"]
    })
    .as_object()
    .unwrap()
    .clone()
}

#[test]
fn contribute_search_validate_and_rebuild_from_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    let private = dir.path().join("private");
    std::fs::create_dir_all(&root).unwrap();
    let kb = open(&root, &private);

    let skill = ok(kb.kp_contribute_skill(
        "alice",
        &ContributeSkillArgs {
            skill_md_content: SKILL.into(),
            visibility: Some(Visibility::Org),
        },
        PrivateAccess::Owner,
    ));
    let skill_id = skill["id"].as_str().unwrap().to_string();
    assert_eq!(skill["path"], json!("skills/csv-cleanup/SKILL.md"));
    // Description ≥ 12 words, structured, domain, tags; a short body: 0.9.
    assert_eq!(skill["quality_score"], json!(0.9));
    let written = std::fs::read_to_string(root.join("skills/csv-cleanup/SKILL.md")).unwrap();
    assert_eq!(
        written,
        SKILL.replacen("---\n", &format!("---\nid: {skill_id}\n"), 1)
    );

    let org = ok(kb.kp_contribute_knowledge(
        "alice",
        &ContributeKnowledgeArgs {
            unit: unit("ku-restore"),
            visibility: Visibility::Org,
        },
        PrivateAccess::Owner,
    ));
    // tags and checks of four optional fields: 0.75.
    assert_eq!(
        org,
        json!({"id": "ku-restore", "quality_score": 0.75, "visibility": "org", "path": "knowledge/units/ku-restore.md"})
    );
    let private_unit = ok(kb.kp_contribute_knowledge(
        "alice",
        &ContributeKnowledgeArgs {
            unit: unit("ku-private"),
            visibility: Visibility::Private,
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(private_unit["path"], json!("knowledge/units/ku-private.md"));
    assert!(!root.join("knowledge/units/ku-private.md").exists());
    assert!(private.join("knowledge/units/ku-private.md").is_file());

    let search = |q: &str| {
        ok(kb.kp_search_knowledge(
            &SearchKnowledgeArgs {
                query: q.into(),
                ..SearchKnowledgeArgs::default()
            },
            PrivateAccess::Owner,
        ))["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}:{}:{}",
                    r["id"].as_str().unwrap(),
                    r["visibility"].as_str().unwrap(),
                    r["quality_score"]
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        search("database backup"),
        ["ku-restore:org:0.75", "ku-private:private:0.75"]
    );
    let skills = ok(kb.kp_search_skill(
        &SearchSkillArgs {
            query: "CSV columns".into(),
            ..SearchSkillArgs::default()
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(skills["results"][0]["id"], json!(skill_id));
    assert_eq!(
        skills["results"][0]["uri"],
        json!("kb://doc/skills/csv-cleanup/SKILL.md")
    );
    assert_eq!(skills["results"][0]["content"], json!(written));

    // Bob's verdicts: r(bob) = 0.5; ku-restore: (2·0.75 + 0) / 2.5 = 0.6.
    assert_eq!(
        ok(kb.kp_validate_unit(
            "bob",
            &ValidateArgs {
                unit_id: "ku-restore".into(),
                valid: false,
                feedback: Some("step 2 is vague".into())
            },
            PrivateAccess::Owner
        )),
        json!({"validated": true, "quality_score": 0.6})
    );
    // The skill: (2·0.9 + 0.5) / 2.5 = 0.92.
    assert_eq!(
        ok(kb.kp_validate_unit(
            "bob",
            &ValidateArgs {
                unit_id: skill_id.clone(),
                valid: true,
                feedback: None
            },
            PrivateAccess::Owner
        )),
        json!({"validated": true, "quality_score": 0.92})
    );
    // alice: P = 1, N = 1: 2 / 4.
    assert_eq!(
        ok(kb.kp_reputation(
            &ReputationArgs {
                agent_id: "alice".into()
            },
            PrivateAccess::Owner
        )),
        json!({"score": 0.5, "contributions": 3, "positive_verdicts": 1, "negative_verdicts": 1})
    );
    // Below the default min_quality of 0.75 now; found with a lower one.
    assert_eq!(search("database backup"), ["ku-private:private:0.75"]);

    // Refusals write nothing.
    let before = snapshot(&root);
    let private_before = snapshot(&private);
    assert_eq!(
        err(kb.kp_validate_unit(
            "alice",
            &ValidateArgs {
                unit_id: "ku-restore".into(),
                valid: true,
                feedback: None
            },
            PrivateAccess::Owner
        ))["code"],
        json!("PERMISSION_DENIED")
    );
    assert_eq!(
        err(kb.kp_validate_unit(
            "bob",
            &ValidateArgs {
                unit_id: "ku-nope".into(),
                valid: true,
                feedback: None
            },
            PrivateAccess::Owner
        ))["code"],
        json!("NOT_FOUND")
    );
    // Feedback longer than a ledger event is read would be written and never counted.
    assert_eq!(
        err(kb.kp_validate_unit(
            "bob",
            &ValidateArgs {
                unit_id: "ku-restore".into(),
                valid: false,
                feedback: Some("x".repeat(70_000))
            },
            PrivateAccess::Owner
        )),
        json!({"code": "INVALID_ARGUMENT", "message": "`feedback` is 70000 bytes; a verdict takes at most 16384"})
    );
    assert_eq!(
        err(kb.kp_contribute_knowledge(
            "alice",
            &ContributeKnowledgeArgs {
                unit: unit("ku-restore"),
                visibility: Visibility::Org
            },
            PrivateAccess::Owner
        ))["code"],
        json!("ALREADY_EXISTS")
    );
    assert_eq!(
        err(kb.kp_contribute_knowledge(
            "alice",
            &ContributeKnowledgeArgs {
                unit: unit("ku-private"),
                visibility: Visibility::Org
            },
            PrivateAccess::Owner
        ))["code"],
        json!("ALREADY_EXISTS")
    );
    assert_eq!(
        err(kb.kp_contribute_skill(
            "alice",
            &ContributeSkillArgs {
                skill_md_content: SKILL.into(),
                visibility: Some(Visibility::Org)
            },
            PrivateAccess::Owner
        ))["code"],
        json!("ALREADY_EXISTS")
    );
    let network = err(kb.kp_contribute_skill(
        "alice",
        &ContributeSkillArgs {
            skill_md_content: SKILL.into(),
            visibility: None,
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(network["code"], json!("NOT_CONFIGURED"));
    assert!(
        network["message"]
            .as_str()
            .unwrap()
            .contains("[knowledge] registry")
    );
    assert_eq!(
        err(kb.kp_contribute_knowledge(
            "alice",
            &ContributeKnowledgeArgs {
                unit: unit("../escape"),
                visibility: Visibility::Org
            },
            PrivateAccess::Owner
        ))["code"],
        json!("INVALID_PATH")
    );
    assert_eq!(
        err(kb.kp_search_skill(
            &SearchSkillArgs {
                query: "x".into(),
                limit: Some(21),
                ..SearchSkillArgs::default()
            },
            PrivateAccess::Owner
        ))["code"],
        json!("INVALID_ARGUMENT")
    );
    assert_eq!(
        err(kb.kp_search_knowledge(
            &SearchKnowledgeArgs {
                query: "x".into(),
                min_quality: Some(1.5),
                ..SearchKnowledgeArgs::default()
            },
            PrivateAccess::Owner
        ))["code"],
        json!("INVALID_ARGUMENT")
    );
    assert_eq!(snapshot(&root), before);
    assert_eq!(snapshot(&private), private_before);

    // Delete the derived index and reopen: the same answers from the files alone.
    let low = |kb: &Host| {
        ok(kb.kp_search_knowledge(
            &SearchKnowledgeArgs {
                query: "database backup".into(),
                min_quality: Some(0.0),
                ..SearchKnowledgeArgs::default()
            },
            PrivateAccess::Owner,
        ))
    };
    let old = low(&kb);
    drop(kb);
    std::fs::remove_dir_all(root.join(".folio")).unwrap();
    std::fs::remove_dir_all(private.join(".folio")).unwrap();
    let kb = open(&root, &private);
    assert_eq!(low(&kb), old);
    assert_eq!(
        ok(kb.kp_reputation(
            &ReputationArgs {
                agent_id: "alice".into()
            },
            PrivateAccess::Owner
        ))["score"],
        json!(0.5)
    );
}

#[test]
fn private_items_do_not_exist_for_others() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    let private = dir.path().join("private");
    std::fs::create_dir_all(&root).unwrap();
    let kb = open(&root, &private);
    let contribute = |access| {
        kb.kp_contribute_skill(
            "alice",
            &ContributeSkillArgs {
                skill_md_content: SKILL.into(),
                visibility: Some(Visibility::Private),
            },
            access,
        )
    };
    let refused = err(contribute(PrivateAccess::Others));
    assert_eq!(refused["code"], json!("PERMISSION_DENIED"));
    assert!(!private.exists(), "nothing written");
    let id = ok(contribute(PrivateAccess::Owner))["id"].clone();
    let search = |access| {
        ok(kb.kp_search_skill(
            &SearchSkillArgs {
                query: "CSV columns".into(),
                ..SearchSkillArgs::default()
            },
            access,
        ))["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(search(PrivateAccess::Owner), std::slice::from_ref(&id));
    assert_eq!(search(PrivateAccess::Others), Vec::<Value>::new());
    let contributions = |access| {
        ok(kb.kp_reputation(
            &ReputationArgs {
                agent_id: "alice".into(),
            },
            access,
        ))["contributions"]
            .clone()
    };
    assert_eq!(contributions(PrivateAccess::Owner), json!(1));
    assert_eq!(contributions(PrivateAccess::Others), json!(0));
    let verdict = err(kb.kp_validate_unit(
        "bob",
        &ValidateArgs {
            unit_id: id.as_str().unwrap().into(),
            valid: false,
            feedback: None,
        },
        PrivateAccess::Others,
    ));
    assert_eq!(verdict["code"], json!("NOT_FOUND"));
}

#[test]
fn writes_need_allow_writes() {
    let dir = tempfile::tempdir().unwrap();
    let kb = Host::open(Options {
        root: dir.path().to_path_buf(),
        db: None,
        allow_writes: false,
        embed: Err("off".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap()
    .with_private_dir(dir.path().join("private-outside"));
    assert_eq!(
        err(kb.kp_contribute_skill(
            "a",
            &ContributeSkillArgs {
                skill_md_content: SKILL.into(),
                visibility: Some(Visibility::Org)
            },
            PrivateAccess::Owner
        ))["code"],
        json!("PERMISSION_DENIED")
    );
}

#[test]
fn hand_written_skills_and_units_are_found_like_contributed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(root.join("tools/pdf")).unwrap();
    std::fs::create_dir_all(root.join("knowledge/units")).unwrap();
    std::fs::write(
        root.join("tools/pdf/SKILL.md"),
        SKILL.replace("csv-cleanup", "pdf-helper"),
    )
    .unwrap();
    let unit = crate::knowledge::unit::from_value(Value::Object(unit("ku-by-hand"))).unwrap();
    std::fs::write(
        root.join("knowledge/units/ku-by-hand.md"),
        crate::knowledge::unit::render(&unit),
    )
    .unwrap();
    let kb = open(&root, &dir.path().join("private"));
    let skills = ok(kb.kp_search_skill(
        &SearchSkillArgs {
            query: "CSV exports".into(),
            ..SearchSkillArgs::default()
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(
        skills["results"][0]["id"],
        json!(crate::knowledge::skill::derived_id("tools/pdf/SKILL.md"))
    );
    assert_eq!(skills["results"][0]["name"], json!("pdf-helper"));
    let units = ok(kb.kp_search_knowledge(
        &SearchKnowledgeArgs {
            query: "restore staging".into(),
            types: vec![crate::host::knowledge::UnitType::ExpertSOP],
            domain: Some("operations".into()),
            ..SearchKnowledgeArgs::default()
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(units["results"][0]["id"], json!("ku-by-hand"));
    assert_eq!(units["results"][0]["quality_score"], json!(0.75));
    // No contribution event: nobody is its contributor, so anyone may judge it.
    assert_eq!(
        ok(kb.kp_validate_unit(
            "bob",
            &ValidateArgs {
                unit_id: "ku-by-hand".into(),
                valid: true,
                feedback: None
            },
            PrivateAccess::Owner
        )),
        json!({"validated": true, "quality_score": 0.8})
    );
}

/// A registry that answers from a function and records what it was asked.
#[derive(Debug)]
struct FakeRegistry {
    calls: std::sync::Mutex<Vec<(String, Value)>>,
    answer: fn(&str, &Value) -> Result<Value, crate::host::registry::RegistryError>,
}

impl crate::host::registry::Registry for FakeRegistry {
    fn location(&self) -> &str {
        "http://registry.test/mcp"
    }

    fn call(
        &self,
        tool: &str,
        arguments: Value,
    ) -> Result<Value, crate::host::registry::RegistryError> {
        let answer = (self.answer)(tool, &arguments);
        self.calls
            .lock()
            .unwrap()
            .push((tool.to_string(), arguments));
        answer
    }
}

fn open_with(
    root: &std::path::Path,
    private: &std::path::Path,
    network: crate::host::registry::KnowledgeNetwork,
) -> Arc<Host> {
    let kb = Host::open(Options {
        root: root.to_path_buf(),
        db: None,
        allow_writes: true,
        embed: Err("embeddings are off in this test".into()),
        fetch: Default::default(),
        rerank: Ok(None),
    })
    .unwrap()
    .with_private_dir(private.to_path_buf())
    .with_knowledge_network(network);
    kb.reindex_blocking(false).unwrap();
    Arc::new(kb)
}

#[test]
fn a_registry_keeps_network_contributions_in_its_knowledge_base_as_the_callers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(&root).unwrap();
    // The registry's user has a private skill from before: no caller of the registry sees it.
    let private = dir.path().join("private");
    {
        let before = open(&root, &private);
        ok(before.kp_contribute_skill(
            "owner",
            &ContributeSkillArgs {
                skill_md_content: SKILL.replace("csv-cleanup", "csv-secret"),
                visibility: Some(Visibility::Private),
            },
            PrivateAccess::Owner,
        ));
    }
    let private_files = snapshot(&private);
    let kb = open_with(
        &root,
        &private,
        crate::host::registry::KnowledgeNetwork::Serve,
    );
    let out = ok(kb.kp_contribute_skill(
        "alice",
        &ContributeSkillArgs {
            skill_md_content: SKILL.into(),
            visibility: None,
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(
        out,
        json!({"id": "skill-a6afa92c1af95cd1", "quality_score": 0.9, "visibility": "network",
               "path": "skills/csv-cleanup/SKILL.md"})
    );
    assert!(root.join("skills/csv-cleanup/SKILL.md").is_file());
    let found = ok(kb.kp_search_skill(
        &SearchSkillArgs {
            query: "CSV".into(),
            min_quality: Some(0.0),
            ..Default::default()
        },
        PrivateAccess::Owner,
    ));
    let hits: Vec<(&Value, &Value, &Value)> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (&h["id"], &h["visibility"], &h["origin"]))
        .collect();
    assert_eq!(
        hits,
        vec![(
            &json!("skill-a6afa92c1af95cd1"),
            &json!("org"),
            &json!("local")
        )]
    );
    let refused = err(kb.kp_contribute_skill(
        "mallory",
        &ContributeSkillArgs {
            skill_md_content: SKILL.replace("csv-cleanup", "csv-other"),
            visibility: Some(Visibility::Private),
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(refused["code"], json!("INVALID_ARGUMENT"));
    assert_eq!(snapshot(&private), private_files);
    assert_eq!(
        ok(kb.kp_reputation(
            &ReputationArgs {
                agent_id: "alice".into()
            },
            PrivateAccess::Owner
        )),
        json!({"score": 0.5, "contributions": 1, "positive_verdicts": 0, "negative_verdicts": 0})
    );
    assert_eq!(
        err(kb.kp_validate_unit(
            "alice",
            &ValidateArgs {
                unit_id: "skill-a6afa92c1af95cd1".into(),
                valid: true,
                feedback: None
            },
            PrivateAccess::Owner
        ))["code"],
        json!("PERMISSION_DENIED")
    );
}

#[test]
fn a_client_checks_input_before_the_registry_and_writes_nothing_when_it_fails() {
    use crate::host::registry::{KnowledgeNetwork, RegistryError};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(&root).unwrap();
    let registry = Arc::new(FakeRegistry {
        calls: Default::default(),
        answer: |_, _| Err(RegistryError::Unavailable("connection refused".into())),
    });
    let kb = open_with(
        &root,
        &dir.path().join("private"),
        KnowledgeNetwork::Client(registry.clone()),
    );
    let before = snapshot(&root);

    // Bad input never leaves the machine.
    assert_eq!(
        err(kb.kp_contribute_skill(
            "alice",
            &ContributeSkillArgs {
                skill_md_content: "no frontmatter".into(),
                visibility: None,
            },
            PrivateAccess::Owner,
        ))["code"],
        json!("INVALID_ARGUMENT")
    );
    assert!(registry.calls.lock().unwrap().is_empty());

    assert_eq!(
        err(kb.kp_contribute_skill(
            "alice",
            &ContributeSkillArgs {
                skill_md_content: SKILL.into(),
                visibility: Some(Visibility::Network),
            },
            PrivateAccess::Owner,
        )),
        json!({"code": "UNAVAILABLE", "message": "the KnowledgePulse registry at http://registry.test/mcp is unavailable (connection refused); nothing was written here, but a request that timed out may have reached the registry (a retried contribution then answers ALREADY_EXISTS)"})
    );
    assert_eq!(
        registry.calls.lock().unwrap()[0],
        (
            "kp_contribute_skill".to_string(),
            json!({"skill_md_content": SKILL, "visibility": "network"})
        )
    );
    assert_eq!(snapshot(&root), before);
    assert!(!dir.path().join("private").exists());

    let found = ok(kb.kp_search_skill(
        &SearchSkillArgs {
            query: "csv".into(),
            ..Default::default()
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(found["results"], json!([]));
    assert_eq!(
        found["registry_error"],
        json!({"code": "UNAVAILABLE", "message": "the KnowledgePulse registry at http://registry.test/mcp is unavailable (connection refused); nothing was written here, but a request that timed out may have reached the registry (a retried contribution then answers ALREADY_EXISTS)"})
    );

    // An id this knowledge base holds already is refused before the registry is asked:
    // the registry's copy would be hidden behind the local one here.
    let local = ok(kb.kp_contribute_skill(
        "alice",
        &ContributeSkillArgs {
            skill_md_content: SKILL.into(),
            visibility: Some(Visibility::Org),
        },
        PrivateAccess::Owner,
    ));
    let calls = registry.calls.lock().unwrap().len();
    assert_eq!(
        err(kb.kp_contribute_skill(
            "alice",
            &ContributeSkillArgs {
                skill_md_content: SKILL.into(),
                visibility: Some(Visibility::Network),
            },
            PrivateAccess::Owner,
        )),
        json!({"code": "ALREADY_EXISTS", "message": format!(
            "a skill or unit with id `{}` already exists in this knowledge base; contribute it to the registry under another id (nothing was sent)",
            local["id"].as_str().unwrap())})
    );
    assert_eq!(registry.calls.lock().unwrap().len(), calls);
}

#[test]
fn a_registry_answer_of_the_wrong_shape_is_unavailable() {
    use crate::host::registry::KnowledgeNetwork;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(&root).unwrap();
    let registry = Arc::new(FakeRegistry {
        calls: Default::default(),
        answer: |_, _| Ok(json!({"unexpected": true})),
    });
    let kb = open_with(
        &root,
        &dir.path().join("private"),
        KnowledgeNetwork::Client(registry),
    );
    let e = err(kb.kp_validate_unit(
        "alice",
        &ValidateArgs {
            unit_id: "ku-remote".into(),
            valid: true,
            feedback: None,
        },
        PrivateAccess::Owner,
    ));
    assert_eq!(e["code"], json!("UNAVAILABLE"));
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("the KnowledgePulse registry at http://registry.test/mcp answered `kp_validate_unit` with an unexpected shape (missing field `validated`"),
        "{e}"
    );
}

/// A registry's answers are not believed blindly: search hits with a quality score out
/// of [0, 1], a path that climbs out or is absolute, or an id already given are dropped;
/// a verdict answered as not validated, or with an impossible score, is UNAVAILABLE.
#[test]
fn a_registrys_impossible_answers_are_dropped_or_refused() {
    use crate::host::registry::KnowledgeNetwork;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("kb");
    std::fs::create_dir_all(&root).unwrap();
    fn hit(id: &str, quality: f64, path: &str) -> Value {
        json!({"id": id, "name": id, "description": "d", "domain": null, "tags": [],
               "quality_score": quality, "content": "c", "visibility": "network", "path": path})
    }
    let registry = Arc::new(FakeRegistry {
        calls: Default::default(),
        answer: |tool, _| {
            Ok(match tool {
                "kp_search_skill" => json!({"results": [
                    hit("skill-good", 0.8, "skills/good/SKILL.md"),
                    hit("skill-good", 0.8, "skills/good/SKILL.md"),
                    hit("skill-loud", 5.0, "skills/loud/SKILL.md"),
                    hit("skill-climb", 0.8, "../../etc/passwd"),
                    hit("skill-root", 0.8, "/etc/passwd"),
                ], "mode": "lexical", "indexing": false}),
                _ => json!({"validated": false, "quality_score": 99.0}),
            })
        },
    });
    let kb = open_with(
        &root,
        &dir.path().join("private"),
        KnowledgeNetwork::Client(registry),
    );
    let found = ok(kb.kp_search_skill(
        &SearchSkillArgs {
            query: "anything".into(),
            min_quality: Some(0.0),
            ..Default::default()
        },
        PrivateAccess::Owner,
    ));
    let ids: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["skill-good"]);
    assert_eq!(
        err(kb.kp_validate_unit(
            "alice",
            &ValidateArgs {
                unit_id: "skill-good".into(),
                valid: true,
                feedback: None,
            },
            PrivateAccess::Owner,
        )),
        json!({"code": "UNAVAILABLE", "message": "the KnowledgePulse registry at http://registry.test/mcp answered kp_validate_unit with validated false and quality_score 99; the verdict's outcome is unknown"})
    );
}

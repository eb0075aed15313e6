//! The KnowledgePulse network registry with real processes on loopback
//! (docs/knowledgepulse.md, "Network registry"): `folio mcp --http` with
//! `[knowledge] serve_registry = true` is the registry A; `folio mcp` instances whose
//! user configuration names A's URL and a token are its clients (B as agent `alice`, C as
//! agent `carol`). Contributions, searches, verdicts and reputations cross real HTTP.

mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use support::mcp::Mcp;

/// A skill whose structural score is 0.9 (a 12-word description, a list, a domain and tags,
/// but a short body).
const SKILL: &str = "---\nname: csv-cleanup\ndescription: Clean messy CSV exports before analysis so that every column has one type and one unit of measure.\ndomain: data\ntags: [csv, cleaning]\n---\n\n# CSV cleanup\n\n- Trim spaces and normalise decimal commas.\n";

/// Another skill, kept in B's own knowledge base (`org`).
const LOCAL_SKILL: &str = "---\nname: csv-import\ndescription: Import CSV files into the staging database with the right column types and encodings.\ndomain: data\ntags: [csv]\n---\n\n# CSV import\n\n- Check the encoding first.\n";

/// `folio mcp --http 127.0.0.1:0` as the registry, read until it listens.
struct RegistryServer {
    child: Child,
    url: String,
}

impl Drop for RegistryServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn folio() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_folio"));
    command.env("FOLIO_EMBED_PROVIDER", "none");
    command.env_remove("FOLIO_REGISTRY_TOKEN");
    command
}

/// Writes `<home>/folio/config.toml` and returns `home` (an `XDG_CONFIG_HOME`).
fn user_config(home: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(home.join("folio")).unwrap();
    std::fs::write(home.join("folio/config.toml"), text).unwrap();
    home.to_path_buf()
}

/// `folio token add AGENT --scope SCOPE --tokens FILE`: the new token.
fn add_token(tokens: &Path, agent: &str, scope: &str) -> String {
    let out = folio()
        .args(["token", "add", agent, "--scope", scope, "--tokens"])
        .arg(tokens)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Starts the registry on `root` with the token file `tokens`, its user configuration and
/// data folder under `dir`.
fn start_registry(dir: &Path, root: &Path, tokens: &Path) -> RegistryServer {
    start_http(
        dir,
        "registry",
        root,
        tokens,
        "[knowledge]\nserve_registry = true\n",
    )
}

/// Starts `folio mcp --http` on `root` with the token file `tokens` and the user
/// configuration `config`, its folders under `dir/name-…`.
fn start_http(dir: &Path, name: &str, root: &Path, tokens: &Path, config: &str) -> RegistryServer {
    let data = dir.join(format!("{name}-data"));
    let config = user_config(&dir.join(format!("{name}-config")), config);
    let mut child = folio()
        .arg("mcp")
        .arg("--root")
        .arg(root)
        .args(["--http", "127.0.0.1:0", "--tokens"])
        .arg(tokens)
        .env("XDG_CONFIG_HOME", config)
        .env("XDG_DATA_HOME", data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let url = loop {
        let Some(Ok(line)) = lines.next() else {
            panic!("the registry did not start:\n{}", seen.join("\n"));
        };
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.split(' ').next().unwrap().to_string();
        }
        seen.push(line);
    };
    // Keep reading so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    RegistryServer { child, url }
}

/// A client instance on `root` (writes allowed, local agent `local-agent`) whose user
/// configuration names the registry `url`, with `token` in a file outside the root.
fn start_client(dir: &Path, name: &str, root: &Path, url: &str, token: &str) -> Mcp {
    let token_file = dir.join(format!("{name}-registry-token"));
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let config = user_config(
        &dir.join(format!("{name}-config")),
        &format!(
            "[knowledge]\nregistry = \"{url}\"\nregistry_token_file = \"{}\"\n",
            token_file.display()
        ),
    );
    let data = dir.join(format!("{name}-data"));
    Mcp::start_with_env(
        root,
        &["--allow-writes", "--agent-id", "local-agent"],
        &[("XDG_CONFIG_HOME", &config), ("XDG_DATA_HOME", &data)],
    )
}

/// A fresh empty knowledge base `dir/name`.
fn root(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("README.md"), format!("# {name}\n")).unwrap();
    root
}

/// The files under `root` (relative, sorted), without `.folio/`.
fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if rel == ".folio" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn ledger_event(root: &Path, id: &str) -> Value {
    let dir = root.join("knowledge/ledger").join(id);
    let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(entries.len(), 1, "{dir:?}");
    let mut event: Value =
        serde_json::from_slice(&std::fs::read(entries[0].as_ref().unwrap().path()).unwrap())
            .unwrap();
    event.as_object_mut().unwrap().remove("time");
    event
}

#[test]
fn network_contributions_are_kept_by_the_registry_found_from_clients_and_judged_there() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let tokens = dir.join("registry-tokens.toml");
    // Contributors get `contribute` tokens: enough to contribute and judge, not to edit
    // the registry's files (tests/mcp/test_http.py checks that side).
    let alice = add_token(&tokens, "alice", "contribute");
    let carol = add_token(&tokens, "carol", "contribute");
    let a_root = root(dir, "registry-kb");
    let b_root = root(dir, "b-kb");
    let c_root = root(dir, "c-kb");
    let a = start_registry(dir, &a_root, &tokens);
    let mut b = start_client(dir, "b", &b_root, &a.url, &alice);

    // B contributes a skill (visibility defaults to network) and a unit: both land in
    // A's knowledge base, as alice's, and nothing is written in B's.
    let skill = b
        .call("kp_contribute_skill", json!({"skill_md_content": SKILL}))
        .unwrap();
    assert_eq!(
        skill,
        json!({"id": "skill-a6afa92c1af95cd1", "quality_score": 0.9, "visibility": "network",
               "path": "skills/csv-cleanup/SKILL.md", "registry": a.url})
    );
    let unit = b
        .call(
            "kp_contribute_knowledge",
            json!({"visibility": "network", "unit": {
                "schema_version": "1.0", "type": "ExpertSOP", "id": "ku-restore",
                "title": "Restore a database backup", "summary": "Restore last night's backup into staging.",
                "domain": "operations", "tags": ["backup"],
                "goal": "Staging holds last night's data", "steps": ["Fetch the dump", "Load it"],
                "checks": ["Row counts match"]}}),
        )
        .unwrap();
    assert_eq!(
        unit,
        json!({"id": "ku-restore", "quality_score": 0.75, "visibility": "network",
               "path": "knowledge/units/ku-restore.md", "registry": a.url})
    );
    assert_eq!(
        std::fs::read_to_string(a_root.join("skills/csv-cleanup/SKILL.md")).unwrap(),
        SKILL.replacen("---\n", "---\nid: skill-a6afa92c1af95cd1\n", 1)
    );
    assert_eq!(
        ledger_event(&a_root, "skill-a6afa92c1af95cd1"),
        json!({"event": "contribution", "item": "skill-a6afa92c1af95cd1", "item_kind": "skill", "agent": "alice"})
    );
    assert_eq!(
        ledger_event(&a_root, "ku-restore"),
        json!({"event": "contribution", "item": "ku-restore", "item_kind": "unit", "agent": "alice"})
    );
    assert_eq!(files(&b_root), vec!["README.md"]);
    assert!(!dir.join("b-data").join("folio/knowledge").exists());

    // B's own org skill and the registry's, interleaved by rank, each with its origin.
    let local = b
        .call(
            "kp_contribute_skill",
            json!({"skill_md_content": LOCAL_SKILL, "visibility": "org"}),
        )
        .unwrap();
    assert_eq!(local["path"], json!("skills/csv-import/SKILL.md"));
    let found = b
        .call("kp_search_skill", json!({"query": "CSV", "min_quality": 0}))
        .unwrap();
    let summary: Vec<Value> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            json!([
                h["id"],
                h["origin"],
                h["visibility"],
                h["path"],
                h.get("uri")
            ])
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            json!([
                local["id"],
                "local",
                "org",
                "skills/csv-import/SKILL.md",
                "kb://doc/skills/csv-import/SKILL.md"
            ]),
            json!([
                "skill-a6afa92c1af95cd1",
                "registry",
                "network",
                "skills/csv-cleanup/SKILL.md",
                null
            ]),
        ]
    );
    assert_eq!(found["results"][1]["quality_score"], json!(0.9));
    assert!(found.get("registry_error").is_none(), "{found}");
    let units = b
        .call("kp_search_knowledge", json!({"query": "restore backup"}))
        .unwrap();
    assert_eq!(units["results"].as_array().unwrap().len(), 1, "{units}");
    assert_eq!(units["results"][0]["id"], json!("ku-restore"));
    assert_eq!(units["results"][0]["origin"], json!("registry"));
    assert_eq!(units["results"][0]["visibility"], json!("network"));
    assert_eq!(units["results"][0]["quality_score"], json!(0.75));

    // Alice's reputation, from the registry: one contribution… two.
    assert_eq!(
        b.call("kp_reputation_query", json!({"agent_id": "alice"}))
            .unwrap(),
        json!({"score": 0.5, "contributions": 2, "positive_verdicts": 0, "negative_verdicts": 0,
               "local": {"score": 0.5, "contributions": 0, "positive_verdicts": 0, "negative_verdicts": 0},
               "registry": {"score": 0.5, "contributions": 2, "positive_verdicts": 0, "negative_verdicts": 0}})
    );

    // Alice cannot validate her own skill, though she calls through B: the registry
    // knows her by her token.
    let own = b
        .call(
            "kp_validate_unit",
            json!({"unit_id": "skill-a6afa92c1af95cd1", "valid": true}),
        )
        .unwrap_err();
    assert_eq!(
        own,
        json!({"code": "PERMISSION_DENIED", "message": format!(
            "the registry at {}: `alice` contributed `skill-a6afa92c1af95cd1` and cannot validate its own unit", a.url)})
    );

    // Carol, on another instance with her own token (from the environment), says the
    // skill holds up: q = (2·0.9 + 0.5·1) / (2 + 0.5) = 0.92 (carol has no
    // contributions, r = 0.5); alice's reputation (1 + 1) / (1 + 0 + 2) = 0.6667.
    let c_config = user_config(
        &dir.join("c-config"),
        &format!("[knowledge]\nregistry = \"{}\"\n", a.url),
    );
    let mut c = Mcp::start_with_env(
        &c_root,
        &["--allow-writes"],
        &[
            ("XDG_CONFIG_HOME", &c_config),
            ("XDG_DATA_HOME", &dir.join("c-data")),
            ("FOLIO_REGISTRY_TOKEN", Path::new(&carol)),
        ],
    );
    assert_eq!(
        c.call(
            "kp_validate_unit",
            json!({"unit_id": "skill-a6afa92c1af95cd1", "valid": true, "feedback": "works on our exports"})
        )
        .unwrap(),
        json!({"validated": true, "quality_score": 0.92, "origin": "registry"})
    );
    let verdicts: Vec<Value> =
        std::fs::read_dir(a_root.join("knowledge/ledger/skill-a6afa92c1af95cd1"))
            .unwrap()
            .map(|e| {
                let mut v: Value =
                    serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
                v.as_object_mut().unwrap().remove("time");
                v
            })
            .filter(|v| v["event"] == json!("validation"))
            .collect();
    assert_eq!(
        verdicts,
        vec![
            json!({"event": "validation", "item": "skill-a6afa92c1af95cd1", "item_kind": "skill",
                    "agent": "carol", "valid": true, "feedback": "works on our exports"})
        ]
    );
    assert_eq!(files(&c_root), vec!["README.md"]);
    assert_eq!(
        b.call("kp_reputation_query", json!({"agent_id": "alice"}))
            .unwrap(),
        json!({"score": 0.6667, "contributions": 2, "positive_verdicts": 1, "negative_verdicts": 0,
               "local": {"score": 0.5, "contributions": 0, "positive_verdicts": 0, "negative_verdicts": 0},
               "registry": {"score": 0.6667, "contributions": 2, "positive_verdicts": 1, "negative_verdicts": 0}})
    );
    let found = b
        .call("kp_search_skill", json!({"query": "messy CSV exports"}))
        .unwrap();
    let cleanup = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == json!("skill-a6afa92c1af95cd1"))
        .unwrap();
    assert_eq!(cleanup["quality_score"], json!(0.92));

    // An id the registry does not know either: NOT_FOUND, from the registry.
    assert_eq!(
        b.call(
            "kp_validate_unit",
            json!({"unit_id": "ku-nowhere", "valid": false})
        )
        .unwrap_err()["code"],
        json!("NOT_FOUND")
    );
}

#[test]
fn an_unreachable_registry_writes_nothing_and_local_search_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let b_root = root(dir, "b-kb");
    let url = format!("http://127.0.0.1:{}/mcp", support::closed_port());
    let mut b = start_client(dir, "b", &b_root, &url, "folio_whatever");
    let local = b
        .call(
            "kp_contribute_skill",
            json!({"skill_md_content": LOCAL_SKILL, "visibility": "org"}),
        )
        .unwrap();
    let before = files(&b_root);

    for (tool, arguments) in [
        ("kp_contribute_skill", json!({"skill_md_content": SKILL})),
        (
            "kp_contribute_knowledge",
            json!({"visibility": "network", "unit": {
                "schema_version": "1.0", "type": "ExpertSOP", "title": "T", "summary": "S",
                "domain": "operations", "goal": "G", "steps": ["one"]}}),
        ),
        (
            "kp_validate_unit",
            json!({"unit_id": "skill-elsewhere", "valid": true}),
        ),
    ] {
        let e = b.call(tool, arguments).unwrap_err();
        assert_eq!(e["code"], json!("UNAVAILABLE"), "{tool}: {e}");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "the KnowledgePulse registry at {url} is unavailable ("
            )) && message.ends_with("); nothing was written here, but a request that timed out may have reached the registry (a retried contribution then answers ALREADY_EXISTS)")
                && message.contains("onnection refused"),
            "{message}"
        );
    }
    assert_eq!(files(&b_root), before);
    assert!(!dir.join("b-data").join("folio/knowledge").exists());

    // Local search answers, and says the registry part failed.
    let found = b
        .call("kp_search_skill", json!({"query": "CSV", "min_quality": 0}))
        .unwrap();
    let ids: Vec<&Value> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["id"])
        .collect();
    assert_eq!(ids, vec![&local["id"]]);
    assert_eq!(found["results"][0]["origin"], json!("local"));
    assert_eq!(found["registry_error"]["code"], json!("UNAVAILABLE"));
    let units = b
        .call("kp_search_knowledge", json!({"query": "anything"}))
        .unwrap();
    assert_eq!(units["results"], json!([]));
    assert_eq!(units["registry_error"]["code"], json!("UNAVAILABLE"));
    let reputation = b
        .call("kp_reputation_query", json!({"agent_id": "local-agent"}))
        .unwrap();
    assert_eq!(reputation["contributions"], json!(1));
    assert_eq!(reputation["registry_error"]["code"], json!("UNAVAILABLE"));
}

#[test]
fn a_read_only_token_cannot_contribute_to_the_registry_and_a_wrong_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let tokens = dir.join("registry-tokens.toml");
    let reader = add_token(&tokens, "reader", "read");
    let a_root = root(dir, "registry-kb");
    let b_root = root(dir, "b-kb");
    let a = start_registry(dir, &a_root, &tokens);
    let mut b = start_client(dir, "b", &b_root, &a.url, &reader);
    assert_eq!(
        b.call("kp_contribute_skill", json!({"skill_md_content": SKILL}))
            .unwrap_err(),
        json!({"code": "PERMISSION_DENIED", "message": format!(
            "the registry at {}: the token of agent `reader` is read-only (scope `read`); `kp_contribute_skill` needs a contribute or read-write token (`folio token add reader --scope contribute`)", a.url)})
    );
    // Reading with it works.
    let found = b.call("kp_search_skill", json!({"query": "CSV"})).unwrap();
    assert_eq!(found["results"], json!([]));
    assert!(found.get("registry_error").is_none(), "{found}");
    assert_eq!(files(&a_root), vec!["README.md"]);
    assert_eq!(files(&b_root), vec!["README.md"]);

    let mut wrong = start_client(dir, "w", &b_root, &a.url, "folio_not-a-token");
    assert_eq!(
        wrong
            .call("kp_contribute_skill", json!({"skill_md_content": SKILL}))
            .unwrap_err(),
        json!({"code": "PERMISSION_DENIED", "message": format!(
            "the registry at {}: the registry refused the token (HTTP 401): check `[knowledge] registry_token_file` or FOLIO_REGISTRY_TOKEN, and `folio token list` on the registry", a.url)})
    );
    assert_eq!(files(&a_root), vec!["README.md"]);
}

#[test]
fn a_workspace_cannot_name_a_registry_and_a_registry_token_file_stays_outside_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let b_root = root(dir, "b-kb");
    std::fs::write(
        b_root.join("folio.toml"),
        "[knowledge]\nregistry = \"http://127.0.0.1:1/mcp\"\n",
    )
    .unwrap();
    let out = folio()
        .args(["mcp", "--root"])
        .arg(&b_root)
        .env("XDG_CONFIG_HOME", dir.join("none"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[knowledge] cannot be set in a workspace's folio.toml"),
        "{stderr}"
    );
    // It names the user's file where folio reads it: under XDG_CONFIG_HOME, not ~/.config.
    assert!(
        stderr.contains(&format!(
            "put it in your own config ({})",
            dir.join("none/folio/config.toml").display()
        )),
        "{stderr}"
    );
    std::fs::remove_file(b_root.join("folio.toml")).unwrap();

    std::fs::write(b_root.join("token"), "folio_x\n").unwrap();
    let config = user_config(
        &dir.join("cfg"),
        &format!(
            "[knowledge]\nregistry = \"http://127.0.0.1:1/mcp\"\nregistry_token_file = \"{}\"\n",
            b_root.join("token").display()
        ),
    );
    let out = folio()
        .args(["mcp", "--root"])
        .arg(&b_root)
        .env("XDG_CONFIG_HOME", config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[knowledge] registry_token_file: the token file")
            && stderr.contains("is inside the knowledge base"),
        "{stderr}"
    );
}

/// A folio server that is not a registry refuses a registry client's KnowledgePulse calls
/// rather than forwarding them: here X is itself a client of a registry (X pointed at
/// itself, or B → X → B, would otherwise call round until a rate limit stopped it).
#[test]
fn a_server_that_is_not_a_registry_refuses_a_registry_clients_calls() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let tokens = dir.join("x-tokens.toml");
    let alice = add_token(&tokens, "alice", "contribute");
    let x_root = root(dir, "x-kb");
    let b_root = root(dir, "b-kb");
    // X is a client of a registry at a port nobody listens on: were it to forward, the
    // answer would be UNAVAILABLE after a connection attempt, not NOT_CONFIGURED.
    let x = start_http(
        dir,
        "x",
        &x_root,
        &tokens,
        "[knowledge]\nregistry = \"http://127.0.0.1:9/mcp\"\n",
    );
    let mut b = start_client(dir, "b", &b_root, &x.url, &alice);
    let refused = format!(
        "the registry at {}: this folio server is not a KnowledgePulse registry (its user's configuration does not set `[knowledge] serve_registry = true`); point `[knowledge] registry` at a registry",
        x.url
    );
    assert_eq!(
        b.call("kp_contribute_skill", json!({"skill_md_content": SKILL}))
            .unwrap_err(),
        json!({"code": "NOT_CONFIGURED", "message": refused})
    );
    let found = b
        .call("kp_search_skill", json!({"query": "CSV", "min_quality": 0}))
        .unwrap();
    assert_eq!(
        found["registry_error"],
        json!({"code": "NOT_CONFIGURED", "message": refused})
    );
    assert_eq!(files(&x_root), vec!["README.md"]);
    assert_eq!(files(&b_root), vec!["README.md"]);
}

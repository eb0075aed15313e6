"""KnowledgePulse end to end: the six kp_* tools of the built `folio mcp` binary, driven by
the MCP Python SDK with two agents on one knowledge base (docs/knowledgepulse.md).

Agent A is `alice` (`--agent-id`); agent B has no flag, so it is known by its client info,
`bob-agent/1.0`. Lexical only (FOLIO_EMBED_PROVIDER=none), so results do not depend on the
built-in model; the private folder is under a temporary XDG_DATA_HOME.
"""

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from conftest import folio_bin

pytestmark = pytest.mark.anyio

KP_TOOLS = {"kp_search_skill", "kp_search_knowledge", "kp_contribute_skill", "kp_contribute_knowledge",
            "kp_validate_unit", "kp_reputation_query"}

SKILL_EN = """---
name: csv-cleanup
description: Clean messy CSV exports before analysis so that every column has one type and one unit of measure.
domain: data
tags: [csv, cleaning]
---

# CSV cleanup

- Trim spaces and normalise decimal commas.
"""

SKILL_JA = """---
name: 議事録作成
description: 会議のメモから議事録を作成し、決定事項と担当者と期限を一覧にまとめるためのスキルです。会議の直後に使います。
domain: writing
tags: [議事録, meetings]
---

# 議事録の作り方

- 決定事項を最初に書く
- 担当者と期限を必ず書く
"""

SKILL_PRIVATE = """---
name: git-bisect-flaky
description: Find the commit that made a test flaky by running git bisect with a script that repeats the test twenty times.
domain: debugging
---

# Bisect a flaky test

1. Write a script that runs the test twenty times and fails if any run fails.
2. Run git bisect run with it.
"""

UNIT_SOP = {
    "schema_version": "1.0", "type": "ExpertSOP", "id": "ku-restore-backup",
    "title": "Restore a database backup into staging", "summary": "Restore last night's database backup into staging.",
    "domain": "operations", "tags": ["backup", "database"],
    "goal": "Staging holds last night's data", "steps": ["Fetch the dump", "Load it with pg_restore"],
    "checks": ["Row counts match production"],
}

UNIT_TRACE_JA = {
    "schema_version": "1.0", "type": "ReasoningTrace", "id": "ku-flaky-ja",
    "title": "不安定なテストの原因を特定する", "summary": "十回に一回失敗するテストの原因を乱数シードで突き止めた。",
    "domain": "debugging", "tags": ["テスト"], "author": "alice",
    "task": "時々失敗するテストを直す", "context": "CI でだけ失敗する",
    "steps": [{"thought": "シードを固定して再現する", "action": "pytest -p randomly", "observation": "シード 7 で失敗"}],
    "outcome": "テスト同士が一時フォルダを共有していた", "lessons": ["テストごとに一時フォルダを分ける"],
}

UNIT_PATTERN_PRIVATE = {
    "schema_version": "1.0", "type": "ToolCallPattern",
    "title": "Search then read by pointer", "summary": "Find a passage with kb_search, then read its source before quoting.",
    "domain": "folio", "tags": ["search"], "tool": "kb_search", "when_to_use": "Before quoting a note",
    "arguments": {"query": {"type": "string", "required": True}},
    "example_calls": [{"arguments": {"query": "contributor ladder"}, "note": "then kb_read the pointer"}],
    "pitfalls": ["The index may lag behind the file"],
}


def env(tmp: Path) -> dict:
    return {"FOLIO_EMBED_PROVIDER": "none", "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_CONFIG_HOME": str(tmp / "config"), "HOME": str(tmp / "home")}


def alice(root: Path, tmp: Path) -> Client:
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root), "--allow-writes", "--agent-id", "alice"],
                                   env=env(tmp))
    return Client(params, mode="auto", client_info=Implementation(name="alice-client", version="9.9"))


def bob(root: Path, tmp: Path) -> Client:
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root), "--allow-writes"], env=env(tmp))
    return Client(params, mode="auto", client_info=Implementation(name="bob-agent", version="1.0"))


async def wait_indexed(client: Client) -> None:
    for _ in range(300):
        status = (await client.call_tool("kb_status", {})).structured_content
        if status["indexing"]["state"] == "idle" and status["indexing"]["last"]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the index did not finish")


async def call(client: Client, tool: str, args: dict) -> dict:
    res = await client.call_tool(tool, args)
    assert not res.is_error, res.content[0].text
    assert json.loads(res.content[0].text) == res.structured_content
    return res.structured_content


async def fails(client: Client, tool: str, args: dict) -> dict:
    res = await client.call_tool(tool, args)
    assert res.is_error, res.content[0].text
    return json.loads(res.content[0].text)


def files(folder: Path) -> dict:
    """Every file under `folder` except derived data (.folio/), with its bytes."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".folio" not in p.relative_to(folder).parts}


def private_root(tmp: Path) -> Path:
    roots = list((tmp / "data" / "folio" / "knowledge").iterdir())
    assert len(roots) == 1, roots
    return roots[0]


def ids(body: dict) -> list:
    return [(r["id"], r["visibility"], r["quality_score"]) for r in body["results"]]


async def searches(client: Client) -> dict:
    """The searches whose answers must survive a rebuild of the index."""
    return {
        "skill_en": await call(client, "kp_search_skill", {"query": "CSV column types"}),
        "skill_ja": await call(client, "kp_search_skill", {"query": "議事録"}),
        "skill_private": await call(client, "kp_search_skill", {"query": "bisect flaky test"}),
        "unit_en": await call(client, "kp_search_knowledge", {"query": "database backup", "min_quality": 0.5}),
        "unit_ja": await call(client, "kp_search_knowledge", {"query": "一時フォルダ"}),
        "unit_private": await call(client, "kp_search_knowledge", {"query": "quoting a passage", "types": ["ToolCallPattern"]}),
        "alice": await call(client, "kp_reputation_query", {"agent_id": "alice"}),
        "bob": await call(client, "kp_reputation_query", {"agent_id": "bob-agent/1.0"}),
    }


async def test_two_agents_contribute_search_validate_and_rebuild(tmp_path):
    root = tmp_path / "kb"
    root.mkdir()
    (root / "README.md").write_text("# Team notes\n\nMeeting notes and runbooks.\n")

    async with alice(root, tmp_path) as a, bob(root, tmp_path) as b:
        tools = {t.name: t for t in (await a.list_tools()).tools}
        assert KP_TOOLS <= set(tools)
        for name in KP_TOOLS:
            assert tools[name].output_schema["type"] == "object", name
        assert tools["kp_search_skill"].input_schema["properties"]["min_quality"]["description"]
        await wait_indexed(a)
        await wait_indexed(b)

        # Agent A contributes three skills and three units (one of each private).
        en = await call(a, "kp_contribute_skill", {"skill_md_content": SKILL_EN, "visibility": "org"})
        assert en["visibility"] == "org" and en["path"] == "skills/csv-cleanup/SKILL.md"
        assert en["quality_score"] == 0.9  # long description, list, domain, tags; short body
        skill_en = en["id"]
        assert (root / en["path"]).read_text() == SKILL_EN.replace("---\n", f"---\nid: {skill_en}\n", 1)
        ja = await call(a, "kp_contribute_skill", {"skill_md_content": SKILL_JA, "visibility": "org"})
        assert ja["quality_score"] == 0.9
        assert ja["path"] == f"skills/{ja['id']}/SKILL.md"  # a name without ASCII letters: the id names the folder
        priv = await call(a, "kp_contribute_skill", {"skill_md_content": SKILL_PRIVATE, "visibility": "private"})
        assert priv["visibility"] == "private" and priv["quality_score"] == 0.8  # no tags, body < 50 words
        sop = await call(a, "kp_contribute_knowledge", {"unit": UNIT_SOP, "visibility": "org"})
        assert sop == {"id": "ku-restore-backup", "quality_score": 0.75, "visibility": "org",
                       "path": "knowledge/units/ku-restore-backup.md"}
        trace = await call(a, "kp_contribute_knowledge", {"unit": UNIT_TRACE_JA, "visibility": "org"})
        assert trace["quality_score"] == 1.0
        pattern = await call(a, "kp_contribute_knowledge", {"unit": UNIT_PATTERN_PRIVATE, "visibility": "private"})
        assert pattern["id"].startswith("ku-") and len(pattern["id"]) == 19
        assert pattern["quality_score"] == 0.875

        # Private items are in the data folder, never in the knowledge base.
        kb_files = files(root)
        assert not any(priv["id"].encode() in v or pattern["id"].encode() in v for v in kb_files.values())
        assert not any("git-bisect" in k or pattern["id"] in k for k in kb_files)
        private = private_root(tmp_path)
        assert (private / "skills/git-bisect-flaky/SKILL.md").is_file()
        assert (private / f"knowledge/units/{pattern['id']}.md").is_file()
        assert not str(private).startswith(str(root))
        # The org ledger holds one contribution event per org item.
        events = [json.loads(v) for k, v in kb_files.items() if k.startswith("knowledge/ledger/")]
        assert sorted((e["event"], e["item"], e["agent"]) for e in events) == sorted(
            ("contribution", i, "alice") for i in [skill_en, ja["id"], "ku-restore-backup", "ku-flaky-ja"])

        # English and Japanese searches find them, with the documented fields.
        body = await call(b, "kp_search_skill", {"query": "CSV column types"})
        hit = body["results"][0]
        assert {k: hit[k] for k in ["id", "name", "domain", "tags", "quality_score", "path", "uri", "visibility"]} == {
            "id": skill_en, "name": "csv-cleanup", "domain": "data", "tags": ["csv", "cleaning"], "quality_score": 0.9,
            "path": "skills/csv-cleanup/SKILL.md", "uri": "kb://doc/skills/csv-cleanup/SKILL.md", "visibility": "org"}
        assert hit["content"] == (root / "skills/csv-cleanup/SKILL.md").read_text()
        assert ids(await call(b, "kp_search_skill", {"query": "議事録"}))[0] == (ja["id"], "org", 0.9)
        assert ids(await call(b, "kp_search_skill", {"query": "議事録", "domain": "data"})) == []
        assert ids(await call(b, "kp_search_skill", {"query": "議事録", "tags": ["meetings"]}))[0][0] == ja["id"]
        assert ids(await call(b, "kp_search_skill", {"query": "bisect flaky test"}))[0] == (priv["id"], "private", 0.8)
        body = await call(b, "kp_search_knowledge", {"query": "database backup"})
        hit = body["results"][0]
        assert (hit["id"], hit["type"], hit["domain"], hit["quality_score"]) == ("ku-restore-backup", "ExpertSOP", "operations", 0.75)
        assert hit["content"] == UNIT_SOP
        body = await call(b, "kp_search_knowledge", {"query": "一時フォルダ"})
        assert body["results"][0]["id"] == "ku-flaky-ja" and body["results"][0]["content"] == UNIT_TRACE_JA
        assert ids(await call(b, "kp_search_knowledge", {"query": "一時フォルダ", "types": ["ExpertSOP"]})) == []
        assert ids(await call(b, "kp_search_knowledge", {"query": "一時フォルダ", "schema_version": "1.0"}))[0][0] == "ku-flaky-ja"
        body = await call(b, "kp_search_knowledge", {"query": "quoting a passage", "types": ["ToolCallPattern"]})
        assert ids(body)[0] == (pattern["id"], "private", 0.875)

        # Agent B's verdicts. r(bob) = 0.5 (no contributions); q = (2·s + Σ r·valid) / (2 + Σ r).
        assert await call(b, "kp_validate_unit", {"unit_id": "ku-restore-backup", "valid": False, "feedback": "step 2 is vague"}) == \
            {"validated": True, "quality_score": 0.6}  # (1.5 + 0) / 2.5
        assert await call(b, "kp_validate_unit", {"unit_id": "ku-flaky-ja", "valid": True}) == \
            {"validated": True, "quality_score": 1.0}  # (2 + 0.5) / 2.5
        assert await call(b, "kp_validate_unit", {"unit_id": skill_en, "valid": True}) == \
            {"validated": True, "quality_score": 0.92}  # (1.8 + 0.5) / 2.5
        assert await call(b, "kp_validate_unit", {"unit_id": pattern["id"], "valid": False}) == \
            {"validated": True, "quality_score": 0.7}  # (1.75 + 0) / 2.5
        # alice: P = 2, N = 2 → (2 + 1) / (4 + 2).
        assert await call(a, "kp_reputation_query", {"agent_id": "alice"}) == \
            {"score": 0.5, "contributions": 6, "positive_verdicts": 2, "negative_verdicts": 2}
        assert await call(a, "kp_reputation_query", {"agent_id": "bob-agent/1.0"}) == \
            {"score": 0.5, "contributions": 0, "positive_verdicts": 0, "negative_verdicts": 0}
        # The new scores are what the searches return; 0.6 is under the default min_quality 0.75.
        assert ids(await call(a, "kp_search_knowledge", {"query": "database backup"})) == []
        assert ids(await call(a, "kp_search_knowledge", {"query": "database backup", "min_quality": 0.5}))[0] == ("ku-restore-backup", "org", 0.6)
        assert ids(await call(a, "kp_search_skill", {"query": "CSV column types"}))[0] == (skill_en, "org", 0.92)
        # The verdict event is in the ledger with its feedback.
        verdicts = [json.loads(p.read_text()) for p in (root / "knowledge/ledger/ku-restore-backup").glob("*.json")]
        assert sorted((v["event"], v["agent"], v.get("valid"), v.get("feedback")) for v in verdicts) == [
            ("contribution", "alice", None, None), ("validation", "bob-agent/1.0", False, "step 2 is vague")]

        # Each bad input gets its error and writes nothing anywhere.
        before = (files(root), files(private))
        bad = [
            (a, "kp_contribute_skill", {"skill_md_content": "# no frontmatter\n", "visibility": "org"}, "INVALID_ARGUMENT", "no YAML frontmatter"),
            (a, "kp_contribute_skill", {"skill_md_content": "---\ndescription: d\n---\n", "visibility": "org"}, "INVALID_ARGUMENT", "`name`"),
            (a, "kp_contribute_skill", {"skill_md_content": "---\nname: n\n---\n", "visibility": "org"}, "INVALID_ARGUMENT", "`description`"),
            (a, "kp_contribute_skill", {"skill_md_content": "---\nname: n\ndescription: d\n---\n" + "x" * 262144, "visibility": "org"}, "INVALID_ARGUMENT", "256 KiB"),
            (a, "kp_contribute_knowledge", {"unit": {**UNIT_SOP, "id": "ku-new", "steps": []}, "visibility": "org"}, "INVALID_ARGUMENT",
             "at `/steps`: [] has less than 1 item (rule `minItems`)"),
            (a, "kp_contribute_knowledge", {"unit": {**UNIT_SOP, "id": "ku-new", "type": "Recipe"}, "visibility": "org"}, "INVALID_ARGUMENT", "unknown unit type `Recipe`"),
            (a, "kp_contribute_knowledge", {"unit": {**UNIT_SOP, "id": "ku-new", "schema_version": "9.0"}, "visibility": "org"}, "INVALID_ARGUMENT", "unknown schema_version `9.0`"),
            (a, "kp_contribute_knowledge", {"unit": {**UNIT_SOP, "id": "../../escape"}, "visibility": "org"}, "INVALID_PATH", "cannot name a file"),
            (a, "kp_contribute_knowledge", {"unit": UNIT_SOP, "visibility": "private"}, "ALREADY_EXISTS", "ku-restore-backup"),
            (a, "kp_contribute_skill", {"skill_md_content": SKILL_EN, "visibility": "org"}, "ALREADY_EXISTS", skill_en),
            (b, "kp_validate_unit", {"unit_id": "ku-unknown", "valid": True}, "NOT_FOUND", "ku-unknown"),
            (a, "kp_validate_unit", {"unit_id": "ku-restore-backup", "valid": True}, "PERMISSION_DENIED", "its own unit"),
            (a, "kp_contribute_skill", {"skill_md_content": SKILL_EN.replace("csv-cleanup", "csv-other")}, "NOT_CONFIGURED", "[knowledge] registry"),
            (a, "kp_contribute_knowledge", {"unit": {**UNIT_SOP, "id": "ku-net"}, "visibility": "network"}, "NOT_CONFIGURED", "[knowledge] registry"),
            (a, "kp_search_skill", {"query": "csv", "limit": 21}, "INVALID_ARGUMENT", "between 1 and 20"),
            (a, "kp_search_skill", {"query": "csv", "limit": 0}, "INVALID_ARGUMENT", "between 1 and 20"),
            (a, "kp_search_knowledge", {"query": "csv", "limit": 11}, "INVALID_ARGUMENT", "between 1 and 10"),
            (a, "kp_search_skill", {"query": "csv", "min_quality": 1.5}, "INVALID_ARGUMENT", "`min_quality`"),
            (a, "kp_search_knowledge", {"query": "csv", "min_quality": -0.1}, "INVALID_ARGUMENT", "`min_quality`"),
            (a, "kp_search_knowledge", {"query": "csv", "types": ["Recipe"]}, "INVALID_ARGUMENT", "Recipe"),
        ]
        for client, tool, args, code, words in bad:
            err = await fails(client, tool, args)
            assert err["code"] == code, (tool, args, err)
            assert words in err["message"], (tool, err)
        assert (files(root), files(private)) == before

        first = await searches(a)

    # Delete the derived data of both places, reindex: the same results and scores.
    shutil.rmtree(root / ".folio")
    shutil.rmtree(private / ".folio")
    async with alice(root, tmp_path) as a:
        await wait_indexed(a)
        again = await searches(a)
    for key in first:
        first[key].pop("indexing", None)
        again[key].pop("indexing", None)
    assert again == first
    assert ids(first["unit_en"])[0] == ("ku-restore-backup", "org", 0.6)
    assert first["alice"]["score"] == 0.5


AGENT_SKILLS = Path(__file__).resolve().parents[1] / "fixtures" / "agent-skills"


async def test_real_skill_files_are_found_with_derived_ids(tmp_path):
    """The 12 real SKILL.md files of anthropics/skills (tests/fixtures/agent-skills): name,
    description and a long structured body, no domain or tags, so s = 0.5 + 0.1 × 3 = 0.8."""
    root = tmp_path / "kb"
    shutil.copytree(AGENT_SKILLS, root)
    async with alice(root, tmp_path) as a:
        await wait_indexed(a)
        body = await call(a, "kp_search_skill", {"query": "animated GIF for Slack"})
        hit = body["results"][0]
        assert (hit["name"], hit["path"], hit["quality_score"], hit["domain"], hit["tags"]) == \
            ("slack-gif-creator", "skills/slack-gif-creator/SKILL.md", 0.8, None, [])
        assert hit["id"].startswith("skill-") and len(hit["id"]) == 22
        assert hit["content"] == (root / hit["path"]).read_text()
        body = await call(a, "kp_search_skill", {"query": "test a local web application with Playwright", "limit": 1})
        assert [r["name"] for r in body["results"]] == ["webapp-testing"]
        # The derived id is stable: searching again gives the same one, and it can be judged.
        again = await call(a, "kp_search_skill", {"query": "animated GIF for Slack"})
        assert again["results"][0]["id"] == hit["id"]
        assert await call(a, "kp_validate_unit", {"unit_id": hit["id"], "valid": True}) == \
            {"validated": True, "quality_score": 0.84}  # (2·0.8 + 0.5) / 2.5

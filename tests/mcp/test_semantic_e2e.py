"""Semantic search through `folio mcp` with the built-in model (installed by
scripts/fetch-model), driven by the MCP Python SDK on the kb-eval corpus
(tests/fixtures/kb-eval, English and Japanese).

The server embeds in the background after its first reindex; kb_status reports the
progress, and kb_search / kb_graph use the vectors once they are there.
"""

import asyncio
import shutil
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO, folio_bin

pytestmark = pytest.mark.anyio

KB_EVAL = REPO / "tests" / "fixtures" / "kb-eval" / "kb"


@pytest.fixture
def kb_eval(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    shutil.copytree(KB_EVAL, root)
    return root


def server(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                 env={"FOLIO_EMBED_PROVIDER": "builtin"})


async def wait_embedded(client: Client) -> dict:
    """Waits until the background embedding ends. A debug build embeds the 60 chunks and
    20 documents in about 20 s on 2 quiet cores, several minutes on busy ones: the wait
    fails when no chunk or document was embedded for 120 s (stuck), not after a fixed time."""
    loop = asyncio.get_running_loop()
    last_done, last_progress = -1, loop.time()
    while True:
        status = (await client.call_tool("kb_status", {})).structured_content
        embedding = status["embedding"]
        if embedding["state"] in ("done", "unavailable", "off"):
            return status
        if embedding.get("done", 0) != last_done:
            last_done, last_progress = embedding.get("done", 0), loop.time()
        elif loop.time() - last_progress > 120:
            raise AssertionError(f"embedding made no progress for 120 s: {embedding}")
        await asyncio.sleep(0.1)


async def test_semantic_hybrid_and_graph_with_the_built_in_model(kb_eval):
    async with Client(server(kb_eval), mode="auto") as client:
        status = await wait_embedded(client)
        emb = status["embedding"]
        assert emb["state"] == "done", emb
        assert emb["provider"] == "builtin"
        assert emb["model"] == "builtin:multilingual-e5-small-q4"
        assert emb["ensemble_model"] == "builtin:use-multilingual-v3"
        assert "ensemble_missing" not in emb
        assert emb["embedded_chunks"] == emb["total_chunks"] == status["index"]["chunks"]
        assert status["search_modes"] == ["lexical", "semantic", "hybrid"]

        # A Japanese paraphrase sharing no key noun with its document ("roll back a release").
        query = "本番に出した変更を前のバージョンへ戻したい"
        semantic = (await client.call_tool("kb_search", {"query": query, "mode": "semantic", "limit": 3})).structured_content
        assert semantic["mode"] == "semantic"
        assert semantic["results"][0]["path"] == "ops/deploy-rollback.ja.md"
        assert semantic["results"][0]["vector_rank"] == 1
        assert 0.0 < semantic["results"][0]["similarity"] <= 1.0

        # Hybrid is the default once vectors exist.
        hybrid = (await client.call_tool("kb_search", {"query": query, "limit": 3})).structured_content
        assert hybrid["mode"] == "hybrid"
        assert hybrid["results"][0]["path"] == "ops/deploy-rollback.ja.md"

        # An English paraphrase that BM25 ranks second finds its document first in hybrid.
        res = (await client.call_tool("kb_search", {"query": "how long do we hold on to the nightly database copies",
                                                     "limit": 1})).structured_content
        assert res["results"][0]["path"] == "ops/database-backup.md"

        # MMR and parent retrieval are accepted; rerank is not configured.
        res = await client.call_tool("kb_search", {"query": query, "mmr": True, "mmr_same_doc_penalty": 0.5,
                                                    "parent_retriever": True})
        assert not res.is_error
        res = await client.call_tool("kb_search", {"query": query, "rerank": True})
        assert res.is_error and '"NOT_CONFIGURED"' in res.content[0].text

        # The connection graph from the backup document reaches the restore document.
        graph = (await client.call_tool("kb_graph", {"start": "ops/database-backup.md", "depth": 1, "fan_out": 3,
                                                      "dedup_by_path": True, "seed_strategy": "centroid"})).structured_content
        assert graph["start"] == "ops/database-backup.md"
        assert graph["nodes"][0]["depth"] == 0 and graph["nodes"][0]["path"] == "ops/database-backup.md"
        neighbours = [n for n in graph["nodes"] if n["depth"] == 1]
        assert len(neighbours) == 3 and all(n["parent"] == 0 for n in neighbours)
        assert "ops/database-restore.md" in [n["path"] for n in neighbours], neighbours
        assert all(n["path"] != "ops/database-backup.md" for n in neighbours)
        scores = [n["score"] for n in neighbours]
        assert scores == sorted(scores, reverse=True) and scores[0] >= 0.3
        assert graph["truncated"] is False and graph["knn_queries"] >= 1


async def test_kb_status_says_why_the_second_model_is_missing(tmp_path):
    """Without the second built-in model, kb_status says so, where it looked and how to
    install it; hybrid search still runs, with the first model alone."""
    root = tmp_path / "kb"
    root.mkdir()
    (root / "note.md").write_text("# Backups\n\nNightly copies of the database are kept for a week.\n")
    missing = tmp_path / "no-model"
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                   env={"FOLIO_EMBED_PROVIDER": "builtin", "FOLIO_USE_MODEL_DIR": str(missing)})
    async with Client(params, mode="auto") as client:
        status = await wait_embedded(client)
        emb = status["embedding"]
        assert emb["state"] == "done", emb
        assert "ensemble_model" not in emb
        assert emb["ensemble_missing"] == (
            f"the second built-in model (USE-Multilingual v3) is not installed in {missing}; "
            "run `folio model install` to install it")
        res = (await client.call_tool("kb_search", {"query": "how long are database copies kept"})).structured_content
        assert res["mode"] == "hybrid"
        assert res["results"][0]["path"] == "note.md"


async def test_the_first_search_of_a_new_server_waits_for_the_model(kb_eval):
    """A server started on an index that already has vectors loads the model in the
    background; a hybrid search sent before it is built waits for it (up to 10 s) instead
    of answering lexically."""
    async with Client(server(kb_eval), mode="auto") as client:
        status = await wait_embedded(client)
        assert status["embedding"]["state"] == "done", status["embedding"]
    async with Client(server(kb_eval), mode="auto") as client:
        res = (await client.call_tool("kb_search", {"query": "本番に出した変更を前のバージョンへ戻したい",
                                                     "limit": 3})).structured_content
        assert res["mode"] == "hybrid", res
        assert res["results"][0]["path"] == "ops/deploy-rollback.ja.md"


async def test_kp_search_skill_is_hybrid_with_the_built_in_model(tmp_path):
    """KnowledgePulse searches skills with the same pipeline as kb_search: once the
    built-in model has embedded the SKILL.md files, paraphrases in English and Japanese
    that share no name with the skill find it first, in hybrid mode."""
    root = tmp_path / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "agent-skills", root)
    async with Client(server(root), mode="auto") as client:
        status = await wait_embedded(client)
        assert status["embedding"]["state"] == "done", status["embedding"]
        for query, first in [("make an animated picture for a chat app", "slack-gif-creator"),
                             ("テスト用にウェブアプリをブラウザで操作する", "webapp-testing")]:
            res = (await client.call_tool("kp_search_skill", {"query": query, "min_quality": 0, "limit": 3})
                   ).structured_content
            assert res["mode"] == "hybrid", res
            assert res["results"][0]["name"] == first, (query, [h["name"] for h in res["results"]])

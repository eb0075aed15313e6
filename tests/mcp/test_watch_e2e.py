"""`folio mcp` follows changes other programs make to its root (plain file-system calls
while it runs), over stdio and streamable HTTP: lexical search reflects each create,
change, delete and rename, a deleted file is never returned, hybrid search finds new
text once its chunks are embedded, a rename keeps the vectors of its chunks, and the
poll fallback and `watch = "off"` behave as configured.

Each wait for a change is bounded by 2 s, as the watcher promises; the time each took is
printed (pytest -s shows it).
"""

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import folio_bin

pytestmark = pytest.mark.anyio

# The latency the watcher promises between a write and a search that reflects it.
REFLECTED_WITHIN = 2.0


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def notes(tmp_path: Path, toml: str | None = None) -> Path:
    root = tmp_path / "kb"
    write(root / "a.md", "# Animals\n\nThe zebra stands in the savanna.\n")
    write(root / "b.md", "# Birds\n\nA heron waits at the river.\n")
    write(root / "d.md", "# Desert\n\nA camel crosses the dunes.\n")
    if toml:
        write(root / "folio.toml", toml)
    return root


async def search(client: Client, query: str, **extra) -> dict:
    return (await client.call_tool("kb_search", {"query": query, "mode": "lexical", **extra})).structured_content


async def paths(client: Client, query: str) -> list[str]:
    return sorted({h["path"] for h in (await search(client, query))["results"]})


async def idle(client: Client) -> dict:
    """kb_status once no pass runs and no reported change waits."""
    for _ in range(600):
        status = (await client.call_tool("kb_status", {})).structured_content
        if status["indexing"]["state"] == "idle" and status["indexing"]["pending_changes"] == 0:
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"indexing never went idle: {status['indexing']}")


async def documents(client: Client, want: int, what: str) -> None:
    """Waits (at most 2 s) until the index holds `want` documents."""
    started = time.monotonic()
    while time.monotonic() - started < REFLECTED_WITHIN:
        status = (await client.call_tool("kb_status", {})).structured_content
        if status["index"]["documents"] == want:
            print(f"{what}: indexed in {time.monotonic() - started:.2f} s")
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: the index holds {status['index']['documents']} documents, not {want}")


async def reflected(client: Client, query: str, want: list[str], what: str, within: float = REFLECTED_WITHIN) -> float:
    """Seconds until lexical search for `query` returns exactly the paths `want`."""
    started = time.monotonic()
    got = None
    while time.monotonic() - started < within:
        got = await paths(client, query)
        if got == want:
            took = time.monotonic() - started
            print(f"{what}: reflected in {took:.2f} s")
            return took
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: search for {query!r} gave {got}, not {want}, after {within} s")


async def test_a_deleted_folder_with_a_dot_in_its_name_leaves_the_index(tmp_path, connect):
    root = notes(tmp_path)
    write(root / "v1.0" / "n.md", "# Versioned\n\nThe okapi of version one.\n")
    async with connect(root) as client:
        status = await idle(client)
        assert status["index"]["documents"] == 4
        shutil.rmtree(root / "v1.0")
        await documents(client, 3, "dotted folder delete")


async def test_outside_creates_changes_deletes_and_renames_reach_search(tmp_path, connect):
    root = notes(tmp_path)
    async with connect(root) as client:
        await idle(client)
        assert await paths(client, "zebra") == ["a.md"]
        status = (await client.call_tool("kb_status", {})).structured_content
        assert status["watch"]["configured"] == "auto"
        assert status["watch"]["mode"] in ("native", "starting")

        # Deleted: never returned, not even before the watcher reports it.
        os.remove(root / "a.md")
        body = await search(client, "zebra")
        assert [h["path"] for h in body["results"]] == [], body
        # Changed and created by another program.
        write(root / "b.md", "# Birds\n\nA giraffe visits the heron at the river.\n")
        write(root / "c.md", "# Creatures\n\nThe giraffe eats acacia leaves.\n")
        await reflected(client, "giraffe", ["b.md", "c.md"], "change + create")
        assert await paths(client, "heron") == ["b.md"]
        # Renamed (and into a new folder): found under the new path only.
        os.makedirs(root / "arid")
        os.rename(root / "d.md", root / "arid" / "dunes.md")
        await reflected(client, "camel", ["arid/dunes.md"], "rename")
        # A folder deleted with its notes: gone from search at once (the file is gone),
        # and from the index within the same bound.
        shutil.rmtree(root / "arid")
        assert await paths(client, "camel") == []
        await documents(client, 2, "folder delete")

        status = await idle(client)
        assert status["watch"]["mode"] == "native", status["watch"]
        assert status["watch"]["changes_seen"] >= 5, status["watch"]
        assert status["indexing"]["last"]["kind"] == "changes", status["indexing"]
        assert status["indexing"]["changes_passes"] >= 3, status["indexing"]


async def test_a_hit_changed_since_it_was_indexed_is_not_returned_with_stale_text(tmp_path):
    """With watching off, the index keeps the old text; a search still never returns a
    deleted note or a chunk that is no longer in its file."""
    root = notes(tmp_path, '[index]\nwatch = "off"\n')
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                   env={"FOLIO_EMBED_PROVIDER": "none"})
    async with Client(params, mode="auto") as client:
        await idle(client)
        status = (await client.call_tool("kb_status", {})).structured_content
        assert (status["watch"]["configured"], status["watch"]["mode"]) == ("off", "off")
        assert "kb_reindex" in status["watch"]["reason"]
        # Lines moved, element kept: the hit follows it.
        write(root / "b.md", "Intro.\n\nMore intro.\n\n# Birds\n\nA heron waits at the river.\n")
        body = await search(client, "heron")
        assert [(h["path"], h["start_line"], h["end_line"]) for h in body["results"]] == [("b.md", 5, 7)], body
        # The chunk's text is gone from the file: the hit is dropped, and the answer says so.
        write(root / "b.md", "# Birds\n\nA stork waits at the river.\n")
        body = await search(client, "heron")
        assert (body["results"], body["partial"], body["stale_hits_dropped"]) == ([], True, 1), body
        os.remove(root / "a.md")
        body = await search(client, "zebra")
        assert (body["results"], body["partial"], body["stale_hits_dropped"]) == ([], True, 1), body
        # Nothing dropped: not partial, no count.
        body = await search(client, "camel")
        assert ([h["path"] for h in body["results"]], "partial" in body, "stale_hits_dropped" in body) == (
            ["d.md"], False, False), body
        # New text stays unseen until a reindex: nothing watches.
        write(root / "c.md", "# Creatures\n\nThe giraffe eats acacia leaves.\n")
        await asyncio.sleep(1.0)
        assert await paths(client, "giraffe") == []
        await client.call_tool("kb_reindex", {})
        await idle(client)
        assert await paths(client, "giraffe") == ["c.md"]


async def test_poll_fallback_by_configuration(tmp_path, connect):
    root = notes(tmp_path, '[index]\nwatch = "poll"\npoll_interval_ms = 300\n')
    async with connect(root) as client:
        await idle(client)
        for _ in range(100):
            status = (await client.call_tool("kb_status", {})).structured_content
            if status["watch"]["mode"] != "starting":
                break
            await asyncio.sleep(0.05)
        watch = status["watch"]
        # 300 ms, or a hundred times a scan when that takes longer (a busy machine).
        assert (watch["configured"], watch["mode"]) == ("poll", "poll"), watch
        assert watch["poll_interval_ms"] >= 300, watch
        write(root / "c.md", "# Creatures\n\nThe giraffe eats acacia leaves.\n")
        await reflected(client, "giraffe", ["c.md"], "poll: create")
        os.remove(root / "c.md")
        await reflected(client, "giraffe", [], "poll: delete")
        # A change that keeps the size is seen too (the file's times changed).
        write(root / "b.md", "# Birds\n\nA heron naps at the river.\n")
        write(root / "b.md", "# Birds\n\nA robin naps at the river.\n")
        await reflected(client, "robin", ["b.md"], "poll: same-size change")


async def test_ignored_files_and_the_state_folder_stay_out(tmp_path, connect):
    root = notes(tmp_path)
    write(root / ".folioignore", "drafts/\n")
    async with connect(root) as client:
        await idle(client)
        write(root / "drafts" / "x.md", "# Draft\n\nThe giraffe draft.\n")
        write(root / "c.md", "# Creatures\n\nThe giraffe eats acacia leaves.\n")
        await reflected(client, "giraffe", ["c.md"], "ignored folder")
        # Un-ignoring brings the draft in.
        write(root / ".folioignore", "")
        await reflected(client, "giraffe", ["c.md", "drafts/x.md"], "ignore file changed")


def builtin_model_installed() -> bool:
    import subprocess

    out = subprocess.run([folio_bin(), "model", "status"], capture_output=True, text=True)
    return out.returncode == 0


async def test_hybrid_search_follows_outside_changes_and_a_rename_keeps_the_vectors(tmp_path):
    if not builtin_model_installed():
        pytest.fail("the built-in model is not installed: scripts/test installs it (folio model install)")
    root = notes(tmp_path)
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                   env={"FOLIO_EMBED_PROVIDER": "builtin"})
    async with Client(params, mode="auto") as client:
        await embedded(client)
        write(root / "c.md", "# Creatures\n\nThe giraffe eats acacia leaves on the plain.\n")
        started = time.monotonic()
        await reflected(client, "giraffe", ["c.md"], "hybrid: lexical first")
        status = await embedded(client)
        print(f"hybrid: new chunk embedded {time.monotonic() - started:.2f} s after the write "
              f"({status['embedding']['total']} texts)")
        body = (await client.call_tool("kb_search", {"query": "tall animal eating tree leaves"})).structured_content
        assert body["mode"] == "hybrid", body
        top = body["results"][0]
        assert (top["path"], top["vector_rank"]) == ("c.md", 1), body["results"][:3]

        # A rename is a move: its chunks keep their vectors (nothing new to embed).
        before = status["embedding"]["embedded_chunks"]
        os.rename(root / "c.md", root / "creatures.md")
        await reflected(client, "giraffe", ["creatures.md"], "hybrid: rename")
        status = await embedded(client)
        assert status["embedding"]["embedded_chunks"] == before, status["embedding"]
        assert status["embedding"]["total"] == 0, status["embedding"]
        body = (await client.call_tool("kb_search", {"query": "tall animal eating tree leaves"})).structured_content
        top = body["results"][0]
        assert (top["path"], top["vector_rank"]) == ("creatures.md", 1), body["results"][:3]


async def embedded(client: Client) -> dict:
    """kb_status once the index is idle and every chunk has a vector (fails when no
    progress is made for 120 s: a debug build embeds slowly on busy cores)."""
    last, since = None, time.monotonic()
    while True:
        status = await idle(client)
        emb = status["embedding"]
        if emb["state"] in ("done", "idle") and emb["embedded_chunks"] == emb["total_chunks"]:
            return status
        if emb["state"] == "unavailable":
            raise AssertionError(f"embedding unavailable: {emb}")
        if (emb["done"], emb["embedded_chunks"]) != last:
            last, since = (emb["done"], emb["embedded_chunks"]), time.monotonic()
        elif time.monotonic() - since > 120:
            raise AssertionError(f"embedding made no progress for 120 s: {emb}")
        await asyncio.sleep(0.1)


async def test_the_servers_own_writes_are_not_indexed_a_second_time(tmp_path, connect):
    root = notes(tmp_path)
    async with connect(root, "--allow-writes") as client:
        before = await idle(client)
        created = await client.call_tool("kb_create", {"path": "c.md", "markdown": "# Creatures\n\nThe giraffe.\n"})
        assert created.structured_content["indexSynchronized"] is True, created.structured_content
        # Searchable at once (indexed as written), and the watcher's report of the write
        # brings no pass; another program's write right after it does.
        assert await paths(client, "giraffe") == ["c.md"]
        deadline = time.monotonic() + REFLECTED_WITHIN
        while time.monotonic() < deadline:
            status = await idle(client)
            if status["watch"]["changes_seen"] > before["watch"]["changes_seen"]:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        status = await idle(client)
        assert status["watch"]["changes_seen"] > before["watch"]["changes_seen"], status["watch"]
        assert status["indexing"]["changes_passes"] == before["indexing"]["changes_passes"], status["indexing"]
        write(root / "c.md", "# Creatures\n\nThe okapi.\n")
        await reflected(client, "okapi", ["c.md"], "outside write after an own write")
        status = await idle(client)
        assert status["indexing"]["changes_passes"] == before["indexing"]["changes_passes"] + 1, status["indexing"]


async def test_a_root_deleted_under_the_server_is_an_error_and_is_not_made_again(tmp_path):
    root = notes(tmp_path)
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                   env={"FOLIO_EMBED_PROVIDER": "none"})
    async with Client(params, mode="auto") as client:
        await idle(client)
        shutil.rmtree(root)
        for tool, args in (("kb_status", {}), ("kb_search", {"query": "zebra"})):
            res = await client.call_tool(tool, args)
            assert res.is_error, res
            body = json.loads(res.content[0].text)
            assert body["code"] == "NOT_FOUND", body
            assert body["message"].startswith(f"the knowledge base root `{root.resolve()}` is gone"), body
        await asyncio.sleep(0.5)
        assert not root.exists()

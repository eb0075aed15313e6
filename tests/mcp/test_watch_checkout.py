"""A `git checkout` that changes a thousand notes under a running `folio mcp`:
afterwards its index equals a fresh index of the same tree (documents with their content
hashes, chunks with their pointers, lines and content hashes), its links equal a fresh
server's, and it took a few incremental passes, not one per file (the number is
printed; pytest -s shows it).
"""

import asyncio
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import folio_bin

pytestmark = pytest.mark.anyio

NOTES = 1200


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                   check=True, capture_output=True)


def note(i: int, version: str) -> str:
    return (f"# Note {i}\n\nTopic {i % 37} in {version}, word{i}.\n\n"
            f"See [next](n{(i + 1) % NOTES:04}.md) and [[n{(i * 7) % NOTES:04}]].\n\n"
            f"## Details\n\nDetail {i} of {version}; {'alpha ' * (i % 5)}.\n")


def make_repo(root: Path) -> None:
    """Commit `one` (1,200 notes) and commit `two` (400 changed, 200 deleted, 300 added,
    100 renamed into a folder), then check out `one`."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for i in range(NOTES):
        (root / f"n{i:04}.md").write_text(note(i, "one"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    git(root, "tag", "one")
    for i in range(0, 400):
        (root / f"n{i:04}.md").write_text(note(i, "two"))
    for i in range(400, 600):
        (root / f"n{i:04}.md").unlink()
    (root / "moved").mkdir()
    for i in range(600, 700):
        (root / f"n{i:04}.md").rename(root / "moved" / f"n{i:04}.md")
    for i in range(NOTES, NOTES + 300):
        (root / "added").mkdir(exist_ok=True)
        (root / "added" / f"x{i}.md").write_text(note(i, "two"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two")
    git(root, "tag", "two")
    git(root, "checkout", "-q", "one")


def index_rows(db: Path) -> tuple[list, list]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        docs = con.execute("SELECT path, source_hash, size FROM documents ORDER BY path").fetchall()
        chunks = con.execute(
            "SELECT d.path, c.seq, c.pointer, c.heading_path, c.start_line, c.end_line, c.content_hash "
            "FROM chunks c JOIN documents d ON d.id = c.doc_id ORDER BY d.path, c.seq").fetchall()
    finally:
        con.close()
    return docs, chunks


def server(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                 env={"FOLIO_EMBED_PROVIDER": "none"})


async def status(client: Client) -> dict:
    return (await client.call_tool("kb_status", {})).structured_content


async def settled(client: Client, quiet: float = 1.5, seen_more_than: int = -1) -> dict:
    """kb_status once the watcher has seen more than `seen_more_than` changed paths,
    the first pass over the whole root has run, indexing is idle, nothing waits, and no change was seen for `quiet` seconds (the
    checkout is over and every batch was taken)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        s = await status(client)
        last = s["watch"].get("last_change_ms") or 0
        if (s["watch"]["changes_seen"] > seen_more_than
                and s["indexing"]["full_passes"] >= 1
                and s["indexing"]["state"] == "idle" and s["indexing"]["pending_changes"] == 0
                and time.time() * 1000 - last > quiet * 1000):
            return s
        await asyncio.sleep(0.1)
    raise AssertionError(f"never settled: {s['indexing']} {s['watch']}")


async def links(client: Client, paths: list[str]) -> dict:
    out = {}
    for p in paths:
        res = (await client.call_tool("kb_links", {"path": p})).structured_content
        out[p] = res
    return out


async def test_a_git_checkout_under_a_running_server_ends_as_a_fresh_index(tmp_path):
    root = tmp_path / "repo"
    make_repo(root)
    async with Client(server(root), mode="auto") as client:
        before = await settled(client, quiet=0)
        assert before["index"]["documents"] == NOTES, before
        assert before["watch"]["mode"] == "native", before["watch"]
        passes_before = before["indexing"]["changes_passes"]
        started = time.monotonic()
        git(root, "checkout", "-q", "two")
        after = await settled(client, seen_more_than=before["watch"]["changes_seen"])
        passes = after["indexing"]["changes_passes"] - passes_before
        print(f"git checkout changing 1000 of {NOTES} notes (400 changed, 200 deleted, 300 added, 100 renamed): "
              f"{passes} incremental pass(es), settled {time.monotonic() - started:.1f} s after the checkout "
              f"(1.5 s of it the quiet wait); {after['watch']['changes_seen']} changed paths seen")
        assert after["index"]["documents"] == NOTES - 200 + 300
        assert after["indexing"]["last"]["ok"] is True, after["indexing"]
        assert 1 <= passes <= 5, after["indexing"]
        sample = ["n0001.md", "n0399.md", "n0700.md", "moved/n0650.md", "added/x1250.md"]
        watched_links = await links(client, sample)

    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns(".folio", ".git"))
    subprocess.run([folio_bin(), "index", "--root", str(fresh), "--no-embed"], check=True, capture_output=True,
                   env={"FOLIO_EMBED_PROVIDER": "none", "PATH": "/usr/bin:/bin"})
    watched_docs, watched_chunks = index_rows(root / ".folio" / "index.db")
    fresh_docs, fresh_chunks = index_rows(fresh / ".folio" / "index.db")
    assert len(watched_docs) == len(fresh_docs) == 1300
    assert watched_docs == fresh_docs
    assert len(watched_chunks) == len(fresh_chunks)
    assert watched_chunks == fresh_chunks

    async with Client(server(fresh), mode="auto") as client:
        await settled(client, quiet=0)
        assert await links(client, sample) == watched_links

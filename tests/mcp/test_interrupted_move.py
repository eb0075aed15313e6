"""A `kb_move` of a note with 401 linking notes, with `folio mcp` killed (SIGKILL) while
it rewrites them: the half-done move is reported by `folio status`, by `folio check` (one
line before the errors it causes), and by `kb_status` of a read-only server, which
changes nothing; `folio index` finishes it, and the links are whole again.
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import folio_bin

pytestmark = pytest.mark.anyio

LINKERS = 401
ENV = {**os.environ, "FOLIO_EMBED_PROVIDER": "none"}


def make_root(root: Path) -> None:
    root.mkdir()
    (root / "hub.md").write_text("# Hub\n\nThe hub note.\n")
    for i in range(LINKERS):
        (root / f"n{i:03}.md").write_text(f"# Note {i}\n\nSee [the hub](hub.md) and [[hub]].\n")


def kill_during_move(root: Path) -> None:
    """Starts a writing server, asks it to move hub.md, and kills it as soon as the move
    has changed a first file (its journal entry exists, and hub.md is moved or the first
    linking note rewritten)."""
    proc = subprocess.Popen([folio_bin(), "mcp", "--root", str(root), "--allow-writes"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)

    def send(msg: dict) -> None:
        proc.stdin.write((json.dumps(msg) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    proc.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "kb_move", "arguments": {"sourcePath": "hub.md", "targetPath": "archive/hub.md"}}})
    journal = root / ".folio" / "journal"
    deadline = time.monotonic() + 60
    first = root / "n000.md"
    while time.monotonic() < deadline:
        if (journal.is_dir() and any(p.suffix == ".json" for p in journal.iterdir())
                and (not (root / "hub.md").exists() or "archive/hub.md" in first.read_text())):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return
        time.sleep(0.0002)
    proc.kill()
    raise AssertionError("the move never wrote its journal entry")


def folio(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([folio_bin(), *args], capture_output=True, text=True, env=ENV)


async def test_a_killed_move_is_reported_everywhere_and_finished_by_a_writer(tmp_path):
    # The kill lands mid-move nearly always; a move that finished first is tried again.
    for attempt in range(10):
        root = tmp_path / f"kb{attempt}"
        make_root(root)
        kill_during_move(root)
        if any((root / ".folio" / "journal").glob("*.json")):
            break
    files = 1 + LINKERS
    status = folio("status", "--root", str(root))
    assert status.returncode == 0, status.stderr
    line = next(l for l in status.stdout.splitlines() if l.startswith("interrupted write: "))
    prefix = f"interrupted write: a move of hub.md → archive/hub.md was interrupted with "
    assert line.startswith(prefix), line
    left = int(line[len(prefix):].split(" ", 1)[0])
    assert 1 <= left < files, line
    assert line.endswith(f"{left} of {files} files not yet changed; to finish it, run `folio index` in the root, "
                         "or start `folio lsp` or `folio mcp --allow-writes` on it: a folio process that can write "
                         "finishes it on start"), line
    print(f"killed with {left} of {files} files not yet changed")

    check = folio("check", "--root", str(root))
    assert check.returncode == 1, check.stderr
    first = check.stderr.splitlines()[0]
    assert first.startswith("folio: warning: a move of hub.md → archive/hub.md was interrupted with "), first
    assert "(the link errors it leaves are among those below); to finish it, run `folio index`" in first, first
    assert check.stdout.count("missing-file") > 0

    # A read-only server reports it and changes nothing.
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root)],
                                   env={"FOLIO_EMBED_PROVIDER": "none"})
    async with Client(params, mode="auto") as client:
        st = (await client.call_tool("kb_status", {})).structured_content
        [w] = st["interrupted_writes"]
        assert (w["moves"], w["files"], w["files"] - w["done"]) == ([{"from": "hub.md", "to": "archive/hub.md"}], files, left)
        assert w["message"] == line[len("interrupted write: "):line.index("; to finish it")]
        assert w["finish"].startswith("run `folio index` in the root")
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before

    index = folio("index", "--root", str(root), "--no-embed")
    assert index.returncode == 0, index.stderr
    assert index.stderr.splitlines()[0] == (f"folio: finished an interrupted write: a move of hub.md → archive/hub.md "
                                            f"was interrupted with {left} of {files} files not yet changed")
    check = folio("check", "--root", str(root))
    assert (check.returncode, check.stdout) == (0, ""), check.stderr + check.stdout
    assert "interrupted" not in folio("status", "--root", str(root)).stdout
    assert (root / "archive" / "hub.md").exists() and not (root / "hub.md").exists()
    assert (root / "n000.md").read_text() == "# Note 0\n\nSee [the hub](archive/hub.md) and [[hub]].\n"

"""The live bridge end to end: real Neovim 0.11 (headless) runs `folio lsp` on a temp copy
of k8s-community, and the MCP Python SDK drives `folio mcp --allow-writes` on the same root.

Neovim is driven and inspected through its RPC socket (`nvim --server … --remote-expr`)
with the helpers of tests/nvim/bridge.lua. Both servers get the same private
XDG_RUNTIME_DIR, where `folio lsp` puts its bridge socket and `folio mcp` finds it.
"""

import asyncio
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO, folio_bin

pytestmark = pytest.mark.anyio

FILE = "communication/moderators.md"


def nvim_bin() -> str:
    """$FOLIO_NVIM (scripts/test sets it), else the project venv's Neovim."""
    path = os.environ.get("FOLIO_NVIM") or str(REPO / ".venv" / "bin" / "nvim")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("NVIM v0.11."), out.splitlines()[0]
    return path


class Nvim:
    """A headless Neovim editing one file of `root` with `folio lsp` attached."""

    def __init__(self, root: Path, file: str, work: Path):
        self.bin = nvim_bin()
        work.mkdir(parents=True, exist_ok=True)
        self.listen = work / "nvim.sock"
        self.runtime = work / "run"
        self.runtime.mkdir(mode=0o700)
        env = dict(os.environ)
        env.update({
            "FOLIO_BIN": folio_bin(),
            "FOLIO_ROOT": str(root),
            "XDG_RUNTIME_DIR": str(self.runtime),
        })
        for d in ["state", "config", "data", "cache"]:
            (work / d).mkdir()
            env[f"XDG_{d.upper()}_HOME"] = str(work / d)
        script = REPO / "tests" / "nvim" / "bridge.lua"
        self.proc = subprocess.Popen(
            [self.bin, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--listen", str(self.listen),
             str(root / file), "-c", f"luafile {script}"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not (self.listen.exists() and self.expr("get(g:, 'folio_ready', 0)") == "1"):
            assert time.monotonic() < deadline, "Neovim or folio lsp did not start"
            time.sleep(0.05)

    def expr(self, expr: str) -> str:
        out = subprocess.run([self.bin, "--server", str(self.listen), "--remote-expr", expr],
                             capture_output=True, text=True)
        return out.stdout.strip()

    def run(self, op: str, **args):
        arg = json.dumps({"op": op, **args}).replace("'", "''")
        return json.loads(self.expr(f"luaeval('T.run(_A)', '{arg}')"))

    def text(self) -> str:
        return self.run("state")["text"]

    def close(self):
        subprocess.run([self.bin, "--server", str(self.listen), "--remote-send", "<Esc>:qa!<CR>"], capture_output=True)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture
def nvim(kb):
    # A short folder: socket paths must fit in 108 bytes (sun_path), and pytest's tmp_path is long.
    with tempfile.TemporaryDirectory(prefix="fb-") as work:
        editor = Nvim(kb, FILE, Path(work))
        yield editor
        editor.close()


def mcp_server(kb: Path, nvim: Nvim) -> StdioServerParameters:
    return StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(kb), "--allow-writes"],
                                 env={"XDG_RUNTIME_DIR": str(nvim.runtime), "FOLIO_EMBED_PROVIDER": "none"})


async def call(client: Client, tool: str, args: dict) -> dict:
    res = await client.call_tool(tool, args)
    body = json.loads(res.content[0].text)
    return {"error": res.is_error, **body}


async def wait_for(what: str, probe, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def read_when(client: Client, path: str, needle: str) -> dict:
    """kb_read of `path` once it holds `needle` (Neovim debounces didChange)."""
    async def probe():
        body = await call(client, "kb_read", {"path": path})
        return body if needle in body["text"] else None
    return await wait_for(f"`{needle}` in kb_read", probe)


def paragraph_at(doc: dict, line: int) -> dict:
    return next(e for e in doc["elements"] if e["kind"] == "paragraph" and e["start_line"] == line)


async def test_kb_patch_lands_in_the_neovim_buffer_and_undo_reverts_it(kb, nvim):
    on_disk = (kb / FILE).read_text()
    # The user retitles the document and does not save.
    nvim.run("set_line", line=10, text="# Community Moderators (draft)")
    async with Client(mcp_server(kb, nvim), mode="auto") as client:
        doc = await read_when(client, FILE, "(draft)")
        assert doc["text"] == nvim.text(), "kb_read returns the unsaved buffer"
        outline = await call(client, "kb_outline", {"path": FILE})
        assert outline["headings"][0]["text"] == "Community Moderators (draft)"
        # Search hits in the open document are checked against the buffer.
        async def indexed():
            status = await call(client, "kb_status", {})
            return status["indexing"]["state"] == "idle" and status["indexing"]["last"]
        await wait_for("the index", indexed, timeout=60)
        hits = (await call(client, "kb_search", {"query": "moderators time zone", "limit": 20}))["results"]
        mine = [h for h in hits if h["path"] == FILE]
        assert mine and all(h["editor"] == "Neovim" for h in mine), hits
        assert all("editor" not in h for h in hits if h["path"] != FILE)

        para = paragraph_at(doc, 12)
        res = await call(client, "kb_patch", {"path": FILE, "operations": [
            {"kind": "replace_element", "pointer": para["pointer"], "markdown": "Patched by an agent through the bridge."}]})
        assert not res["error"], res
        assert (res["appliedTo"], res["editor"]) == ("editor", "Neovim")
        state = nvim.run("state")
        assert "Patched by an agent through the bridge.\n" in state["text"]
        assert "# Community Moderators (draft)\n" in state["text"]
        assert "responsible for moderating/administrating" not in state["text"]
        assert state["modified"] is True
        assert (kb / FILE).read_text() == on_disk, "the disk copy changes only when Neovim writes it"

        # The next read sees the patched buffer, and its pointers are the buffer's.
        after = await call(client, "kb_read", {"path": FILE})
        assert after["text"] == state["text"]

        # `u` in Neovim reverts the patch and only the patch.
        assert nvim.run("undo")["text"] == doc["text"]
        nvim.run("write")
        assert (kb / FILE).read_text() == doc["text"]


async def test_a_buffer_change_between_read_and_patch_is_a_conflict(kb, nvim):
    on_disk = (kb / FILE).read_text()
    async with Client(mcp_server(kb, nvim), mode="auto") as client:
        doc = await call(client, "kb_read", {"path": FILE})
        para = paragraph_at(doc, 12)
        patch = {"path": FILE, "operations": [
            {"kind": "replace_element", "pointer": para["pointer"], "markdown": "Patched by an agent."}]}

        # The user rewrites the paragraph the agent read.
        nvim.run("set_line", line=12, text="The user rewrote this line.")
        await read_when(client, FILE, "The user rewrote this line.")
        before = nvim.text()
        res = await call(client, "kb_patch", patch)
        assert res["error"] and res["code"] == "CONFLICT", res
        assert nvim.text() == before and (kb / FILE).read_text() == on_disk

        # The user types while the edit is on its way to Neovim: Neovim skips the edit for
        # the newer buffer, and the result is still CONFLICT with nothing changed.
        doc = await call(client, "kb_read", {"path": FILE})
        para = paragraph_at(doc, 12)
        nvim.run("arm_race", line=20, text="Typed while the agent's edit was in flight.")
        res = await call(client, "kb_patch", {"path": FILE, "operations": [
            {"kind": "replace_element", "pointer": para["pointer"], "markdown": "Patched by an agent."}]})
        assert res["error"] and res["code"] == "CONFLICT", res
        now = nvim.text()
        assert "Typed while the agent's edit was in flight.\n" in now and "Patched by an agent" not in now
        assert (kb / FILE).read_text() == on_disk


async def test_a_file_not_open_is_patched_on_disk_and_neovim_diagnostics_follow(kb, nvim):
    # moderation.md is open and links to `./moderators.md#slack` (line 229); moderators.md is not open.
    assert nvim.run("open", path="communication/moderation.md")["name"].endswith("communication/moderation.md")
    # Close moderators.md: only moderation.md stays open.
    nvim.run("close", path=FILE)

    def slack_diagnostics():
        return [d for d in nvim.run("diagnostics", path="communication/moderation.md") if d[0] == 228]

    await wait_for("diagnostics of moderation.md", lambda: _async(nvim.run("diagnostics", path="communication/moderation.md")))
    assert slack_diagnostics() == []
    async with Client(mcp_server(kb, nvim), mode="auto") as client:
        # The MCP server sees only moderation.md open.
        doc = await call(client, "kb_read", {"path": FILE})
        assert doc["text"] == (kb / FILE).read_text()
        outline = await call(client, "kb_outline", {"path": FILE})
        slack = next(h for top in outline["headings"] for h in top["children"] if h["text"] == "Slack")
        res = await call(client, "kb_patch", {"path": FILE, "operations": [
            {"kind": "replace_element", "pointer": slack["pointer"], "markdown": "## Slack Workspace"}]})
        assert not res["error"], res
        assert res["appliedTo"] == "disk" and "editor" not in res
        assert "## Slack Workspace\n" in (kb / FILE).read_text()
    # folio lsp sees the file change and the link in the open moderation.md breaks.
    found = await wait_for("the broken link's diagnostic", lambda: _async(slack_diagnostics()))
    assert found == [[228, "missing-heading"]]


async def _async(value):
    return value


async def test_kb_move_and_kb_delete_of_an_open_document_go_through_neovim(kb, nvim):
    async with Client(mcp_server(kb, nvim), mode="auto") as client:
        # With unsaved changes, neither is allowed: deleting would drop them, renaming would save them.
        nvim.run("set_line", line=12, text="Unsaved work.")
        await read_when(client, FILE, "Unsaved work.")
        res = await call(client, "kb_delete", {"path": FILE})
        assert res["error"] and res["code"] == "CONFLICT" and "unsaved changes in Neovim" in res["message"], res
        assert (kb / FILE).exists()
        nvim.run("undo")
        await read_when(client, FILE, "responsible for moderating")

        # Saved: Neovim renames the file and its buffer follows; links elsewhere are rewritten on disk.
        res = await call(client, "kb_move", {"sourcePath": FILE, "targetPath": "communication/mods.md"})
        assert not res["error"], res
        assert (res["appliedTo"], res["editor"]) == ("editor", "Neovim")
        assert not (kb / FILE).exists() and (kb / "communication/mods.md").exists()
        assert nvim.run("state")["name"] == str(kb / "communication/mods.md")
        assert "./mods.md#slack" in (kb / "communication/moderation.md").read_text()
        moved = [d for d in res["updated_links"] if d["path"] == "communication/moderation.md"]
        assert moved and moved[0]["appliedTo"] == "disk"

        # And Neovim deletes it, buffer and file.
        res = await call(client, "kb_delete", {"path": "communication/mods.md"})
        assert not res["error"], res
        assert (res["appliedTo"], res["editor"]) == ("editor", "Neovim")
        assert not (kb / "communication/mods.md").exists()
        assert nvim.expr(f"bufexists('{kb / 'communication/mods.md'}')") == "0"

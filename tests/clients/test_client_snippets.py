"""The client snippets of docs/clients.md (and the generic one of README.md), run as written.

`/path/to/notes` becomes a copy of tests/fixtures/foam-docs, and `folio` is the built
binary, first on PATH. Claude Code and Codex are the real CLIs, pinned in
tests/clients/package.json and installed by scripts/test; each runs in a private HOME.
Helix and Zed cannot run here: their configuration is parsed, checked against the keys
those editors document, and the command line it names is started as a language server.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from snippets_support import DOC, REPO, client_bin, search_path

TOOLS = {
    "kb_status", "kb_reindex", "kb_search", "kb_read", "kb_outline", "kb_list_files", "kb_list_topics",
    "kb_links", "kb_graph", "kb_patch", "kb_edit_table", "kb_create", "kb_move", "kb_delete", "kb_download_file",
    "kb_list_images", "kb_load_image", "kb_save_image", "kb_delete_image", "kb_move_image", "kb_create_pdf_book",
    "kb_best_practice",
    "kp_search_skill", "kp_search_knowledge", "kp_contribute_skill", "kp_contribute_knowledge", "kp_validate_unit",
    "kp_reputation_query",
}
PLACEHOLDER = "/path/to/notes"


def fenced(path: Path, heading: str, lang: str, nth: int = 0) -> str:
    """The `nth` ```lang block of the section that starts at the line `heading`."""
    text = path.read_text()
    start = text.index(f"\n{heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    blocks = re.findall(rf"```{lang}\n(.*?)\n```", section, re.S)
    assert len(blocks) > nth, f"no ```{lang} block #{nth} under {heading!r} in {path.name}"
    return blocks[nth]


def env(home: Path, **extra: str) -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "CODEX", "OPENAI"))}
    e.update(HOME=str(home), PATH=search_path(), **extra)
    return e


def run(args: list, home: Path, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env(home, **extra), cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


# --- Claude Code -------------------------------------------------------------------------

def claude_lines() -> list:
    block = fenced(DOC, "## Claude Code", "sh")
    return [line for line in block.splitlines() if line.startswith("claude ")]


def test_claude_code_snippet_has_the_two_lines():
    assert claude_lines() == [
        "claude mcp add folio -- folio mcp --root /path/to/notes",
        "claude mcp add folio -- folio mcp --root /path/to/notes --allow-writes",
    ]


@pytest.mark.parametrize("index", [0, 1])
def test_claude_code_mcp_add_writes_the_server_and_connects(tmp_path, notes, index):
    line = claude_lines()[index].replace(PLACEHOLDER, str(notes))
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    argv = shlex.split(line)
    argv[0] = str(client_bin("claude"))
    added = run(argv, home, project)
    assert added.returncode == 0, added.stderr + added.stdout
    args = ["mcp", "--root", str(notes)] + (["--allow-writes"] if index == 1 else [])
    assert f"Added stdio MCP server folio with command: folio {' '.join(args)} to local config" in added.stdout
    config = json.loads((home / ".claude.json").read_text())
    assert config["projects"][str(project)]["mcpServers"] == {
        "folio": {"type": "stdio", "command": "folio", "args": args, "env": {}}
    }
    # `claude mcp get` starts the server and checks the MCP handshake.
    got = run([str(client_bin("claude")), "mcp", "get", "folio"], home, project)
    assert got.returncode == 0, got.stderr + got.stdout
    lines = [line.strip() for line in got.stdout.splitlines()]
    assert "Status: ✔ Connected" in lines, got.stdout
    assert "Type: stdio" in lines and "Command: folio" in lines, got.stdout
    assert f"Args: {' '.join(args)}" in lines, got.stdout


# --- Codex -------------------------------------------------------------------------------

def codex_toml(notes: Path) -> str:
    return fenced(DOC, "## Codex", "toml").replace(PLACEHOLDER, str(notes))


def test_codex_config_toml_is_read_by_codex(tmp_path, notes):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(codex_toml(notes) + "\n")
    listed = run([str(client_bin("codex")), "mcp", "list", "--json"], home, tmp_path)
    assert listed.returncode == 0, listed.stderr
    servers = json.loads(listed.stdout)
    assert [(s["name"], s["enabled"], s["transport"]) for s in servers] == [
        ("folio", True, {"type": "stdio", "command": "folio", "args": ["mcp", "--root", str(notes)], "env": None, "env_vars": [], "cwd": None})
    ]


def test_codex_mcp_add_writes_the_same_config_toml(tmp_path, notes):
    line = next(l for l in fenced(DOC, "## Codex", "sh").splitlines() if l.startswith("codex "))
    assert line == "codex mcp add folio -- folio mcp --root /path/to/notes"
    home = tmp_path / "home"
    home.mkdir()
    argv = shlex.split(line.replace(PLACEHOLDER, str(notes)))
    argv[0] = str(client_bin("codex"))
    added = run(argv, home, tmp_path)
    assert added.returncode == 0, added.stderr
    assert (home / ".codex" / "config.toml").read_text().strip() == codex_toml(notes).strip()


def test_codex_starts_the_configured_server_and_lists_its_tools(tmp_path, notes):
    """Codex's app-server (the protocol its IDE clients use) starts the MCP servers of
    config.toml; `mcpServerStatus/list` returns what each one answered."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(codex_toml(notes) + "\n")
    proc = subprocess.Popen(
        [str(client_bin("codex")), "app-server"], env=env(home), cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        for message in (
            {"method": "initialize", "id": 0, "params": {"clientInfo": {"name": "folio-tests", "title": "folio tests", "version": "1"}}},
            {"method": "initialized"},
            {"method": "mcpServerStatus/list", "id": 1, "params": {}},
        ):
            proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            message = json.loads(line)
            if message.get("id") == 1:
                break
        else:
            raise AssertionError("codex app-server closed without answering mcpServerStatus/list")
    finally:
        proc.kill()
        proc.wait()
    assert "error" not in message, message
    (server,) = message["result"]["data"]
    assert server["name"] == "folio"
    assert server["serverInfo"]["name"] == "folio"
    assert set(server["tools"]) == TOOLS


# --- generic mcp.json --------------------------------------------------------------------

@pytest.mark.anyio
@pytest.mark.parametrize("source", ["docs/clients.md", "README.md"])
async def test_generic_mcp_json_starts_folio_for_an_mcp_client(notes, source):
    if source == "README.md":
        config = json.loads(fenced(REPO / source, "## Use with an AI agent", "json"))
    else:
        config = json.loads(fenced(DOC, "## Generic `mcp.json`", "json"))
    server = config["mcpServers"]["folio"]
    assert set(server) == {"command", "args"}
    command = shutil.which(server["command"], path=search_path())
    args = [a.replace(PLACEHOLDER, str(notes)) for a in server["args"]]
    async with Client(StdioServerParameters(command=command, args=args, cwd=str(notes.parent)), mode="auto") as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        read = await client.call_tool("kb_read", {"path": "user/tools/cli/search.md"})
        assert not read.is_error
        assert read.structured_content["text"].startswith("# foam search\n")


# --- Helix and Zed: configuration shape, and the language server they would start --------

def lsp_initialize(argv: list, root: Path) -> dict:
    """Starts `argv` as a language server over stdio; returns its `initialize` result."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env(root.parent / "home"))

    def send(message):
        body = json.dumps(message).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive(id):
        while True:
            length = 0
            while (line := proc.stdout.readline().strip()) != b"":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(proc.stdout.read(length))
            if message.get("id") == id and "method" not in message:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})
        result = receive(1)["result"]
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        receive(2)
        send({"jsonrpc": "2.0", "method": "exit"})
        assert proc.wait(timeout=30) == 0
        return result
    finally:
        proc.kill()


def test_helix_languages_toml(notes):
    config = tomllib.loads(fenced(DOC, "## Helix", "toml"))
    # The keys Helix documents for languages.toml (book/src/languages.md).
    assert config == {
        "language-server": {"folio": {"command": "folio", "args": ["lsp"]}},
        "language": [{"name": "markdown", "language-servers": ["folio"]}],
    }
    server = config["language-server"]["folio"]
    result = lsp_initialize([shutil.which(server["command"], path=search_path()), *server["args"]], notes)
    assert result["serverInfo"]["name"] == "folio"


def test_zed_settings_json(notes):
    config = json.loads(fenced(DOC, "## Zed", "json"))
    assert set(config) == {"lsp", "languages"}
    # `lsp.<server>.binary` takes path, arguments, env, ignore_system_version; a language's
    # `language_servers` lists names, `!name` to disable one, `...` for the rest
    # (Zed's docs/src/configuring-languages.md).
    binary = config["lsp"]["folio"]["binary"]
    assert set(binary) <= {"path", "arguments", "env", "ignore_system_version"}
    assert config["languages"] == {"Markdown": {"language_servers": ["folio", "..."]}}
    result = lsp_initialize([shutil.which(binary["path"], path=search_path()), *binary["arguments"]], notes)
    assert result["serverInfo"]["name"] == "folio"

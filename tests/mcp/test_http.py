"""`folio mcp --http`: the MCP conformance suite, bearer tokens, DNS-rebinding protection,
the refusal of exposed addresses, limits and a clean shutdown, against the built binary.

The conformance suite (@modelcontextprotocol/conformance, pinned in
tests/conformance/package.json) needs Node 22 or newer: scripts/test installs Node 24 into
.venv/node and the suite into tests/conformance/node_modules, and passes both as
FOLIO_NODE and FOLIO_CONFORMANCE.
"""

import http.client
import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import REPO, HttpServer, folio_bin

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def post(url: str, body: dict | bytes, headers: dict | None = None):
    """(status, headers, body) of a POST, errors included."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def add_token(tokens: Path, agent: str, scope: str) -> str:
    out = subprocess.run([folio_bin(), "token", "add", agent, "--scope", scope, "--tokens", str(tokens)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def client(url: str, token: str) -> Client:
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=bearer(token))), mode="auto")


# ---------------------------------------------------------------------------------------
# The conformance suite, straight against `folio mcp --http --no-auth` (no stdio bridge).

# Scenario → (passed, total, warnings). `server-sse-polling` warns once: its
# disconnect-and-resume check calls the suite's test-only `test_reconnection` tool, which
# folio does not offer; the priming event (with an id) and the `retry` field pass, and the
# GET with `Last-Event-ID` is accepted (200). folio offers no logging or completion
# capability, so `logging-set-level` and `completion-complete` do not apply.
SCENARIOS = {
    "server-initialize": (1, 1, 0),
    "ping": (1, 1, 0),
    "tools-list": (1, 1, 0),
    "prompts-list": (1, 1, 0),
    "resources-list": (1, 1, 0),
    "dns-rebinding-protection": (2, 2, 0),
    "server-sse-polling": (2, 2, 1),
    "server-sse-multiple-streams": (2, 2, 0),
}


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory):
    kb = tmp_path_factory.mktemp("conf") / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# Alpha\n\nSome text.\n")
    srv = HttpServer(kb, "--no-auth")
    yield srv
    assert srv.stop() == 0


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_conformance_scenario(conformance_server, scenario):
    node = os.environ.get("FOLIO_NODE", "node")
    cli = os.environ.get("FOLIO_CONFORMANCE",
                         str(REPO / "tests/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"))
    assert Path(cli).is_file(), f"{cli} is missing: scripts/test installs the suite (npm ci in tests/conformance)"
    out = subprocess.run([node, cli, "server", "--url", conformance_server.url, "--scenario", scenario],
                         capture_output=True, text=True, timeout=120)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
    m = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", text)
    assert m, text
    passed, total, failed, warnings = map(int, m.groups())
    assert out.returncode == 0, text
    assert (passed, total, warnings) == SCENARIOS[scenario], text
    assert failed == 0, text


# ---------------------------------------------------------------------------------------
# Tokens.

@pytest.fixture
def tokens(tmp_path) -> Path:
    return tmp_path / "config" / "tokens.toml"


def test_401_without_a_token_with_a_wrong_one_and_after_revocation(kb, tokens):
    token = add_token(tokens, "alice", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        metadata_url = f"{srv.origin}/.well-known/oauth-protected-resource/mcp"
        status, headers, body = post(srv.url, INIT)
        assert (status, headers["WWW-Authenticate"], body) == (401, f'Bearer resource_metadata="{metadata_url}"', "")
        status, headers, body = post(srv.url, INIT, bearer("folio_not-a-token"))
        assert (status, headers["WWW-Authenticate"], body) == (
            401, f'Bearer resource_metadata="{metadata_url}", error="invalid_token"', "")
        assert post(srv.url, INIT, bearer(token))[0] == 200

        # The metadata document a spec client reads after the 401 (RFC 9728).
        with urllib.request.urlopen(metadata_url, timeout=10) as r:
            doc = json.loads(r.read())
        assert doc["resource"] == srv.url
        assert doc["scopes_supported"] == ["read", "contribute", "read-write"]
        assert doc["bearer_methods_supported"] == ["header"]

        # Revoked while the server runs: refused at the next request.
        subprocess.run([folio_bin(), "token", "revoke", "alice", "--tokens", str(tokens)], check=True,
                       capture_output=True)
        status, headers, body = post(srv.url, INIT, bearer(token))
        assert (status, body) == (401, "")
        assert 'error="invalid_token"' in headers["WWW-Authenticate"]
    finally:
        assert srv.stop() == 0


@pytest.mark.anyio
async def test_read_only_token_writes_are_permission_denied_read_write_ones_write(kb, tokens):
    reader = add_token(tokens, "reader", "read")
    writer = add_token(tokens, "writer", "read-write")
    # No --allow-writes: with tokens, each token's scope decides.
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        async with client(srv.url, reader) as c:
            assert not (await c.call_tool("kb_read", {"path": "sig-list.md", "max_bytes": 100})).is_error
            res = await c.call_tool("kb_create", {"path": "new.md", "markdown": "# New\n"})
            assert res.is_error
            assert json.loads(res.content[0].text) == {
                "code": "PERMISSION_DENIED",
                "message": "the token of agent `reader` is read-only (scope `read`); `kb_create` needs a read-write "
                           "token (`folio token add reader --scope read-write`)"}
            assert not (kb / "new.md").exists()
        async with client(srv.url, writer) as c:
            res = await c.call_tool("kb_create", {"path": "new.md", "markdown": "# New\n"})
            assert not res.is_error, res.content[0].text
        assert (kb / "new.md").read_text() == "# New\n"
    finally:
        assert srv.stop() == 0
    log = "".join(srv.stderr)
    assert "new.md" not in log  # logs never carry paths or text of documents


SKILL = """---
name: csv-cleanup
description: Clean a CSV export before loading it into the warehouse.
---

# CSV cleanup

- Drop empty rows.
"""


@pytest.mark.anyio
async def test_a_contribute_token_contributes_but_edits_no_file(kb, tokens):
    """The scope for agents and instances sharing a KnowledgePulse registry: contributing
    and validating, not editing, moving or deleting files (another agent's items)."""
    contributor = add_token(tokens, "dora", "contribute")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        async with client(srv.url, contributor) as c:
            res = await c.call_tool("kp_contribute_skill", {"skill_md_content": SKILL, "visibility": "org"})
            assert not res.is_error, res.content[0].text
            path = json.loads(res.content[0].text)["path"]
            assert (kb / path).is_file()
            for tool, args in [("kb_delete", {"path": path}),
                               ("kb_patch", {"path": path, "operations": [{"kind": "insert_after", "pointer": "document",
                                                                           "markdown": "x"}]}),
                               ("kb_create", {"path": "new.md", "markdown": "# New\n"})]:
                res = await c.call_tool(tool, args)
                assert res.is_error, tool
                assert json.loads(res.content[0].text) == {
                    "code": "PERMISSION_DENIED",
                    "message": f"the token of agent `dora` may contribute and validate but not edit files (scope "
                               f"`contribute`); `{tool}` needs a read-write token "
                               f"(`folio token add dora --scope read-write`)"}
            assert (kb / path).read_text().startswith("---\nid: ")
            assert not (kb / "new.md").exists()
    finally:
        assert srv.stop() == 0


@pytest.mark.anyio
async def test_private_knowledge_is_served_over_http_to_the_owners_token_only(kb, tokens, tmp_path):
    """The private KnowledgePulse folder holds the server user's own items: over HTTP only
    a token of `[mcp.http] private_owner` sees and fills it; to any other token its items
    do not exist."""
    owner = add_token(tokens, "alice", "read-write")
    other = add_token(tokens, "mallory", "read-write")
    (tmp_path / "xdg" / "folio").mkdir(parents=True)
    (tmp_path / "xdg" / "folio" / "config.toml").write_text('[mcp.http]\nprivate_owner = "alice"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    srv = HttpServer(kb, "--tokens", str(tokens), env=env)

    async def call(c, tool: str, args: dict) -> tuple[bool, dict]:
        res = await c.call_tool(tool, args)
        return res.is_error, json.loads(res.content[0].text)

    search = {"query": "CSV export warehouse", "min_quality": 0}
    try:
        async with client(srv.url, owner) as c:
            error, out = await call(c, "kp_contribute_skill", {"skill_md_content": SKILL, "visibility": "private"})
            assert not error, out
            skill = out["id"]
            error, out = await call(c, "kp_search_skill", search)
            assert [(r["id"], r["visibility"]) for r in out["results"]] == [(skill, "private")]
            assert (await call(c, "kp_reputation_query", {"agent_id": "alice"}))[1]["contributions"] == 1
        async with client(srv.url, other) as c:
            assert (await call(c, "kp_search_skill", search))[1]["results"] == []
            assert (await call(c, "kp_reputation_query", {"agent_id": "alice"}))[1]["contributions"] == 0
            assert await call(c, "kp_validate_unit", {"unit_id": skill, "valid": False}) == (
                True, {"code": "NOT_FOUND", "message": f"no knowledge unit or skill has id `{skill}`"})
            assert await call(c, "kp_contribute_skill", {"skill_md_content": SKILL.replace("csv-cleanup", "mine"),
                                                        "visibility": "private"}) == (
                True, {"code": "PERMISSION_DENIED",
                       "message": "`private` items are kept for this server's own user: over HTTP only a token of "
                                  "the owner (`[mcp.http] private_owner`) may contribute them; use `org` to share "
                                  "through the knowledge base. Nothing was written"})
    finally:
        assert srv.stop() == 0
    private = list((tmp_path / "data" / "folio" / "knowledge").iterdir())[0]
    assert sorted(p.name for p in (private / "skills").iterdir()) == ["csv-cleanup"]

    # Without private_owner, no token sees it, the owner's included.
    (tmp_path / "xdg" / "folio" / "config.toml").write_text("")
    srv = HttpServer(kb, "--tokens", str(tokens), env=env)
    try:
        async with client(srv.url, owner) as c:
            assert (await call(c, "kp_search_skill", search))[1]["results"] == []
    finally:
        assert srv.stop() == 0


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_a_token_file_inside_the_knowledge_base_is_refused(kb):
    out = subprocess.run([folio_bin(), "mcp", "--root", str(kb), "--http", "127.0.0.1:0",
                          "--tokens", str(kb / ".folio" / "tokens.toml")], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "is inside the knowledge base" in out.stderr


# ---------------------------------------------------------------------------------------
# DNS rebinding, exposed addresses.

def test_foreign_origin_and_host_are_403_before_authentication(kb, tokens):
    token = add_token(tokens, "alice", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        port = srv.origin.rsplit(":", 1)[1]
        status, _, body = post(srv.url, INIT, {"Origin": "http://evil.example.com"})
        assert (status, body) == (403, "Forbidden: Origin `http://evil.example.com` is not allowed (add it with --allowed-origin)\n")
        status, _, body = post(srv.url, INIT, {**bearer(token), "Origin": f"http://localhost:{port}"})
        assert status == 403  # another origin than the one the server was reached at
        status, _, body = post(srv.url, INIT, {**bearer(token), "Host": f"evil.example.com:{port}"})
        assert (status, body) == (403, f"Forbidden: Host `evil.example.com:{port}` is not allowed (add it with --allowed-host)\n")
        assert post(srv.url, INIT, {**bearer(token), "Origin": srv.origin})[0] == 200
    finally:
        assert srv.stop() == 0


def test_non_loopback_addresses_are_refused_without_tls_proxy_and_with_no_auth(kb, tokens):
    def start(*args):
        return subprocess.run([folio_bin(), "mcp", "--root", str(kb), *args], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "FOLIO_EMBED_PROVIDER": "none"})

    out = start("--http", "0.0.0.0:0", "--tokens", str(tokens))
    assert out.returncode != 0
    assert "refusing to serve 0.0.0.0:0 without TLS" in out.stderr
    assert "--behind-proxy" in out.stderr
    out = start("--http", "0.0.0.0:0", "--no-auth", "--behind-proxy")
    assert out.returncode != 0
    assert "--no-auth serves loopback addresses only (127.0.0.1, ::1), not 0.0.0.0:0" in out.stderr
    # The user states that a proxy terminates TLS: it serves, and publishes https URLs.
    srv = HttpServer(kb, "--tokens", str(tokens), "--behind-proxy", "--allowed-host", "kb.example.com",
                     addr="0.0.0.0:0")
    try:
        assert srv.url.startswith("http://0.0.0.0:")
        port = srv.origin.rsplit(":", 1)[1]
        status, headers, _ = post(f"http://127.0.0.1:{port}/mcp", INIT, {"Host": "kb.example.com"})
        assert (status, headers["WWW-Authenticate"]) == (
            401, 'Bearer resource_metadata="https://kb.example.com/.well-known/oauth-protected-resource/mcp"')
    finally:
        assert srv.stop() == 0


# ---------------------------------------------------------------------------------------
# Limits.

def test_rate_limit_per_token_and_body_limit(kb, tokens, tmp_path):
    config = tmp_path / "xdg" / "folio"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[mcp.http]\nrequests_per_minute = 60\nburst = 3\nmax_body_bytes = 2000\n")
    a = add_token(tokens, "a", "read")
    b = add_token(tokens, "b", "read")
    srv = HttpServer(kb, "--tokens", str(tokens), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    try:
        statuses = [post(srv.url, INIT, bearer(a))[0] for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        status, headers, _ = post(srv.url, INIT, bearer(a))
        assert status == 429 and 1 <= int(headers["Retry-After"]) <= 2
        # Another token has its own budget.
        assert post(srv.url, INIT, bearer(b))[0] == 200
        big = json.dumps({**INIT, "params": {**INIT["params"], "pad": "x" * 3000}}).encode()
        assert post(srv.url, big, bearer(b))[0] == 413
        # A body announced as 10 GB is refused before it is sent: the answer comes after
        # the headers and the first bytes, and the connection is closed.
        host, port = srv.origin.rsplit("/", 1)[1].rsplit(":", 1)
        c = http.client.HTTPConnection(host, int(port), timeout=10)
        c.putrequest("POST", "/mcp")
        for name, value in (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                            ("Authorization", f"Bearer {b}"), ("Content-Length", str(10 * 1024 ** 3))):
            c.putheader(name, value)
        c.endheaders(b'{"jsonrpc": "2.0", ')
        r = c.getresponse()
        assert (r.status, r.getheader("Connection"), r.read().decode()) == (
            413, "close", "Payload Too Large: request body exceeds 2000 bytes")
        c.close()
    finally:
        assert srv.stop() == 0


# ---------------------------------------------------------------------------------------
# Shutdown.

def test_sigterm_closes_open_sse_streams_and_exits_0(kb):
    srv = HttpServer(kb, "--no-auth")
    status, headers, _ = post(srv.url, INIT)
    session = headers["Mcp-Session-Id"]
    post(srv.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": session})
    # The standalone GET stream for server messages stays open until the server stops.
    req = urllib.request.Request(srv.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": session})
    stream = urllib.request.urlopen(req, timeout=30)
    assert stream.status == 200
    ended = threading.Event()
    threading.Thread(target=lambda: (stream.read(), ended.set()), daemon=True).start()
    time.sleep(0.3)
    started = time.monotonic()
    assert srv.stop() == 0
    assert ended.wait(10)
    assert time.monotonic() - started < 10


# ---------------------------------------------------------------------------------------
# Sessions: bound to their token, capped, one request per id in flight; strict headers;
# malformed bodies.

def request(url: str, method: str, headers: dict, body: dict | bytes | None = None):
    """(status, body) of any request, errors included."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def open_session(url: str, headers: dict) -> str:
    status, h, body = post(url, INIT, headers)
    assert status == 200, body
    sid = h["Mcp-Session-Id"]
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {**headers, "Mcp-Session-Id": sid})[0] == 202
    return sid


def answer(body: str) -> dict:
    """The JSON-RPC message of an SSE response (its last `data:` line) or a JSON one."""
    data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1] if data else body)


def ping(url: str, headers: dict, sid: str, id: int = 2):
    status, body = request(url, "POST", {**headers, "Mcp-Session-Id": sid},
                           {"jsonrpc": "2.0", "id": id, "method": "ping"})
    return status, (answer(body) if status == 200 else body)


def test_a_session_belongs_to_the_token_that_opened_it(kb, tokens):
    a = add_token(tokens, "a", "read-write")
    b = add_token(tokens, "b", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        sid = open_session(srv.url, bearer(a))
        # Another token cannot use, listen on or end it: to that token it does not exist.
        assert ping(srv.url, bearer(b), sid) == (404, "Not Found: Session not found")
        assert request(srv.url, "DELETE", {**bearer(b), "Mcp-Session-Id": sid})[0] == 404
        assert request(srv.url, "GET", {**bearer(b), "Mcp-Session-Id": sid, "Accept": "text/event-stream"})[0] == 404
        # Its own token still can, then ends it.
        assert ping(srv.url, bearer(a), sid) == (200, {"jsonrpc": "2.0", "id": 2, "result": {}})
        assert request(srv.url, "DELETE", {**bearer(a), "Mcp-Session-Id": sid})[0] == 200
        assert ping(srv.url, bearer(a), sid)[0] == 404
        # An ended or unknown session is 404 for DELETE too, as another token's is.
        assert request(srv.url, "DELETE", {**bearer(a), "Mcp-Session-Id": sid}) == (404, "Not Found: Session not found")
        assert request(srv.url, "DELETE", {**bearer(b), "Mcp-Session-Id": "made-up"}) == (404, "Not Found: Session not found")
    finally:
        assert srv.stop() == 0


def test_session_caps_close_the_least_recently_used_idle_session(kb, tokens, tmp_path):
    config = tmp_path / "xdg" / "folio"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[mcp.http]\nsessions_per_token = 2\nmax_sessions = 3\n")
    a = add_token(tokens, "a", "read")
    b = add_token(tokens, "b", "read")
    srv = HttpServer(kb, "--tokens", str(tokens), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    try:
        a1 = open_session(srv.url, bearer(a))
        a2 = open_session(srv.url, bearer(a))
        assert ping(srv.url, bearer(a), a1)[0] == 200  # a2 is now a's least recently used
        a3 = open_session(srv.url, bearer(a))  # a's cap of 2: a2 goes
        assert [ping(srv.url, bearer(a), s)[0] for s in (a1, a2, a3)] == [200, 404, 200]
        b1 = open_session(srv.url, bearer(b))  # 3 live: the total's cap
        b2 = open_session(srv.url, bearer(b))  # over it: the least recently used of all (a1) goes
        assert [ping(srv.url, bearer(a), s)[0] for s in (a1, a3)] == [404, 200]
        assert [ping(srv.url, bearer(b), s)[0] for s in (b1, b2)] == [200, 200]
    finally:
        assert srv.stop() == 0


def test_a_request_id_already_in_flight_in_the_session_is_refused(kb, tokens):
    import fcntl

    token = add_token(tokens, "w", "read-write")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        sid = open_session(srv.url, bearer(token))
        headers = {**bearer(token), "Mcp-Session-Id": sid}
        create = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                  "params": {"name": "kb_create", "arguments": {"path": "held.md", "markdown": "# Held\n"}}}
        # Another writer holds the root's write lock, so the first request waits for it.
        (kb / ".folio").mkdir(exist_ok=True)
        lock = open(kb / ".folio" / "write.lock", "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        first: list = []
        thread = threading.Thread(target=lambda: first.append(request(srv.url, "POST", headers, create)))
        thread.start()
        time.sleep(1.0)
        assert thread.is_alive()
        status, body = request(srv.url, "POST", headers, {**create, "params": {
            "name": "kb_create", "arguments": {"path": "other.md", "markdown": "# Other\n"}}})
        assert (status, json.loads(body)) == (400, {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600,
            "message": "a request with id 5 is already being answered in this session: use a new id for each request"}})
        # Other ids go through meanwhile.
        assert ping(srv.url, bearer(token), sid, id=6) == (200, {"jsonrpc": "2.0", "id": 6, "result": {}})
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
        thread.join(30)
        status, body = first[0]
        assert status == 200 and not answer(body)["result"].get("isError"), body
        assert (kb / "held.md").read_text() == "# Held\n" and not (kb / "other.md").exists()
        # Once answered, the id may be used again.
        assert ping(srv.url, bearer(token), sid, id=5) == (200, {"jsonrpc": "2.0", "id": 5, "result": {}})
    finally:
        assert srv.stop() == 0


def test_malformed_bodies_are_400_with_their_json_rpc_error(kb, tokens):
    token = add_token(tokens, "a", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        status, body = request(srv.url, "POST", bearer(token), b'{"jsonrpc": "2.0", "id": 1,')
        assert status == 400
        assert json.loads(body) == {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32700, "message": "the body is not JSON: EOF while parsing a value at line 1 column 27"}}
        status, body = request(srv.url, "POST", bearer(token), [INIT])
        assert status == 400 and json.loads(body)["error"]["code"] == -32600
        status, body = request(srv.url, "POST", bearer(token), {"id": 9, "method": "initialize"})
        assert (status, json.loads(body)) == (400, {"jsonrpc": "2.0", "id": 9, "error": {
            "code": -32600, "message": '`jsonrpc` must be "2.0"'}})
        status, body = request(srv.url, "POST", bearer(token),
                               b'{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/list"}')
        assert (status, json.loads(body)) == (400, {"jsonrpc": "2.0", "id": 3, "error": {
            "code": -32600, "message": "a member of the message is given twice"}})
        # Params of the wrong shape in a session: -32602 (invalid params), as over stdio.
        sid = open_session(srv.url, bearer(token))
        for params in [{"name": 5}, {"name": "kb_read", "arguments": [1]}, {}]:
            status, body = request(srv.url, "POST", {**bearer(token), "Mcp-Session-Id": sid},
                                   {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params})
            assert (status, answer(body)) == (200, {"jsonrpc": "2.0", "id": 4, "error": {
                "code": -32602, "message": "Invalid params: tools/call needs params {name: string, arguments?: object}"}})
        status, body = request(srv.url, "POST", {**bearer(token), "Mcp-Session-Id": sid},
                               {"jsonrpc": "2.0", "id": 5, "method": "prompts/get",
                                "params": {"name": "deep_dive", "arguments": []}})
        assert (status, answer(body)) == (200, {"jsonrpc": "2.0", "id": 5, "error": {
            "code": -32602, "message": "Invalid params: prompts/get needs params {name: string, arguments?: object}"}})
    finally:
        assert srv.stop() == 0


def test_host_ports_and_origin_schemes_are_compared_exactly(kb, tokens):
    token = add_token(tokens, "a", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    try:
        port = srv.origin.rsplit(":", 1)[1]
        for host in (f"127.0.0.1:{port}@evil.example", f"127.0.0.1:{int(port) + 1}", "127.0.0.1"):
            status, _, body = post(srv.url, INIT, {**bearer(token), "Host": host})
            assert (status, body) == (403, f"Forbidden: Host `{host}` is not allowed (add it with --allowed-host)\n")
        status, _, body = post(srv.url, INIT, {**bearer(token), "Origin": f"https://127.0.0.1:{port}"})
        assert (status, body) == (
            403, f"Forbidden: Origin `https://127.0.0.1:{port}` is not allowed (add it with --allowed-origin)\n")
        assert post(srv.url, INIT, {**bearer(token), "Host": f"localhost:{port}",
                                    "Origin": f"http://localhost:{port}"})[0] == 200
        # Two Host headers: which one was meant is unknown.
        c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
        c.putrequest("POST", "/mcp", skip_host=True)
        for name, value in (("Host", f"127.0.0.1:{port}"), ("Host", f"evil.example:{port}"),
                            ("Content-Type", "application/json"), ("Authorization", f"Bearer {token}"),
                            ("Content-Length", "2")):
            c.putheader(name, value)
        c.endheaders(b"{}")
        r = c.getresponse()
        assert (r.status, r.read().decode()) == (400, "Bad Request: more than one Host or Origin header\n")
        c.close()
    finally:
        assert srv.stop() == 0


def test_every_connection_of_a_wrong_token_flood_gets_its_401(kb, tokens):
    import http.client
    from concurrent.futures import ThreadPoolExecutor

    add_token(tokens, "a", "read")
    srv = HttpServer(kb, "--tokens", str(tokens))
    host, port = srv.origin.rsplit("/", 1)[1].rsplit(":", 1)
    body = json.dumps(INIT).encode()

    def one(i):
        c = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            c.request("POST", "/mcp", body, {"Content-Type": "application/json",
                                             "Accept": "application/json, text/event-stream",
                                             "Authorization": f"Bearer wrong-{i}"})
            r = c.getresponse()
            r.read()
            return r.status
        except OSError as e:
            return type(e).__name__
        finally:
            c.close()

    try:
        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(one, range(500)))
        assert {s: statuses.count(s) for s in set(statuses)} == {401: 500}
    finally:
        assert srv.stop() == 0


def test_slow_headers_are_cut_off_and_connections_past_the_cap_are_closed(kb, tokens, tmp_path):
    """A slow-header client cannot hold the server: a connection whose request headers are
    not complete within header_read_seconds is closed, one accepted while max_connections
    are open is closed at once, and a normal request is answered once slots are free."""
    import socket

    config = tmp_path / "xdg" / "folio"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("[mcp.http]\nmax_connections = 4\nheader_read_seconds = 1\n")
    token = add_token(tokens, "a", "read")
    srv = HttpServer(kb, "--tokens", str(tokens), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    host, port = srv.origin.rsplit("/", 1)[1].rsplit(":", 1)

    def closed_by_server(s: socket.socket) -> bytes:
        """Everything the server sent until it closed the connection (5 s at most)."""
        s.settimeout(5)
        got = b""
        try:
            while chunk := s.recv(4096):
                got += chunk
        except ConnectionResetError:
            pass
        return got

    try:
        # Four connections that start a request and never finish its headers.
        slow = []
        for _ in range(4):
            s = socket.create_connection((host, int(port)))
            s.sendall(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n".encode())
            slow.append(s)
        # A fifth while the four are open: closed at once, with nothing sent.
        fifth = socket.create_connection((host, int(port)))
        try:
            fifth.sendall(f"GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        except OSError:
            pass  # closed already
        assert closed_by_server(fifth) == b""
        fifth.close()
        # The four are closed by the header time limit (1 s here), with no answer.
        assert [closed_by_server(s) for s in slow] == [b""] * 4
        for s in slow:
            s.close()
        # Complete headers, then a body that stops coming: 408 once the same time is up.
        stalled = socket.create_connection((host, int(port)))
        stalled.sendall((f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                         "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                         "Content-Length: 500\r\n\r\n{").encode())
        answer = closed_by_server(stalled).decode()
        stalled.close()
        assert answer.startswith("HTTP/1.1 408 Request Timeout\r\n"), answer
        assert "connection: close\r\n" in answer.lower(), answer
        assert answer.endswith("\r\n\r\nRequest Timeout: the request body did not arrive within 1 s"), answer
        # Their slots are free again.
        assert post(srv.url, INIT, bearer(token))[0] == 200
    finally:
        assert srv.stop() == 0

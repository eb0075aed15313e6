"""`folio mcp --http` as an OAuth 2.1 resource server, against a real authorization server:
oidc-provider (an OpenID Certified library, pinned in tests/oauth/package.json) started on
loopback by each test (tests/oauth/provider.mjs), folio configured with `[mcp.http.oauth]`.

Tokens are obtained as clients obtain them (client credentials; authorization code with
PKCE through the provider's login and consent pages) and the refused kinds are made the
way an attacker or a broken client would: expired, for another audience, of another
issuer, tampered, `alg: none`, an unknown key id, HS256 signed with the public key.
scripts/test installs the provider (npm ci in tests/oauth) and passes Node as FOLIO_NODE.
"""

import base64
import hashlib
import json
import os
import re
import secrets
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path

import httpx2  # the MCP Python SDK's HTTP client
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from conftest import REPO, HttpServer
from test_http import INIT, add_token, answer, bearer, client, open_session, post, request

PROVIDER = REPO / "tests" / "oauth" / "provider.mjs"


def node() -> str:
    path = os.environ.get("FOLIO_NODE", "")
    assert path and Path(path).is_file(), "FOLIO_NODE must name Node 22 or newer (scripts/test installs it)"
    assert (REPO / "tests/oauth/node_modules/oidc-provider").is_dir(), \
        "tests/oauth/node_modules is missing: scripts/test installs it (npm ci --prefix tests/oauth)"
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_key(kid: str):
    """(private key, private JWK) of a fresh RSA key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = RSAAlgorithm.to_jwk(key, as_dict=True)
    jwk.update(kid=kid, use="sig", alg="RS256")
    return key, jwk


class Provider:
    """oidc-provider on 127.0.0.1:PORT signing with the first of its keys."""

    def __init__(self, tmp: Path, keys: list[dict]):
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.proc = None
        self.start(keys)

    def start(self, keys: list[dict]):
        path = self.tmp / f"keys-{time.monotonic_ns()}.json"
        path.write_text(json.dumps({"keys": keys}))
        self.proc = subprocess.Popen([node(), str(PROVIDER), str(self.port), str(path)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", line + self.proc.stderr.read()

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def restart(self, keys: list[dict]):
        """A key rotation: the same issuer with another key set."""
        self.stop()
        self.start(keys)

    def client_credentials(self, client_id: str, scope: str, resource: str) -> str:
        r = httpx2.post(f"{self.issuer}/token", auth=(client_id, f"{client_id}-secret"),
                       data={"grant_type": "client_credentials", "scope": scope, "resource": resource})
        assert r.status_code == 200, r.text
        return r.json()["access_token"]

    def authorization_code(self, user: str, scope: str, resource: str) -> str:
        """A user's token for web-client: authorization request with PKCE (S256), the
        provider's login and consent pages, then the code exchanged with the verifier."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        redirect = "http://127.0.0.1/callback"
        with httpx2.Client(base_url=self.issuer) as http:
            r = http.get("/auth", params={
                "client_id": "web-client", "response_type": "code", "redirect_uri": redirect,
                "scope": scope, "state": "s1", "resource": resource,
                "code_challenge": challenge, "code_challenge_method": "S256"})
            for prompt in ("login", "consent"):
                while r.status_code in (302, 303) and "/interaction/" not in r.headers["location"]:
                    r = http.get(r.headers["location"])
                assert r.status_code in (302, 303), r.text
                uid = r.headers["location"].rsplit("/", 1)[1]
                page = http.get(f"/interaction/{uid}")
                assert page.status_code == 200 and prompt in page.text.lower(), page.text
                r = http.post(f"/interaction/{uid}", data={"prompt": prompt, "login": user, "password": "x"})
                assert r.status_code in (302, 303), r.text
                r = http.get(r.headers["location"])
            while not r.headers.get("location", "").startswith(redirect):
                assert r.status_code in (302, 303), r.text
                r = http.get(r.headers["location"])
            query = urllib.parse.parse_qs(urllib.parse.urlparse(r.headers["location"]).query)
            assert query["state"] == ["s1"] and query["iss"] == [self.issuer], query
            r = http.post("/token", data={
                "grant_type": "authorization_code", "code": query["code"][0], "redirect_uri": redirect,
                "client_id": "web-client", "code_verifier": verifier, "resource": resource})
            assert r.status_code == 200, r.text
            return r.json()["access_token"]


@pytest.fixture
def keys():
    return {kid: new_key(kid) for kid in ("k1", "k2", "intruder")}


@pytest.fixture
def provider(tmp_path, keys):
    p = Provider(tmp_path, [keys["k1"][1]])
    yield p
    p.stop()


def oauth_server(kb: Path, tmp: Path, issuers: list[str], extra: str = "", tokens: Path | None = None) -> HttpServer:
    """folio mcp --http with [mcp.http.oauth] naming `issuers` (plus `extra` lines)."""
    config = tmp / "xdg" / "folio"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        "[mcp.http.oauth]\nissuers = [" + ", ".join(json.dumps(i) for i in issuers) + "]\n" + extra)
    tokens = tokens or (tmp / "tokens" / "tokens.toml")
    return HttpServer(kb, "--tokens", str(tokens), env={"XDG_CONFIG_HOME": str(tmp / "xdg")})


def challenge(headers) -> str:
    return headers["WWW-Authenticate"]


def call(url: str, token: str, tool: str, arguments: dict):
    """(status, headers, body) of a tools/call in a fresh session."""
    sid = open_session(url, bearer(token))
    return post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}},
                {**bearer(token), "Mcp-Session-Id": sid})


@pytest.mark.anyio
async def test_client_credentials_tokens_read_and_a_read_token_is_asked_to_step_up(kb, tmp_path, provider):
    srv = oauth_server(kb, tmp_path, [provider.issuer])
    try:
        metadata_url = f"{srv.origin}/.well-known/oauth-protected-resource/mcp"
        status, headers, body = post(srv.url, INIT)
        assert (status, challenge(headers), body) == (
            401, f'Bearer resource_metadata="{metadata_url}", scope="read"', "")
        doc = httpx2.get(metadata_url).json()
        assert doc["resource"] == srv.url
        assert doc["authorization_servers"] == [provider.issuer]
        assert doc["scopes_supported"] == ["read", "contribute", "read-write"]

        reader = provider.client_credentials("agent-read", "read", srv.url)
        async with client(srv.url, reader) as c:
            res = await c.call_tool("kb_read", {"path": "sig-list.md", "max_bytes": 60})
            assert not res.is_error, res.content[0].text
        status, headers, body = call(srv.url, reader, "kb_create", {"path": "new.md", "markdown": "# New\n"})
        assert (status, challenge(headers), body) == (
            403, f'Bearer error="insufficient_scope", scope="read-write", resource_metadata="{metadata_url}"',
            "Forbidden: this needs an access token with the scope `read-write`")
        status, headers, _ = call(srv.url, reader, "kp_contribute_skill", {"skill_md_content": "x"})
        assert (status, re.search(r'scope="([^"]+)"', challenge(headers))[1]) == (403, "contribute")
        assert not (kb / "new.md").exists()

        writer = provider.client_credentials("agent-rw", "read read-write", srv.url)
        async with client(srv.url, writer) as c:
            res = await c.call_tool("kb_create", {"path": "new.md", "markdown": "# New\n"})
            assert not res.is_error, res.content[0].text
            # The token's subject, qualified by its issuer, is the agent its contributions
            # are recorded under.
            assert await contributions(c, f"agent-rw@{provider.issuer}") == 1
        assert (kb / "new.md").read_text() == "# New\n"

        # A valid token that grants none of folio's scopes.
        other = provider.client_credentials("agent-other", "other", srv.url)
        status, headers, _ = post(srv.url, INIT, bearer(other))
        assert (status, challenge(headers)) == (
            403, f'Bearer error="insufficient_scope", scope="read", resource_metadata="{metadata_url}"')
    finally:
        assert srv.stop() == 0
    assert f"and OAuth access tokens of {provider.issuer})" in srv.stderr[0]


@pytest.mark.anyio
async def test_a_user_token_from_the_authorization_code_flow_with_pkce(kb, tmp_path, provider):
    srv = oauth_server(kb, tmp_path, [provider.issuer])
    try:
        token = provider.authorization_code("alice", "openid read read-write", srv.url)
        async with client(srv.url, token) as c:
            res = await c.call_tool("kb_create", {"path": "alice.md", "markdown": "# Alice\n"})
            assert not res.is_error, res.content[0].text
            assert await contributions(c, f"alice@{provider.issuer}") == 1
        assert (kb / "alice.md").is_file()
    finally:
        assert srv.stop() == 0


SKILL = """---
name: {name}
description: A skill contributed to learn who the server takes the caller for.
---

# {name}
"""


async def contributions(c, agent: str) -> int:
    """Contributes an org skill as the connected caller, then how many contributions the
    ledger records for `agent`."""
    res = await c.call_tool("kp_contribute_skill", {"skill_md_content": SKILL.format(name=f"probe-{agent}"),
                                                    "visibility": "org"})
    assert not res.is_error, res.content[0].text
    res = await c.call_tool("kp_reputation_query", {"agent_id": agent})
    assert not res.is_error, res.content[0].text
    return json.loads(res.content[0].text)["contributions"]


class Memory:
    """The MCP SDK's token storage, in memory."""

    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


@pytest.mark.anyio
async def test_the_mcp_python_sdk_signs_in_and_steps_up_by_itself(kb, tmp_path, provider):
    """The MCP Python SDK's own OAuth client, as an MCP host runs it: from folio's 401 it
    finds the metadata and the provider, signs the user in with PKCE asking for `read`, and
    on the 403 of a write asks again for `read-write` (step-up). The client is pre-registered
    (web-client): a client that registers itself with `read` only is held to it by this
    provider, so its step-up would be refused by the provider, not by folio."""
    from mcp import Client
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

    srv = oauth_server(kb, tmp_path, [provider.issuer])
    redirect = "http://127.0.0.1/callback"
    asked: list[list[str]] = []
    landed: list[dict] = []

    async def browser(url: str):
        """The user's browser: the provider's login and consent pages, up to the redirect."""
        asked.append(urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["scope"][0].split())
        async with httpx2.AsyncClient() as http:
            r = await http.get(url)
            while not r.headers.get("location", "").startswith(redirect):
                assert r.status_code in (302, 303), r.text
                location = urllib.parse.urljoin(provider.issuer, r.headers["location"])
                if "/interaction/" in location:
                    page = await http.get(location)
                    prompt = "login" if 'name="login"' in page.text else "consent"
                    r = await http.post(location, data={"prompt": prompt, "login": "carol", "password": "x"})
                else:
                    r = await http.get(location)
        landed.append({k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(r.headers["location"]).query).items()})

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(**landed[-1])

    storage = Memory()
    storage.client = OAuthClientInformationFull(client_id="web-client", redirect_uris=[redirect],
                                                token_endpoint_auth_method="none",
                                                grant_types=["authorization_code"], issuer=provider.issuer)
    auth = OAuthClientProvider(
        server_url=srv.url,
        client_metadata=OAuthClientMetadata(redirect_uris=[redirect], grant_types=["authorization_code"],
                                            token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=browser, callback_handler=callback)
    try:
        async with Client(streamable_http_client(srv.url, http_client=create_mcp_http_client(auth=auth)),
                          mode="auto") as c:
            res = await c.call_tool("kb_read", {"path": "sig-list.md", "max_bytes": 60})
            assert not res.is_error, res.content[0].text
            res = await c.call_tool("kb_create", {"path": "carol.md", "markdown": "# Carol\n"})
            assert not res.is_error, res.content[0].text
        assert (kb / "carol.md").read_text() == "# Carol\n"
        assert asked == [["read"], ["read", "read-write"]]
    finally:
        assert srv.stop() == 0


def refusal(url: str, token: str) -> tuple[int, str]:
    status, headers, body = post(url, INIT, bearer(token))
    assert body == ""
    return status, challenge(headers)


def test_every_kind_of_bad_token_is_401_invalid_token_with_why(kb, tmp_path, provider, keys):
    srv = oauth_server(kb, tmp_path, [provider.issuer])
    try:
        good = provider.client_credentials("agent-read", "read", srv.url)
        assert post(srv.url, INIT, bearer(good))[0] == 200
        claims = jwt.decode(good, options={"verify_signature": False})
        k1 = keys["k1"][0]

        def forged(key=k1, kid="k1", alg="RS256", **changes):
            return jwt.encode({**claims, **changes}, key, algorithm=alg, headers={"kid": kid, "typ": "at+jwt"})

        header, payload, signature = good.split(".")
        widened = base64.urlsafe_b64encode(
            json.dumps({**claims, "scope": "read read-write"}).encode()).rstrip(b"=").decode()
        public_pem = k1.public_key().public_bytes(encoding=serialization.Encoding.PEM,
                                                  format=serialization.PublicFormat.SubjectPublicKeyInfo)
        unsigned = ".".join([
            base64.urlsafe_b64encode(b'{"alg":"none","typ":"at+jwt"}').rstrip(b"=").decode(), payload, ""])
        other_audience = provider.client_credentials("agent-read", "read", "https://other.example/mcp")
        now = int(time.time())
        cases = {
            "expired": (forged(exp=now - 3600, iat=now - 7200), "the token has expired"),
            "another audience": (other_audience, f"the token is not for this server (its aud is not {srv.url})"),
            "another issuer": (forged(iss="https://evil.example"),
                               "the token was issued by https://evil.example, which this server does not accept"),
            "tampered": (f"{header}.{widened}.{signature}", "the token's signature does not verify"),
            "alg none": (unsigned, "an unsigned token (alg none) is never accepted"),
            "unknown kid": (forged(key=keys["intruder"][0], kid="intruder"),
                            "the issuer publishes no signing key with kid intruder"),
            "HS256 with the public key": (_hs256(claims, public_pem),
                                          "alg HS256 is a shared-secret algorithm; only the issuer's public keys verify access tokens"),
            "not valid yet": (forged(nbf=now + 3600), "the token is not valid yet (nbf)"),
        }
        for kind, (token, why) in cases.items():
            status, www = refusal(srv.url, token)
            assert status == 401, kind
            assert www.startswith(f'Bearer resource_metadata="{srv.origin}/.well-known/oauth-protected-resource/mcp", '
                                  f'scope="read", error="invalid_token", error_description="'), (kind, www)
            description = www.split('error_description="', 1)[1].rstrip('"')
            assert description.startswith(why.replace('"', "")), (kind, description)
        # An agent claim that is no agent id: a line break would forge a log line.
        status, www = refusal(srv.url, forged(sub="evil\nINFO forged"))
        assert (status, www.split('error_description="', 1)[1]) == (
            401, "the token's sub or client_id claim is not an agent id (1 to 128 characters, no control, "
                 'line-breaking, bidirectional or zero-width characters, no surrounding spaces)"')
        # A long key id is not echoed whole (quotes and the ellipsis are not header text).
        status, www = refusal(srv.url, forged(kid="k" * 500))
        assert (status, www.split('error_description="', 1)[1]) == (
            401, "the issuer publishes no signing key with kid " + "k" * 64 + '"')
        # A claim given twice, scope beside scp, an agent id with a bidirectional control,
        # a token over 16 KiB.
        twice = _rs256(json.dumps(claims)[:-1] + ', "scope": "read read-write"}', k1, "k1")
        for token, why in [
            (twice, "the token repeats a claim"),
            (forged(scp=["read"]), "the token has both a scope and an scp claim; folio reads one"),
            (forged(sub="alice\u202e"), "the token's sub or client_id claim is not an agent id (1 to 128 characters, "
                                         "no control, line-breaking, bidirectional or zero-width characters, no "
                                         "surrounding spaces)"),
            ("x" * 16385, "the token is longer than 16384 bytes"),
        ]:
            status, www = refusal(srv.url, token)
            assert (status, www.split('error_description="', 1)[1]) == (401, why + '"'), www
        # A token of the token file's form is never sent anywhere: revoked or mistyped, it is
        # refused here, saying so.
        status, www = refusal(srv.url, "folio_not-a-token")
        assert www.endswith('error_description="not an active token of this server\'s token file (revoked, or '
                            'mistyped)"'), www
        # Two Authorization headers are one too many.
        import http.client
        conn = http.client.HTTPConnection(srv.url.split("//")[1].split("/")[0], timeout=10)
        conn.putrequest("POST", "/mcp")
        for h, v in [("Authorization", f"Bearer {good}"), ("Authorization", "Bearer other"),
                     ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                     ("Content-Length", "2")]:
            conn.putheader(h, v)
        conn.endheaders(b"{}")
        r = conn.getresponse()
        assert (r.status, r.read()) == (400, b"Bad Request: two Authorization headers; send one")
        conn.close()
        # Paths folio does not serve are 404, not 401 (clients look for the authorization
        # server's metadata here first).
        assert httpx2.get(f"{srv.origin}/.well-known/oauth-authorization-server").status_code == 404
        # After all that, the good token still works.
        assert post(srv.url, INIT, bearer(good))[0] == 200
    finally:
        assert srv.stop() == 0


def _rs256(payload: str, key, kid: str) -> str:
    """An RS256 token whose payload is the JSON text `payload` as written (PyJWT would
    write a dict, which cannot repeat a member)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = b64(json.dumps({"alg": "RS256", "kid": kid}).encode()) + "." + b64(payload.encode())
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64(signature)


def _hs256(claims: dict, secret: bytes) -> str:
    """An HS256 token whose secret is the issuer's public key (the algorithm confusion
    attack); PyJWT refuses to make one, so it is signed here."""
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = b64(b'{"alg":"HS256","kid":"k1"}') + "." + b64(json.dumps(claims).encode())
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def test_a_key_rotation_at_the_provider_is_picked_up(kb, tmp_path, provider, keys):
    srv = oauth_server(kb, tmp_path, [provider.issuer])
    try:
        before = provider.client_credentials("agent-read", "read", srv.url)
        assert post(srv.url, INIT, bearer(before))[0] == 200
        # The provider now signs with k2 and still publishes k1 (a rotation's overlap).
        provider.restart([keys["k2"][1], keys["k1"][1]])
        after = provider.client_credentials("agent-read", "read", srv.url)
        assert jwt.get_unverified_header(after)["kid"] == "k2"
        # folio fetches the keys again for an unknown kid at most every 5 s.
        time.sleep(5.5)
        assert post(srv.url, INIT, bearer(after))[0] == 200
        assert post(srv.url, INIT, bearer(before))[0] == 200
        # k1 withdrawn: its tokens are refused once the keys are fetched again.
        provider.restart([keys["k2"][1]])
        time.sleep(5.5)
        intruder = jwt.encode(jwt.decode(after, options={"verify_signature": False}), keys["intruder"][0],
                              algorithm="RS256", headers={"kid": "intruder"})
        assert refusal(srv.url, intruder)[0] == 401  # makes folio fetch the keys again
        status, www = refusal(srv.url, before)
        assert status == 401 and "no signing key with kid k1" in www, www
    finally:
        assert srv.stop() == 0


def test_opaque_tokens_are_introspected_and_a_revocation_takes_effect_at_once(kb, tmp_path, provider):
    srv = oauth_server(kb, tmp_path, [provider.issuer],
                       'introspection_client_id = "folio-introspector"\n'
                       'introspection_client_secret = "folio-introspector-secret"\n')
    try:
        opaque = provider.client_credentials("agent-opaque", "read", srv.url)
        assert "." not in opaque
        sid = open_session(srv.url, bearer(opaque))
        status, body = request(srv.url, "POST", {**bearer(opaque), "Mcp-Session-Id": sid},
                               {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert status == 200 and "kb_search" in json.dumps(answer(body))
        # A JWT the issuer will not introspect (oidc-provider answers unsupported_token_type)
        # is checked against its keys.
        signed = provider.client_credentials("agent-read", "read", srv.url)
        assert post(srv.url, INIT, bearer(signed))[0] == 200
        r = httpx2.post(f"{provider.issuer}/token/revocation", auth=("agent-opaque", "agent-opaque-secret"),
                       data={"token": opaque})
        assert r.status_code == 200, r.text
        status, www = refusal(srv.url, opaque)
        assert status == 401
        assert 'error_description="the issuer says the token is not active (expired, revoked or unknown)"' in www
    finally:
        assert srv.stop() == 0


def test_folio_tokens_work_beside_oauth_and_an_unreachable_issuer_is_503(kb, tmp_path, provider):
    tokens = tmp_path / "tokens" / "tokens.toml"
    own = add_token(tokens, "bot", "read")
    dead = f"http://127.0.0.1:{free_port()}"
    srv = oauth_server(kb, tmp_path, [provider.issuer, dead], tokens=tokens)
    try:
        assert post(srv.url, INIT, bearer(own))[0] == 200
        assert post(srv.url, INIT, bearer("folio_not-a-token"))[0] == 401
        token = provider.client_credentials("agent-read", "read", srv.url)
        claims = jwt.decode(token, options={"verify_signature": False})
        of_dead = jwt.encode({**claims, "iss": dead}, "x" * 32, algorithm="HS256")
        status, headers, body = post(srv.url, INIT, bearer(of_dead))
        # HS256 is refused before any fetch; an RS256 token of the dead issuer needs its keys.
        assert status == 401
        of_dead = jwt.encode({**claims, "iss": dead}, rsa.generate_private_key(public_exponent=65537, key_size=2048),
                             algorithm="RS256", headers={"kid": "x"})
        status, headers, body = post(srv.url, INIT, bearer(of_dead))
        assert (status, headers["Retry-After"]) == (503, "10")
        assert body == ("Service Unavailable: the access token could not be checked, its issuer could not be "
                        "reached; try again shortly")
        # The server's stderr is read by a thread: wait for the line to arrive.
        logged = f"{dead}/.well-known/oauth-authorization-server: connection refused"
        deadline = time.monotonic() + 10
        while logged not in "".join(srv.stderr) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert logged in "".join(srv.stderr), "".join(srv.stderr)
        # The working issuer is unaffected.
        assert post(srv.url, INIT, bearer(token))[0] == 200
    finally:
        assert srv.stop() == 0


class FakeIssuer:
    """A stand-in authorization server on loopback whose introspection answers each token
    as `answers` says: (status, JSON body)."""

    def __init__(self, answers: dict):
        import http.server
        import threading

        outer = self
        self.calls: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status: int, body: dict):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/.well-known/oauth-authorization-server":
                    self.reply(200, {"issuer": outer.issuer, "introspection_endpoint": f"{outer.issuer}/introspect"})
                else:
                    self.reply(404, {})

            def do_POST(self):
                form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                token = form["token"][0]
                outer.calls.append(token)
                self.reply(*answers[token])

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def test_only_a_failing_issuer_holds_introspection_back_not_a_callers_bad_token(kb, tmp_path):
    answers: dict = {}
    fake = FakeIssuer(answers)
    srv = oauth_server(kb, tmp_path, [fake.issuer],
                       'introspection_client_id = "folio"\nintrospection_client_secret = "s"\n')
    try:
        answers.update(
            good=(200, {"active": True, "aud": srv.url, "iss": fake.issuer, "scope": "read", "client_id": "bot"}),
            junk=(400, {"error": "invalid_request"}),
            boom=(500, {"error": "server_error"}))
        # A token the issuer answers 400 about is refused, and remembered: asked once.
        for _ in range(2):
            status, www = refusal(srv.url, "junk")
            assert (status, www.split('error_description="', 1)[1]) == (
                401, 'the issuer refused to introspect the token (HTTP 400)"')
        assert fake.calls == ["junk"]
        # ... and the issuer is not taken for down: a good token goes through at once.
        assert post(srv.url, INIT, bearer("good"))[0] == 200
        # An issuer error (500) holds introspection back: 503 for every token a while.
        assert post(srv.url, INIT, bearer("boom"))[0] == 503
        status, headers, _ = post(srv.url, INIT, bearer("good"))
        assert (status, headers["Retry-After"]) == (503, "10")
        assert fake.calls == ["junk", "good", "boom"]
    finally:
        assert srv.stop() == 0
        fake.stop()


def test_a_bad_oauth_setting_stops_the_server_with_the_key_named(kb, tmp_path):
    config = tmp_path / "xdg" / "folio"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[mcp.http.oauth]\nissuers = ["http://id.example.com"]\n')
    with pytest.raises(RuntimeError) as e:
        HttpServer(kb, "--tokens", str(tmp_path / "t.toml"), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert "[mcp.http.oauth] issuers: `http://id.example.com` must start with https://" in str(e.value)
    (config / "config.toml").write_text('[mcp.http]\nprivate_owner = "alice@https://other.example"\n'
                                        '[mcp.http.oauth]\nissuers = ["https://id.example.com"]\n')
    with pytest.raises(RuntimeError) as e:
        HttpServer(kb, "--tokens", str(tmp_path / "t.toml"), env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert ("[mcp.http] private_owner = `alice@https://other.example` names an issuer that [mcp.http.oauth] "
            "issuers does not list") in str(e.value)

"""End-to-end tests of the built `folio mcp` binary with the real MCP Python SDK (mcp==2.3.0).

Each scenario runs over stdio and over streamable HTTP (`connect`, conftest.py).
The client connects in its default `auto` mode, so every connection starts with a
`server/discover` probe that folio answers with -32601, then falls back to `initialize`.
"""

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client

from conftest import folio_bin

pytestmark = pytest.mark.anyio

TOOLS = {
    "kb_status", "kb_reindex", "kb_search", "kb_read", "kb_outline", "kb_list_files", "kb_list_topics",
    "kb_links", "kb_graph", "kb_patch", "kb_edit_table", "kb_create", "kb_move", "kb_delete", "kb_download_file",
    "kb_list_images", "kb_load_image", "kb_save_image", "kb_delete_image", "kb_move_image", "kb_create_pdf_book",
    "kb_best_practice",
    "kp_search_skill", "kp_search_knowledge", "kp_contribute_skill", "kp_contribute_knowledge", "kp_validate_unit",
    "kp_reputation_query",
}


async def wait_indexed(client: Client) -> dict:
    for _ in range(300):
        status = (await client.call_tool("kb_status", {})).structured_content
        if status["indexing"]["state"] == "idle" and status["indexing"]["last"]:
            return status
        await asyncio.sleep(0.1)
    raise AssertionError("the index did not finish")


async def test_lists_tools_with_schemas(kb, connect):
    async with connect(kb) as client:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for t in tools:
            assert t.description and len(t.description) > 40, t.name
            assert t.input_schema["type"] == "object", t.name
            if t.name == "kb_load_image":
                # An image block and text, without structured content: no output schema.
                assert t.output_schema is None
            else:
                assert t.output_schema and t.output_schema["type"] == "object", t.name
        search = next(t for t in tools if t.name == "kb_search")
        props = search.input_schema["properties"]
        for field in ["query", "limit", "path_globs", "category", "topic", "tags_any", "tags_all", "date_from", "date_to"]:
            assert field in props and props[field].get("description"), field


async def test_the_first_search_on_a_new_root_waits_for_its_first_index(tmp_path, connect):
    # Enough notes that the first reindex is still running when the first call arrives.
    root = tmp_path / "new-root"
    for i in range(3000):
        note = root / f"n{i // 100:02}" / f"note-{i:04}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# Note {i}\n\nSome text about topic {i} and its neighbours.\n")
    (root / "n07" / "zebra.md").write_text("# Zebra crossings\n\nWhere the zebra crossing is.\n")
    async with connect(root) as client:
        started = time.monotonic()
        body = (await client.call_tool("kb_search", {"query": "zebra crossing", "limit": 3})).structured_content
        waited = time.monotonic() - started
        if body.get("partial"):
            # A loaded machine may need longer than the server's wait (FIRST_INDEX_WAIT,
            # 10 s) for 3,000 notes in a debug build. Then the search must have waited
            # that long, answered from the empty index, and said how far the pass is.
            assert waited >= 9.9, waited
            assert body["results"] == []
            progress = body["index_progress"]
            assert 0 <= progress["done"] <= progress["total"] and progress["total"] in (0, 3001), progress
            await wait_indexed(client)
            body = (await client.call_tool("kb_search", {"query": "zebra crossing", "limit": 3})).structured_content
        assert [r["path"] for r in body["results"]] == ["n07/zebra.md"]
        assert "partial" not in body and "index_progress" not in body
        status = (await client.call_tool("kb_status", {})).structured_content
        assert status["index"]["documents"] == 3001


async def test_search_read_by_pointer_and_patch_a_copy(kb, connect):
    original = (kb / "sig-list.md").read_bytes()
    async with connect(kb, "--allow-writes") as client:
        status = await wait_indexed(client)
        assert status["index"]["documents"] == len(list(kb.rglob("*.md")))
        res = await client.call_tool("kb_search", {"query": "contributor ladder", "limit": 3})
        assert not res.is_error
        body = res.structured_content
        assert json.loads(res.content[0].text) == body  # the same JSON as text
        assert body["low_confidence"] is False and body["filter_applied"] == []
        hit = body["results"][0]
        assert hit["uri"] == "kb://doc/" + hit["path"]
        assert set(hit) >= {"path", "pointer", "heading_path", "start_line", "end_line", "score", "snippet", "indexedSourceHash", "uri"}

        # Read the hit's element by pointer: the source of what it owns.
        read = (await client.call_tool("kb_read", {"path": hit["path"], "pointer": hit["pointer"]})).structured_content
        lines = (kb / hit["path"]).read_text().splitlines()
        assert read["text"].splitlines()[0] == lines[hit["start_line"] - 1]
        assert read["sourceHash"] == hit["indexedSourceHash"]

        # Filters that exclude everything give low confidence, not an error.
        res = await client.call_tool("kb_search", {"query": "contributor ladder", "path_globs": ["sig-network/**"]})
        assert res.structured_content["filter_applied"] == ["path_globs"]

        # Patch the first paragraph of sig-list.md (a copy in a temp dir).
        doc = (await client.call_tool("kb_read", {"path": "sig-list.md"})).structured_content
        para = next(e for e in doc["elements"] if e["kind"] == "paragraph")
        res = await client.call_tool("kb_patch", {"path": "sig-list.md", "operations": [
            {"kind": "replace_element", "pointer": para["pointer"], "markdown": "Patched by the end-to-end test."}]})
        assert not res.is_error, res.content[0].text
        out = res.structured_content
        assert out["indexSynchronized"] is True and out["appliedTo"] == "disk"
        assert out["operations"][0]["pointer"].startswith(para["pointer"].split("~")[0] + "~")
        new = (kb / "sig-list.md").read_bytes()
        assert b"Patched by the end-to-end test." in new
        # Everything outside the paragraph is byte for byte the same.
        start = "\n".join(original.decode().split("\n")[: para["start_line"] - 1])
        assert new.decode().startswith(start)
        assert new.decode().endswith(original.decode().split("\n", para["end_line"])[-1])

        # The same pointer again is now stale: CONFLICT, nothing written.
        res = await client.call_tool("kb_patch", {"path": "sig-list.md", "operations": [
            {"kind": "delete", "pointer": para["pointer"]}]})
        assert res.is_error
        assert json.loads(res.content[0].text)["code"] == "CONFLICT"
        assert (kb / "sig-list.md").read_bytes() == new


async def test_tool_errors_and_read_only(kb, connect):
    async with connect(kb) as client:
        res = await client.call_tool("kb_read", {"path": "../etc/passwd"})
        assert res.is_error
        assert json.loads(res.content[0].text)["code"] == "INVALID_PATH"
        res = await client.call_tool("kb_read", {"path": "readme.md"})
        assert json.loads(res.content[0].text)["code"] == "NOT_FOUND"
        res = await client.call_tool("kb_create", {"path": "new.md", "markdown": "# New\n"})
        assert json.loads(res.content[0].text)["code"] == "PERMISSION_DENIED"
        assert not (kb / "new.md").exists()


async def test_prompts_and_resources(kb, connect):
    async with connect(kb) as client:
        await wait_indexed(client)
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"summarize_topic", "deep_dive", "whats_new", "find_gaps"}
        got = await client.get_prompt("summarize_topic", {"topic": "sig-network"})
        text = got.messages[0].content.text
        assert "kb_search" in text and "low_confidence" in text and "cite the path" in text
        got = await client.get_prompt("whats_new", {"since": "2025-01-31"})
        assert "since 2025-01-31" in got.messages[0].content.text
        # A `since` that is not YYYY-MM-DD is refused instead of being put into the prompt.
        with pytest.raises(Exception) as refused:
            await client.get_prompt("whats_new", {"since": "garbage"})
        assert "since" in str(refused.value) and "YYYY-MM-DD" in str(refused.value)

        resources = (await client.list_resources()).resources
        uris = {str(r.uri) for r in resources}
        assert "kb://topic/" in uris and "kb://topic/sig-network" in uris
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["kb://doc/{+path}"]

        doc = await client.read_resource("kb://doc/sig-list.md")
        assert doc.contents[0].mime_type == "text/markdown"
        assert doc.contents[0].text == (kb / "sig-list.md").read_text()
        topic = await client.read_resource("kb://topic/sig-network")
        assert "kb://doc/sig-network/" in topic.contents[0].text


def rpc(proc, message) -> dict:
    line = message if isinstance(message, str) else json.dumps(message)
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_server_discover_malformed_requests_and_version_negotiation(kb):
    """Raw JSON-RPC over stdio: -32601 for server/discover, errors for malformed input, no crash."""
    proc = subprocess.Popen([folio_bin(), "mcp", "--root", str(kb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env={**os.environ, "FOLIO_EMBED_PROVIDER": "none"})
    try:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}})
        assert reply["id"] == 1 and reply["error"]["code"] == -32601, reply
        # Not JSON, and JSON that is not a request: JSON-RPC errors, and the server keeps serving.
        reply = rpc(proc, "{this is not json")
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        reply = rpc(proc, '{"id": 9, "hello": "world"}')
        assert reply["id"] == 9 and reply["error"]["code"] == -32600, reply
        reply = rpc(proc, "[1, 2]")
        assert reply["error"]["code"] == -32600, reply
        # An rmcp 3.11-style client asks for 2026-07-28: negotiated down.
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert reply["id"] == 2 and reply["result"]["protocolVersion"] == "2025-11-25", reply
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}})
        assert reply["id"] == 3 and reply["error"]["code"] == -32601, reply
        # Arguments that do not fit the tool's schema: a tool error the model can read.
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "kb_read", "arguments": {"nope": 1}}})
        assert reply["id"] == 4 and reply["result"]["isError"] is True, reply
        assert json.loads(reply["result"]["content"][0]["text"])["code"] == "INVALID_ARGUMENT"
        # A whole number written with a fraction is the integer (JSON Schema reads it so); a
        # fraction is refused in JSON's words, not Rust's.
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "kb_list_files", "arguments": {"limit": 2.0}}})
        assert reply["id"] == 7 and reply["result"]["isError"] is False, reply
        assert len(reply["result"]["structuredContent"]["files"]) == 2, reply
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "kb_list_files", "arguments": {"limit": 2.5}}})
        refusal = json.loads(reply["result"]["content"][0]["text"])
        assert refusal["code"] == "INVALID_ARGUMENT", reply
        assert refusal["message"].endswith("invalid type: floating point `2.5`, expected a whole number from 0 to 18446744073709551615"), refusal
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}})
        assert reply["id"] == 6 and "error" in reply, reply
        reply = rpc(proc, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "kb_status", "arguments": {}}})
        assert reply["id"] == 5 and reply["result"]["isError"] is False
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
    assert proc.returncode == 0


async def test_table_edit_and_download(kb, connect):
    async with connect(kb, "--allow-writes") as client:
        doc = (await client.call_tool("kb_read", {"path": "sig-list.md", "max_bytes": 200000})).structured_content
        table = next(e for e in doc["elements"] if e["kind"] == "table")
        read = (await client.call_tool("kb_read", {"path": "sig-list.md", "pointer": table["pointer"]})).structured_content
        columns = [c["name"] for c in read["table"]["columns"]]
        first = read["table"]["rows"][0]["cells"][0]
        res = await client.call_tool("kb_edit_table", {
            "path": "sig-list.md", "pointer": table["pointer"], "action": "update_cells",
            "updates": [{"rowIndex": 0, "column": columns[-1], "value": "edited | by *test*"}]})
        assert not res.is_error, res.content[0].text
        out = res.structured_content
        assert out["table"]["rows"][0]["cells"][0] == first
        assert out["table"]["rows"][0]["cells"][-1] == "edited | by *test*"  # reads back as written
        assert "edited \\| by \\*test\\*" in (kb / "sig-list.md").read_text()

        import base64
        import hashlib
        res = await client.call_tool("kb_download_file", {"path": "LICENSE"})
        assert not res.is_error
        blob = res.content[0].resource
        data = base64.b64decode(blob.blob)
        assert data == (kb / "LICENSE").read_bytes()
        meta = res.structured_content
        assert meta == {"path": "LICENSE", "mimeType": "application/octet-stream", "bytes": len(data),
                        "sha256": hashlib.sha256(data).hexdigest()}

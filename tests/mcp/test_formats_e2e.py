"""Documents other than Markdown through `folio mcp` and the MCP Python SDK, over stdio
and streamable HTTP: a PDF (two pages, one Japanese), a Word document with a table, a
presentation, a workbook of two sheets, a CSV file, plain text and source files in
eight languages. For each, a search finds a word only it holds, with the hit's lines
(and page, and the definition for code); kb_read returns those lines, and `kb://doc/`
the extracted text as text/plain. Markdown hits carry none of the new keys. A ZIP bomb,
an encrypted PDF, a truncated DOCX, a PDF whose form draws itself and a workbook whose
reader asks for 512 GiB beside them are skipped (a page tree that lists itself is read, empty), and the server answers throughout; a text file written while it runs is found.
"""

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.anyio

FIXTURES = REPO / "tests" / "fixtures" / "formats"

CODE = ["rs", "py", "ts", "js", "go", "java", "c", "cpp"]

# word → (path, start_line, end_line, page, symbol_kind, symbol)
EXPECTED = {
    "zephyrometer": ("manual.pdf", 1, 2, 1, None, None),
    "羽根": ("manual.pdf", 4, 5, 2, None, None),
    "quokkaberry": ("report.docx", 5, 9, None, None, None),
    "marmalade": ("slides.pptx", 5, 7, None, None, None),
    "pangolin": ("budget.xlsx", 8, 12, None, None, None),
    "narwhal": ("inventory.csv", 1, 3, None, None, None),
    "heliotrope": ("notes.txt", 1, 5, None, None, None),
    "tardigrades": ("src/example.py", 12, 14, None, "function_definition", "tardigrade_index"),
    "earthworms": ("src/lib.rs", 24, 27, None, "function_item", "count_earthworms"),
    "kumquat": ("src/app.ts", 6, 9, None, "function_declaration", "planKumquatHarvest"),
    "saffron": ("src/util.js", 3, 4, None, "arrow_function", "roundSaffron"),
    "axolotl": ("src/main.go", 10, 13, None, "method_declaration", "Mist"),
    "quillwort": ("src/Main.java", 7, 10, None, "method_declaration", "deposit"),
    "monsoon": ("src/buffer.c", 8, 15, None, "function_definition", "wettest_monsoon"),
    "pippin": ("src/matrix.cpp", 8, 9, None, "function_definition", "countPippins"),
}


def make_root(tmp_path: Path, monkeypatch) -> Path:
    # The HTTP transport's rate limit (a burst of 60) would refuse this many calls.
    config = tmp_path / "xdg" / "folio" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[mcp.http]\nrequests_per_minute = 100000\nburst = 10000\n", encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    root = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb", root)
    for bad in (FIXTURES / "bad").iterdir():
        shutil.copy(bad, root / bad.name)
    enabled = ["txt", "csv", "xlsx", "docx", "pptx", "pdf", *CODE]
    (root / "folio.toml").write_text(f"[parsers]\nenabled = {enabled!r}\n".replace("'", '"'), encoding="utf-8")
    return root


async def idle(client) -> dict:
    for _ in range(600):
        status = (await client.call_tool("kb_status", {})).structured_content
        indexing = status["indexing"]
        if indexing["state"] == "idle" and indexing["pending_changes"] == 0 and indexing["full_passes"] >= 1:
            return status
        await asyncio.sleep(0.05)
    raise AssertionError(f"indexing never went idle: {status['indexing']}")


async def search(client, query: str) -> list[dict]:
    result = await client.call_tool("kb_search", {"query": query, "mode": "lexical"})
    return result.structured_content["results"]


async def test_every_format_is_searchable_and_readable_with_its_citation(connect, tmp_path, monkeypatch):
    root = make_root(tmp_path, monkeypatch)
    async with connect(root) as client:
        await idle(client)
        for word, (path, start, end, page, kind, symbol) in EXPECTED.items():
            hits = await search(client, word)
            assert [h["path"] for h in hits] == [path], (word, hits)
            hit = hits[0]
            assert (hit["start_line"], hit["end_line"]) == (start, end), (word, hit)
            assert (hit.get("page"), hit.get("symbol_kind"), hit.get("symbol")) == (page, kind, symbol), (word, hit)
            for key, value in (("page", page), ("symbol_kind", kind), ("symbol", symbol)):
                assert (key in hit) == (value is not None), (word, key, hit)

            lines = (await client.call_tool("kb_read", {"path": path, "pointer": hit["pointer"]})).structured_content
            assert (lines["start_line"], lines["end_line"]) == (start, end), (word, lines)
            assert word in lines["text"], (word, lines["text"])
            assert lines["format"] != "markdown" and "read-only" in lines["readOnly"]

            whole = (await client.call_tool("kb_read", {"path": path})).structured_content
            assert whole["start_line"] == 1 and word in whole["text"]
            resource = await client.read_resource(f"kb://doc/{path}")
            assert resource.contents[0].mime_type == "text/plain"
            assert resource.contents[0].text == whole["text"]

        # Source and plain text are read as they are: their lines are the file's.
        example = (await client.call_tool("kb_read", {"path": "src/example.py"})).structured_content
        assert example["text"] == (root / "src" / "example.py").read_text(encoding="utf-8")
        assert example["format"] == "code:python"

        # Markdown hits have none of the new keys.
        note = (await search(client, "ordinary"))[0]
        assert note["path"] == "readme.md"
        assert not {"page", "symbol_kind", "symbol"} & note.keys()


async def test_unreadable_documents_are_skipped_with_reasons_and_new_files_are_found(connect, tmp_path, monkeypatch):
    root = make_root(tmp_path, monkeypatch)
    async with connect(root) as client:
        status = await idle(client)
        last = status["indexing"]["last"]
        assert (last["ok"], last["skipped"]) == (True, 5), last
        # kb_status names them, as folio doctor does.
        left_out = status["left_out"]
        assert [s["path"] for s in left_out["skipped"]] == [
            "bomb.docx", "locked.pdf", "sparse.xlsx", "truncated.docx", "xform-loop.pdf"
        ], left_out
        assert {s["reason"] for s in left_out["skipped"]} == {"not-extracted"}, left_out
        assert left_out["without_text"] == ["page-loop.pdf"], left_out
        assert left_out["withheld"] == [], left_out
        reasons = {
            "bomb.docx": "more than 1000-fold (a ZIP bomb's mark)",
            "locked.pdf": "encrypted: folio reads no password-protected document",
            "truncated.docx": "not a readable ZIP file",
            "xform-loop.pdf": "its form XObject 6 0 R draws itself (an object loop)",
            # calamine asks for 512 GiB: the worker process dies, the server answers.
            "sparse.xlsx": "the spreadsheet parser failed on this file: the parser ran out of its 2048 MiB of memory",
        }
        for path, reason in reasons.items():
            refused = await client.call_tool("kb_read", {"path": path})
            assert refused.is_error, path
            body = json.loads(refused.content[0].text)
            assert body["code"] == "UNSUPPORTED_FORMAT" and reason in body["message"], body
            assert await search(client, path.split(".")[0]) == []
        # A page tree that lists itself ends the walk: indexed, with no text found in it.
        page_loop = (await client.call_tool("kb_read", {"path": "page-loop.pdf"})).structured_content
        assert (page_loop["text"], page_loop["format"]) == ("", "pdf")

        (root / "later.txt").write_text("A lyrebird sang at dawn.\n", encoding="utf-8")
        for _ in range(100):
            hits = await search(client, "lyrebird")
            if hits:
                break
            await asyncio.sleep(0.05)
        assert [(h["path"], h["start_line"]) for h in hits] == [("later.txt", 1)]
        (root / "later.txt").unlink()
        for _ in range(100):
            if not await search(client, "lyrebird"):
                break
            await asyncio.sleep(0.05)
        assert await search(client, "lyrebird") == []

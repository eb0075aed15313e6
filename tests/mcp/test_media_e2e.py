"""The image tools, the PDF book and best-practice documents end to end: the built
`folio mcp` driven by the MCP Python SDK.

Downloads for kb_save_image come from a local HTTPS server (image_server.py) whose
certificate only this test trusts; the server starts `folio mcp` with the test-only
FOLIO_TEST_FETCH_CA and FOLIO_TEST_FETCH_LOOPBACK. Refused addresses (private, loopback,
link-local) are refused before any connection, so no traffic leaves 127.0.0.1.
"""

import base64
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from PIL import Image
from pypdf import PdfReader

from conftest import folio_bin
from image_server import COVER, PHOTO, ImageServer, gif, jpeg, png, webp

pytestmark = pytest.mark.anyio

IMAGE_TOOLS = {"kb_list_images", "kb_load_image", "kb_save_image", "kb_delete_image", "kb_move_image"}


def server(root: Path, *extra: str, env: dict | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root), *extra],
                                 env={"FOLIO_EMBED_PROVIDER": "none", **(env or {})})


def meta(path: str, data: bytes, mime: str) -> dict:
    return {"path": path, "mimeType": mime, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def error(res) -> dict:
    assert res.is_error, res
    return json.loads(res.content[0].text)


def snapshot(root: Path) -> dict:
    """Every file and folder under root except .folio, with its bytes."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel == ".folio" or rel.startswith(".folio/"):
            continue
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel + "/"] = None
        else:
            out[rel] = p.read_bytes()
    return out


def free_port() -> int:
    """A port nothing listens on (bound and released), for redirects that must not be followed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def root(tmp_path) -> Path:
    r = tmp_path / "kb"
    r.mkdir()
    (r / "notes.md").write_text("# Notes\n\nSee ![cover](images/cover.png).\n")
    return r


@pytest.fixture
def image_server(tmp_path):
    srv = ImageServer(tmp_path, free_port())
    yield srv
    srv.close()


def fetch_env(srv: ImageServer, loopback: bool = True, ca: bool = True) -> dict:
    env = {}
    if ca:
        env["FOLIO_TEST_FETCH_CA"] = str(srv.ca_pem)
    if loopback:
        env["FOLIO_TEST_FETCH_LOOPBACK"] = f"127.0.0.1:{srv.port}"
    return env


async def test_image_tools_are_listed_with_their_contracts(root):
    async with Client(server(root), mode="auto") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert IMAGE_TOOLS | {"kb_create_pdf_book", "kb_best_practice"} <= set(tools)
        # kb_load_image answers with an image block and text, no structured content.
        assert tools["kb_load_image"].output_schema is None
        for name in IMAGE_TOOLS - {"kb_load_image"}:
            assert tools[name].output_schema["type"] == "object", name
        save = tools["kb_save_image"]
        assert save.meta == {"openai/fileParams": ["file"]}
        file_schema = save.input_schema["properties"]["file"]
        assert set(file_schema["properties"]) == {"download_url", "file_id", "mime_type", "file_name"}
        assert set(file_schema["required"]) == {"download_url", "file_id"}
        assert tools["kb_list_images"].input_schema["properties"]["pageSize"]["maximum"] == 200
        book = tools["kb_create_pdf_book"].input_schema["properties"]
        assert book["pageFormat"]["enum"] == ["a4", "a5", "a6", "b5", "letter"]
        assert book["style"]["enum"] == ["compact", "classic", "modern", "technical", "academic"]
        assert book["profile"]["enum"] == ["screen", "standard", "print"]


async def test_list_orders_case_insensitively_and_pages_across_a_deletion(root):
    files = {"b.png": png(1, 1, (0, 0, 0)), "A.png": png(2, 1, (0, 0, 0)), "a.png": png(3, 1, (0, 0, 0)),
             "docs/x.JPG": jpeg(2, 2, (1, 1, 1)), "docs/Y.webp": webp(2, 2, (1, 1, 1)),
             "images/z.gif": gif(2, 2, (0, 0, 0), (9, 9, 9)), "notes.txt": b"text", "art.svg": b"<svg/>"}
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    entry = lambda p, mime: {"path": p, "mimeType": mime, "bytes": len(files[p])}  # noqa: E731
    async with Client(server(root, "--allow-writes"), mode="auto") as client:
        res = await client.call_tool("kb_list_images", {})
        assert res.structured_content == {"images": [
            entry("A.png", "image/png"), entry("a.png", "image/png"), entry("b.png", "image/png"),
            entry("docs/x.JPG", "image/jpeg"), entry("docs/Y.webp", "image/webp"), entry("images/z.gif", "image/gif"),
        ], "nextCursor": None}
        page1 = (await client.call_tool("kb_list_images", {"pageSize": 2})).structured_content
        assert [e["path"] for e in page1["images"]] == ["A.png", "a.png"]
        # The image the cursor ends on is deleted before the next page is asked for.
        deleted = await client.call_tool("kb_delete_image", {"path": "a.png"})
        assert deleted.structured_content == {"path": "a.png", "deleted": True}
        assert not (root / "a.png").exists()
        page2 = (await client.call_tool("kb_list_images", {"pageSize": 2, "cursor": page1["nextCursor"]})).structured_content
        assert [e["path"] for e in page2["images"]] == ["b.png", "docs/x.JPG"]
        page3 = (await client.call_tool("kb_list_images", {"pageSize": 2, "cursor": page2["nextCursor"]})).structured_content
        assert page3 == {"images": [entry("docs/Y.webp", "image/webp"), entry("images/z.gif", "image/gif")],
                         "nextCursor": None}
        for bad in [{"pageSize": 0}, {"pageSize": 201}, {"cursor": "not-a-cursor"}]:
            assert error(await client.call_tool("kb_list_images", bad))["code"] == "INVALID_ARGUMENT", bad


async def test_load_returns_an_image_block_then_metadata_and_a_gif_as_a_png_frame(root):
    data = {"p.png": png(3, 2, (10, 20, 30)), "j.jpeg": jpeg(3, 2, (200, 100, 50)), "w.webp": webp(3, 2, (5, 6, 7))}
    mimes = {"p.png": "image/png", "j.jpeg": "image/jpeg", "w.webp": "image/webp"}
    for path, b in data.items():
        (root / path).write_bytes(b)
    animated = gif(4, 3, (255, 0, 0), (0, 0, 255))
    (root / "anim").mkdir()
    (root / "anim" / "a.gif").write_bytes(animated)
    async with Client(server(root), mode="auto") as client:
        for path, b in data.items():
            res = await client.call_tool("kb_load_image", {"path": path})
            assert not res.is_error
            assert res.structured_content is None
            assert [c.type for c in res.content] == ["image", "text"]
            assert res.content[0].mime_type == mimes[path]
            assert base64.b64decode(res.content[0].data) == b
            assert json.loads(res.content[1].text) == meta(path, b, mimes[path])
        res = await client.call_tool("kb_load_image", {"path": "anim/a.gif"})
        assert res.content[0].mime_type == "image/png"
        frame = Image.open(io.BytesIO(base64.b64decode(res.content[0].data)))
        assert frame.format == "PNG" and frame.size == (4, 3)
        assert set(frame.convert("RGB").getdata()) == {(255, 0, 0)}
        # The metadata describes the GIF, which is unchanged.
        assert json.loads(res.content[1].text) == meta("anim/a.gif", animated, "image/gif")
        assert (root / "anim" / "a.gif").read_bytes() == animated

        (root / "fake.png").write_bytes(b"plain text")
        (root / "empty.png").write_bytes(b"")
        os.symlink(root / "p.png", root / "link.png")
        for path, code in [("fake.png", "UNSUPPORTED_FORMAT"), ("empty.png", "UNSUPPORTED_FORMAT"),
                           ("notes.md", "UNSUPPORTED_FORMAT"), ("link.png", "NOT_FOUND"),
                           ("../p.png", "INVALID_PATH"), ("missing.png", "NOT_FOUND")]:
            assert error(await client.call_tool("kb_load_image", {"path": path}))["code"] == code, path


async def test_save_from_the_local_https_server_and_inline(root, image_server):
    srv = image_server
    async with Client(server(root, "--allow-writes", env=fetch_env(srv)), mode="auto") as client:
        ref = {"download_url": srv.url("/files/cover.png?sig=secret"), "file_id": "file_1", "mime_type": "image/png"}
        res = await client.call_tool("kb_save_image", {"file": ref, "altText": "Cover"})
        assert not res.is_error, res.content[0].text
        assert res.structured_content == {**meta("images/cover.png", COVER, "image/png"),
                                          "markdown": "![Cover](images/cover.png)"}
        assert json.loads(res.content[0].text) == res.structured_content
        assert (root / "images" / "cover.png").read_bytes() == COVER
        # The same name again: a numeric suffix, never a replacement.
        res = await client.call_tool("kb_save_image", {"file": ref, "fileName": "cover.png"})
        assert res.structured_content["path"] == "images/cover-2.png"
        # A redirect on the same (allowed) server is followed; the name comes from file_name.
        res = await client.call_tool("kb_save_image", {
            "file": {"download_url": srv.url("/files/redirect"), "file_id": "f2", "file_name": "front.png"}})
        assert res.structured_content["path"] == "images/front.png"
        # A download whose own name would make a hidden file gets the name `image`.
        res = await client.call_tool("kb_save_image", {
            "file": {"download_url": srv.url("/files/redirect"), "file_id": "f2b", "file_name": ".png"}})
        assert res.structured_content["path"] == "images/image.png"
        # A generic Content-Type: the signature decides; no name anywhere but the URL's.
        res = await client.call_tool("kb_save_image", {"file": {"download_url": srv.url("/files/blob"), "file_id": "f3"}})
        assert res.structured_content == {**meta("images/blob.png", COVER, "image/png"),
                                          "markdown": "![blob](images/blob.png)"}
        # An explicit target with new folders.
        res = await client.call_tool("kb_save_image", {
            "file": {"download_url": srv.url("/files/photo.jpg"), "file_id": "f4"}, "targetPath": "chapters/01/photo 1.jpg"})
        assert res.structured_content == {**meta("chapters/01/photo 1.jpg", PHOTO, "image/jpeg"),
                                          "markdown": "![photo 1](chapters/01/photo%201.jpg)"}
        # Inline data, as an MCP image block carries it.
        inline = {"data": base64.b64encode(PHOTO).decode(), "mimeType": "image/jpeg"}
        res = await client.call_tool("kb_save_image", {"image": inline, "fileName": "inline"})
        assert res.structured_content == {**meta("images/inline.jpg", PHOTO, "image/jpeg"),
                                          "markdown": "![inline](images/inline.jpg)"}
        res = await client.call_tool("kb_save_image", {"image": inline, "fileName": "inline.jpg"})
        assert res.structured_content["path"] == "images/inline-2.jpg"


async def test_save_refuses_bad_input_and_writes_nothing(root, image_server, tmp_path):
    srv = image_server
    (root / "images").mkdir()
    (root / "images" / "taken.png").write_bytes(COVER)
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", root / "linked")
    before = snapshot(root)
    ref = lambda path, **kw: {"file": {"download_url": srv.url(path), "file_id": "f", **kw}}  # noqa: E731
    url = lambda u: {"file": {"download_url": u, "file_id": "f"}}  # noqa: E731
    cover_inline = {"data": base64.b64encode(COVER).decode(), "mimeType": "image/png"}
    cases = [
        ("bytes that are not an image under .png", ref("/files/text.png"), "UNSUPPORTED_FORMAT"),
        ("an empty file", ref("/files/empty.png"), "UNSUPPORTED_FORMAT"),
        ("a declared type the bytes are not", ref("/files/mislabeled.jpg"), "UNSUPPORTED_FORMAT"),
        ("a file reference's type the bytes are not", ref("/files/cover.png", mime_type="image/webp"), "UNSUPPORTED_FORMAT"),
        ("over 25 MiB, announced", ref("/files/huge-announced.png"), "INVALID_ARGUMENT"),
        ("over 25 MiB, streamed", ref("/files/huge-streamed.png"), "INVALID_ARGUMENT"),
        ("an http:// URL", url(f"http://127.0.0.1:{srv.port}/files/cover.png"), "INVALID_ARGUMENT"),
        ("a redirect to http://", ref("/files/to-http"), "INVALID_ARGUMENT"),
        ("a redirect to another loopback port", ref("/files/to-loopback"), "PERMISSION_DENIED"),
        ("a redirect to a name resolving to loopback", ref("/files/to-localhost"), "PERMISSION_DENIED"),
        ("a redirect to a private address", ref("/files/to-private"), "PERMISSION_DENIED"),
        ("a private address", url("https://192.168.10.20/cover.png"), "PERMISSION_DENIED"),
        ("the link-local metadata address", url("https://169.254.169.254/latest/meta-data"), "PERMISSION_DENIED"),
        ("a name resolving to loopback", url(f"https://localhost:{srv.other_port}/cover.png"), "PERMISSION_DENIED"),
        ("a 404", ref("/files/missing.png"), "NOT_FOUND"),
        ("targetPath outside the root", {**ref("/files/cover.png"), "targetPath": "../outside.png"}, "INVALID_PATH"),
        ("targetPath absolute", {**ref("/files/cover.png"), "targetPath": "/tmp/x.png"}, "INVALID_PATH"),
        ("targetPath through a symlinked folder", {**ref("/files/cover.png"), "targetPath": "linked/x.png"}, "NOT_FOUND"),
        ("targetPath over an existing file", {**ref("/files/cover.png"), "targetPath": "images/taken.png"}, "ALREADY_EXISTS"),
        ("targetPath over a note", {**ref("/files/cover.png"), "targetPath": "notes.md"}, "UNSUPPORTED_FORMAT"),
        ("targetPath with fileName", {**ref("/files/cover.png"), "targetPath": "a/b.png", "fileName": "b.png"}, "INVALID_ARGUMENT"),
        ("both file and image", {**ref("/files/cover.png"), "image": cover_inline}, "INVALID_ARGUMENT"),
        ("neither file nor image", {"fileName": "x.png"}, "INVALID_ARGUMENT"),
        ("inline data that is not base64", {"image": {"data": "@@@", "mimeType": "image/png"}}, "INVALID_ARGUMENT"),
        ("inline text under image/png", {"image": {"data": base64.b64encode(b"hello").decode(), "mimeType": "image/png"}},
         "UNSUPPORTED_FORMAT"),
    ]
    async with Client(server(root, "--allow-writes", env=fetch_env(srv)), mode="auto") as client:
        for what, args, code in cases:
            body = error(await client.call_tool("kb_save_image", args))
            assert body["code"] == code, (what, body)
            assert "secret" not in body["message"]
            assert snapshot(root) == before, what
        body = error(await client.call_tool("kb_save_image", ref("/files/to-private")))
        assert body["message"] == ("`https://10.255.255.1/cover.png`: 10.255.255.1 resolves to 10.255.255.1, a private address "
                                   "(10.0.0.0/8); downloads only reach public addresses (reached by a redirect)")
    # Nothing listens at the refused redirect targets: a connection attempt would have been
    # a "download failed" INVALID_ARGUMENT, not the PERMISSION_DENIED asserted above.


async def test_the_test_allowances_are_off_by_default(root, image_server):
    srv = image_server
    ref = {"file": {"download_url": srv.url("/files/cover.png"), "file_id": "f"}}
    # Without the loopback allowance the local server is an address downloads never reach.
    async with Client(server(root, "--allow-writes", env=fetch_env(srv, loopback=False)), mode="auto") as client:
        assert error(await client.call_tool("kb_save_image", ref))["code"] == "PERMISSION_DENIED"
    # Without the test's root certificate its certificate is not trusted.
    async with Client(server(root, "--allow-writes", env=fetch_env(srv, ca=False)), mode="auto") as client:
        body = error(await client.call_tool("kb_save_image", ref))
        assert body["code"] == "INVALID_ARGUMENT" and "download failed" in body["message"], body
    # A workspace cannot turn them on: folio.toml rejects unknown keys, so the server does not start.
    (root / "folio.toml").write_text('[fetch]\ntest_loopback = "127.0.0.1:1"\n')
    proc = subprocess.run([folio_bin(), "mcp", "--root", str(root)], input="", capture_output=True, text=True,
                          env={**os.environ, "FOLIO_EMBED_PROVIDER": "none"}, timeout=60)
    assert proc.returncode != 0 and "unknown field `fetch`" in proc.stderr, proc.stderr
    assert not (root / "images").exists()


async def test_move_and_delete(root):
    (root / "images").mkdir()
    (root / "images" / "cover.png").write_bytes(COVER)
    (root / "ch").mkdir()
    (root / "ch" / "one.md").write_text("![c](../images/cover.png) and ![[cover.png]]\n")
    sha = hashlib.sha256(COVER).hexdigest()
    async with Client(server(root, "--allow-writes"), mode="auto") as client:
        before = snapshot(root)
        wrong = await client.call_tool("kb_move_image", {"sourcePath": "images/cover.png", "targetPath": "art/cover.png",
                                                         "expectedSha256": "0" * 64})
        assert error(wrong)["code"] == "CONFLICT"
        for args, code in [({"targetPath": "art/cover.jpg"}, "UNSUPPORTED_FORMAT"),
                           ({"targetPath": "notes.md"}, "UNSUPPORTED_FORMAT"),
                           ({"targetPath": "../cover.png"}, "INVALID_PATH"),
                           ({"expectedSha256": "xyz", "targetPath": "art/c.png"}, "INVALID_ARGUMENT")]:
            res = await client.call_tool("kb_move_image", {"sourcePath": "images/cover.png", **args})
            assert error(res)["code"] == code, args
        assert snapshot(root) == before
        # The right hash: moved, Markdown untouched (no update_links).
        res = await client.call_tool("kb_move_image", {"sourcePath": "images/cover.png", "targetPath": "art/cover.png",
                                                       "expectedSha256": sha})
        assert res.structured_content == {"previousPath": "images/cover.png", "path": "art/cover.png", "sha256": sha}
        assert (root / "art" / "cover.png").read_bytes() == COVER
        assert (root / "notes.md").read_text() == "# Notes\n\nSee ![cover](images/cover.png).\n"
        # Back without a hash, then again with update_links: references follow, all at once.
        res = await client.call_tool("kb_move_image", {"sourcePath": "art/cover.png", "targetPath": "images/cover.png"})
        assert res.structured_content == {"previousPath": "art/cover.png", "path": "images/cover.png", "sha256": sha}
        res = await client.call_tool("kb_move_image", {"sourcePath": "images/cover.png", "targetPath": "pics/front.png",
                                                       "update_links": True})
        assert res.structured_content == {
            "previousPath": "images/cover.png", "path": "pics/front.png", "sha256": sha,
            "updated_links": [{"path": "ch/one.md", "links": 2}, {"path": "notes.md", "links": 1}],
            "indexSynchronized": True}
        assert (root / "notes.md").read_text() == "# Notes\n\nSee ![cover](pics/front.png).\n"
        assert (root / "ch" / "one.md").read_text() == "![c](../pics/front.png) and ![[front.png]]\n"
        # An existing target is never replaced.
        (root / "pics" / "other.png").write_bytes(png(1, 1, (0, 0, 0)))
        res = await client.call_tool("kb_move_image", {"sourcePath": "pics/front.png", "targetPath": "pics/other.png"})
        assert error(res)["code"] == "ALREADY_EXISTS"
        # Delete: Markdown untouched, folder kept.
        res = await client.call_tool("kb_delete_image", {"path": "pics/front.png"})
        assert res.structured_content == {"path": "pics/front.png", "deleted": True}
        assert not (root / "pics" / "front.png").exists() and (root / "pics").is_dir()
        assert (root / "notes.md").read_text() == "# Notes\n\nSee ![cover](pics/front.png).\n"
        for path, code in [("pics/front.png", "NOT_FOUND"), ("notes.md", "UNSUPPORTED_FORMAT"), ("../x.png", "INVALID_PATH")]:
            assert error(await client.call_tool("kb_delete_image", {"path": path}))["code"] == code, path
    # Read-only: every writing image tool is refused and nothing changes.
    before = snapshot(root)
    async with Client(server(root), mode="auto") as client:
        for name, args in [("kb_delete_image", {"path": "pics/other.png"}),
                           ("kb_move_image", {"sourcePath": "pics/other.png", "targetPath": "x.png"}),
                           ("kb_save_image", {"image": {"data": base64.b64encode(COVER).decode(), "mimeType": "image/png"}}),
                           ("kb_create_pdf_book", {"path": "notes.md"})]:
            assert error(await client.call_tool(name, args))["code"] == "PERMISSION_DENIED", name
    assert snapshot(root) == before


BOOK = """---
title: 運用ハンドブック
---
# Operations Handbook

This handbook covers [deployment](#deployment) and [monitoring](#monitoring).

## Deployment

Run `deploy --prod` after the **review**. *Never* skip it.

| Service | Owner | Port |
|:--------|:-----:|-----:|
| gateway | alice | 8443 |
| ledger | bob | 5432 |

![Architecture](img/arch.png)

![Missing diagram](img/nope.png)

## Monitoring

> Alerts page the on-call engineer.

1. Check the dashboard.
2. Open an incident.

```python
print("healthy")
```

## 日本語の節

本番環境への反映は必ずレビューの後に行います。

中文：监控系统每五分钟检查一次。
"""


def pdftotext(pdf: Path) -> str:
    exe = shutil.which("pdftotext")
    assert exe, "pdftotext is missing: install Debian's poppler-utils (scripts/test does)"
    return subprocess.run([exe, "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout


async def test_pdf_book_text_images_and_page_one(root, tmp_path):
    (root / "guide").mkdir()
    (root / "guide" / "img").mkdir()
    (root / "guide" / "img" / "arch.png").write_bytes(png(300, 150, (30, 90, 160)))
    (root / "guide" / "handbook.md").write_text(BOOK)
    async with Client(server(root, "--allow-writes"), mode="auto") as client:
        res = await client.call_tool("kb_create_pdf_book", {"path": "guide/handbook.md"})
        assert not res.is_error, res.content[0].text
        out = res.structured_content
        pdf = root / "guide" / "handbook.pdf"
        assert out == {"path": "guide/handbook.pdf", "bytes": pdf.stat().st_size, "warnings": [
            "line 19: image `img/nope.png` is not available (not found: `guide/img/nope.png`); a placeholder is printed"]}
        assert pdf.read_bytes().startswith(b"%PDF-")
        # Bookmarks from the headings; the table of contents and the #deployment and
        # #monitoring links go to the headings' destinations.
        reader = PdfReader(pdf)
        assert [o.title for o in reader.outline] == ["Operations Handbook", "Deployment", "Monitoring", "日本語の節"]
        dests = [str(a.get_object().get("/Dest")) for page in reader.pages for a in page.get("/Annots") or []]
        assert dests[:4] == ["folio-h1", "folio-h2", "folio-h3", "folio-h4"]
        assert dests[4:] == ["folio-h2", "folio-h3"]
        assert reader.metadata.title == "運用ハンドブック"
        text = pdftotext(pdf)
        for needle in ["Operations Handbook", "Deployment", "Monitoring", "gateway", "alice", "8443", "ledger", "5432",
                       "deploy --prod", "Alerts page the on-call engineer.", "Check the dashboard.", 'print("healthy")',
                       "本番環境への反映は必ずレビューの後に行います。", "监控系统每五分钟检查一次。", "[image: Missing diagram]"]:
            assert needle in text, needle
        # Page 1, rendered, is not blank.
        exe = shutil.which("pdftoppm")
        assert exe, "pdftoppm is missing: install Debian's poppler-utils (scripts/test does)"
        prefix = tmp_path / "page"
        subprocess.run([exe, "-png", "-r", "60", "-f", "1", "-l", "1", str(pdf), str(prefix)], check=True)
        page = Image.open(next(tmp_path.glob("page*.png"))).convert("L")
        dark = sum(1 for v in page.getdata() if v < 128)
        assert dark > 500, dark
        keep = os.environ.get("FOLIO_KEEP_PAGE")
        if keep:
            shutil.copy(next(tmp_path.glob("page*.png")), keep)

        # Another format, style and profile to another path; the default output replaced atomically.
        first = pdf.read_bytes()
        (root / "guide" / "handbook.md").write_text(BOOK.replace("Operations Handbook", "Ops Handbook"))
        res = await client.call_tool("kb_create_pdf_book", {"path": "guide/handbook.md"})
        assert res.structured_content["path"] == "guide/handbook.pdf" and pdf.read_bytes() != first
        assert "Ops Handbook" in pdftotext(pdf)
        res = await client.call_tool("kb_create_pdf_book", {"path": "guide/handbook.md", "outputPath": "exports/a4.pdf",
                                                            "pageFormat": "a4", "style": "technical", "profile": "print"})
        assert res.structured_content["path"] == "exports/a4.pdf"
        technical = pdftotext(root / "exports" / "a4.pdf")
        assert "1.1 Deployment" in technical and "1.2 Monitoring" in technical

        (root / "mine.pdf").write_text("not a pdf")
        before = snapshot(root)
        for args, code in [({"outputPath": "../out.pdf"}, "INVALID_PATH"), ({"outputPath": "notes.md"}, "INVALID_ARGUMENT"),
                           ({"outputPath": "mine.pdf"}, "ALREADY_EXISTS"), ({"style": "fancy"}, "INVALID_ARGUMENT"),
                           ({"path": "missing.md"}, "NOT_FOUND"), ({"path": "guide/img/arch.png"}, "UNSUPPORTED_FORMAT")]:
            res = await client.call_tool("kb_create_pdf_book", {"path": "guide/handbook.md", **args})
            assert error(res)["code"] == code, args
        assert snapshot(root) == before


async def test_best_practice_is_opt_in(root):
    async with Client(server(root), mode="auto") as client:
        body = error(await client.call_tool("kb_best_practice", {"target": "claude-code"}))
        assert body["code"] == "NOT_CONFIGURED"
    (root / "folio.toml").write_text('[best_practice]\npath_templates = ["docs/bp/{target}.md"]\n')
    (root / "docs" / "bp").mkdir(parents=True)
    doc = "# Claude Code\n\n## Setup\n\nInstall.\n\n## Prompts\n\nBe specific.\n"
    (root / "docs" / "bp" / "claude-code.md").write_text(doc)
    async with Client(server(root), mode="auto") as client:
        res = await client.call_tool("kb_best_practice", {"target": "claude-code"})
        assert res.structured_content["content"] == doc and res.structured_content["section"] is None
        res = await client.call_tool("kb_best_practice", {"target": "claude-code", "category": "Prompts"})
        assert {k: res.structured_content[k] for k in ["path", "content", "section", "category"]} == {
            "path": "docs/bp/claude-code.md", "content": "## Prompts\n\nBe specific.\n", "section": "Prompts",
            "category": "Prompts"}
        assert error(await client.call_tool("kb_best_practice", {"target": "codex"}))["code"] == "NOT_FOUND"
        assert error(await client.call_tool("kb_best_practice", {"target": "../x"}))["code"] == "INVALID_ARGUMENT"

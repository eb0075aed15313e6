"""Fixtures for end-to-end tests of `folio mcp` with the MCP Python SDK."""

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "tests" / "fixtures" / "k8s-community"


def folio_bin() -> str:
    """The built binary: $FOLIO_BIN, else $CARGO_TARGET_DIR/debug/folio, else target/debug/folio."""
    if os.environ.get("FOLIO_BIN"):
        path = Path(os.environ["FOLIO_BIN"])
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        path = target / "debug" / "folio"
    if not path.is_file():
        raise RuntimeError(f"folio binary not found at {path}; run `cargo build --bin folio` (scripts/test does)")
    return str(path)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def kb(tmp_path) -> Path:
    """A private copy of the k8s-community slice (real files, with their LICENSE), safe to write."""
    dest = tmp_path / "kb"
    shutil.copytree(K8S, dest)
    return dest


class HttpServer:
    """`folio mcp --root ROOT --http ADDR EXTRA…` (ADDR 127.0.0.1:0 by default), started and read until it listens."""

    def __init__(self, root: Path, *extra: str, env: dict | None = None, addr: str = "127.0.0.1:0"):
        import subprocess
        import threading

        self.proc = subprocess.Popen(
            [folio_bin(), "mcp", "--root", str(root), "--http", addr, *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "FOLIO_EMBED_PROVIDER": "none", **(env or {})},
        )
        self.stderr: list[str] = []
        self.url = None
        for line in self.proc.stderr:
            self.stderr.append(line)
            if "listening on http://" in line:
                self.url = line.split("listening on ", 1)[1].split(" ", 1)[0]
                break
        if self.url is None:
            self.proc.wait(timeout=10)
            raise RuntimeError("folio mcp --http did not start:\n" + "".join(self.stderr))
        # Keep reading so the server never blocks on a full pipe.
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()
        self.origin = self.url.rsplit("/mcp", 1)[0]

    def stop(self) -> int:
        """SIGTERM, then the exit code (a clean shutdown is 0)."""
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=20)


@pytest.fixture(params=["stdio", "http"])
def connect(request):
    """Opens an MCP Python SDK client on `folio mcp --root ROOT EXTRA…` over stdio, or over
    streamable HTTP (`--http 127.0.0.1:0 --no-auth`): the same scenarios run on both."""
    import contextlib

    from mcp import Client, StdioServerParameters

    servers: list[HttpServer] = []

    @contextlib.asynccontextmanager
    async def open_client(root: Path, *extra: str):
        if request.param == "stdio":
            params = StdioServerParameters(command=folio_bin(), args=["mcp", "--root", str(root), *extra],
                                           env={"FOLIO_EMBED_PROVIDER": "none"})
            async with Client(params, mode="auto") as client:
                yield client
        else:
            srv = HttpServer(root, "--no-auth", *extra)
            servers.append(srv)
            async with Client(srv.url, mode="auto") as client:
                yield client
            assert srv.stop() == 0, "".join(srv.stderr)

    yield open_client
    for srv in servers:
        srv.stop()

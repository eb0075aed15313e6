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

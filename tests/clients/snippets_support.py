"""Paths and binaries for the checks of the client snippets in docs/clients.md."""

import os
import shutil
from pathlib import Path


REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "clients.md"
FOAM = REPO / "tests" / "fixtures" / "foam-docs"
CLIENTS_BIN = Path(__file__).resolve().parent / "node_modules" / ".bin"


def folio_bin() -> Path:
    """The built binary: $FOLIO_BIN, else $CARGO_TARGET_DIR/debug/folio, else target/debug/folio."""
    if os.environ.get("FOLIO_BIN"):
        path = Path(os.environ["FOLIO_BIN"])
    else:
        path = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "debug" / "folio"
    if not path.is_file():
        raise RuntimeError(f"folio binary not found at {path}; run `cargo build --bin folio` (scripts/test does)")
    return path


def client_bin(name: str) -> Path:
    """An agent CLI installed by `npm ci` in tests/clients (scripts/test runs it)."""
    path = CLIENTS_BIN / name
    if not path.exists():
        raise RuntimeError(f"{path} is missing; run scripts/test, which runs `npm ci` in tests/clients")
    return path


def search_path() -> str:
    """PATH with the built `folio` and the agent CLIs first, as a user's would have them."""
    return os.pathsep.join([str(folio_bin().parent), str(CLIENTS_BIN), os.environ.get("PATH", "")])

"""Fixtures for the checks of the client snippets in docs/clients.md."""

import shutil
from pathlib import Path

import pytest

from snippets_support import FOAM


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def notes(tmp_path) -> Path:
    """A copy of tests/fixtures/foam-docs: the /path/to/notes of the snippets."""
    dest = tmp_path / "notes"
    shutil.copytree(FOAM, dest)
    return dest

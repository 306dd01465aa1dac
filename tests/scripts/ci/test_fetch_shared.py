"""scripts/ci/fetch_shared.py, the download of the upstream files the schema tier needs (users' CI).

A local HTTP server on 127.0.0.1 plays the upstream hosts: it serves the files of ../shared at the
paths of their upstream URLs (scripts/ci/shared-manifest.json; a file that was cut out of a
multi-document upstream manifest is served inside such a manifest again). The script fetches
through `--rewrite`, exactly as it fetches from raw.githubusercontent.com in CI."""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from components.versions import Charts
from offline.program.documents import render_documents
from offline.program.engine import RecordedStack
from offline.schema import validate as schema
from tests.helpers import REPO, require_shared

SCRIPT = REPO / "scripts" / "ci" / "fetch_shared.py"
MANIFEST = REPO / "scripts" / "ci" / "shared-manifest.json"
UPSTREAM = "https://raw.githubusercontent.com/"


def manifest() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(MANIFEST.read_text())
    return document


@pytest.fixture(scope="module")
def shared() -> Path:
    require_shared("crds")
    return require_shared("charts").parent


def build_upstream_tree(shared: Path, root: Path) -> None:
    """Lay the shared files out at their upstream URL paths; re-assemble multi-document files."""
    multi: dict[str, list[tuple[dict[str, Any], bytes]]] = {}
    for entry in manifest()["files"]:
        assert entry["url"].startswith(UPSTREAM), entry["url"]
        body = (shared / entry["path"]).read_bytes()
        if "extract" in entry:
            multi.setdefault(entry["url"], []).append((entry["extract"], body))
            continue
        target = root / entry["url"][len(UPSTREAM) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    for url, parts in multi.items():
        if all("document" in rule for rule, _ in parts):
            documents = [body for _, body in sorted(parts, key=lambda part: int(part[0]["document"]))]
        else:  # one document among others, after a comment block (as multus-daemonset-thick.yml)
            documents = [b"# a leading comment\n", *(body for _, body in parts), b"kind: ConfigMap\n"]
        target = root / url[len(UPSTREAM) :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"---\n".join(documents))


@pytest.fixture
def server(shared: Path, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(base URL, served folder) of a 127.0.0.1 server standing in for raw.githubusercontent.com."""
    root = tmp_path / "upstream"
    build_upstream_tree(shared, root)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", root
    finally:
        httpd.shutdown()
        httpd.server_close()


def run_fetch(base: str, dest: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--dest", str(dest), "--rewrite", f"{UPSTREAM}={base}", "--timeout", "10"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


def schema_tier_files(shared: Path) -> set[str]:
    """What the schema tier (offline/schema/crd.py, offline/schema/values.py) reads: crds/*/*.yaml and each pinned chart's values files."""
    files = {str(p.relative_to(shared)) for p in (shared / "crds").glob("*/*.yaml")}
    for pin in Charts.all():
        if pin.values_dir:
            for name in ("values.yaml", "values.schema.json"):
                if (shared / "charts" / pin.values_dir / name).exists():
                    files.add(f"charts/{pin.values_dir}/{name}")
    return files


def test_the_manifest_covers_every_file_the_schema_tier_reads(shared: Path) -> None:
    listed = {entry["path"] for entry in manifest()["files"]}
    assert schema_tier_files(shared) <= listed
    assert all(len(entry["sha256"]) == 64 for entry in manifest()["files"])


def test_fetched_tree_equals_shared_and_serves_the_schema_tier(
    server: tuple[str, Path], shared: Path, tmp_path: Path, prod_stack: RecordedStack
) -> None:
    base, _ = server
    dest = tmp_path / "cache"
    result = run_fetch(base, dest)
    assert result.returncode == 0, result.stdout + result.stderr
    entries = manifest()["files"]
    assert f"{len(entries)} downloaded, 0 already present, 0 failed" in result.stdout
    for entry in entries:
        assert (dest / entry["path"]).read_bytes() == (shared / entry["path"]).read_bytes(), entry["path"]
    # The schema tier gives the same verdict on the fetched folder as on ../shared.
    documents = render_documents(prod_stack)
    on_cache, on_shared = schema.check_documents(documents, "1.33", dest), schema.check_documents(documents, "1.33", shared)
    assert on_cache.errors == on_shared.errors == [] and on_cache.charts == on_shared.charts > 0
    again = run_fetch(base, dest)  # a CI cache hit downloads nothing
    assert again.returncode == 0 and f"0 downloaded, {len(entries)} already present" in again.stdout


def _first_plain_entry() -> dict[str, Any]:
    entry: dict[str, Any] = next(e for e in manifest()["files"] if "extract" not in e and e["path"].startswith("crds/"))
    return entry


def test_a_mismatching_digest_fails_and_writes_nothing(server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = server
    entry = _first_plain_entry()
    served = root / entry["url"][len(UPSTREAM) :]
    served.write_bytes(served.read_bytes() + b"# tampered\n")
    dest = tmp_path / "cache"
    result = run_fetch(base, dest)
    assert result.returncode == 1
    assert f"error: {entry['path']}: sha256 mismatch for {entry['url']}" in result.stderr
    assert not (dest / entry["path"]).exists()


def test_a_missing_file_fails(server: tuple[str, Path], tmp_path: Path) -> None:
    base, root = server
    entry = _first_plain_entry()
    (root / entry["url"][len(UPSTREAM) :]).unlink()
    result = run_fetch(base, tmp_path / "cache")
    assert result.returncode == 1
    assert f"error: {entry['path']}: cannot download {base}" in result.stderr and "HTTP 404" in result.stderr


def test_a_stale_cached_file_is_replaced(server: tuple[str, Path], shared: Path, tmp_path: Path) -> None:
    base, _ = server
    entry = _first_plain_entry()
    dest = tmp_path / "cache"
    (dest / entry["path"]).parent.mkdir(parents=True)
    (dest / entry["path"]).write_text("stale\n")
    result = run_fetch(base, dest)
    assert result.returncode == 0, result.stderr
    assert (dest / entry["path"]).read_bytes() == (shared / entry["path"]).read_bytes()


def test_the_manifest_is_up_to_date_with_shared(shared: Path, tmp_path: Path) -> None:
    """Every pinned digest is the digest of the shared file; and where the shared folder is the full
    one (with its INDEX.md files; a folder fetched by the script has none), regenerating the manifest
    from it gives the committed one."""
    for entry in manifest()["files"]:
        assert hashlib.sha256((shared / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], entry["path"]
    if not (shared / "crds" / "INDEX.md").exists():
        return  # HPCFORGE_SHARED is a fetched cache (CI): the digests above are all there is to compare
    out = tmp_path / "manifest.json"
    builder = REPO / "scripts" / "ci" / "build_shared_manifest.py"
    subprocess.run([sys.executable, str(builder), "--shared", str(shared), "--out", str(out)], check=True, capture_output=True)
    assert json.loads(out.read_text()) == manifest(), "run scripts/ci/build_shared_manifest.py and commit the manifest"

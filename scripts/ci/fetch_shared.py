"""Download the upstream files the schema tier needs into a shared-layout folder, and verify them.

    python scripts/ci/fetch_shared.py --dest ~/.cache/hpcforge-shared [--manifest scripts/ci/shared-manifest.json]
    export HPCFORGE_SHARED=~/.cache/hpcforge-shared

Each manifest entry names a path in the shared layout (`crds/<project>-<version>/<Kind>.yaml`,
`charts/<chart>-<version>/values.yaml`...), the upstream URL of the file at its pinned tag, and the
sha256 of the expected content. An `extract` rule cuts one YAML document out of a multi-document
upstream file: `{"document": N}` (the N-th, 1-based, of the documents separated by `---` lines) or
`{"contains": LINE}` (the one document with that line). A file already in `--dest` with the right
digest is kept (a CI cache); anything else is downloaded, checked and written. A wrong digest or a
failed download is an error naming the path and the URL; the script then exits 1 and writes
nothing for that entry. Standard library only: it runs before the project's virtualenv exists.

`--rewrite FROM=TO` replaces a URL prefix (a mirror; the tests use a local HTTP server).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock
from typing import Any

DEFAULT_MANIFEST = Path(__file__).resolve().with_name("shared-manifest.json")
SEPARATOR = re.compile(r"(?m)^---[ \t]*\n")
ATTEMPTS = 3


class FetchError(Exception):
    pass


def extract(text: str, rule: dict[str, Any]) -> str:
    """One document of a multi-document YAML file, byte for byte (without its `---` line)."""
    documents = SEPARATOR.split(text)
    if "document" in rule:
        index = int(rule["document"])
        if not 1 <= index <= len(documents):
            raise FetchError(f"document {index} requested, the file has {len(documents)}")
        return documents[index - 1]
    if "contains" in rule:
        line = re.compile(rf"(?m)^{re.escape(str(rule['contains']))}[ \t]*$")
        found = [d for d in documents if line.search(d)]
        if len(found) != 1:
            raise FetchError(f"{len(found)} documents contain {rule['contains']!r}, expected exactly 1")
        return found[0]
    raise FetchError(f"unknown extract rule {rule!r}")


def rewrite(url: str, rules: list[tuple[str, str]]) -> str:
    for old, new in rules:
        if url.startswith(old):
            return new + url[len(old) :]
    return url


class Downloader:
    """Downloads each URL once (several entries may cut documents out of one file)."""

    def __init__(self, rules: list[tuple[str, str]], timeout: float) -> None:
        self.rules = rules
        self.timeout = timeout
        self.cache: dict[str, bytes] = {}
        self.lock = Lock()

    def get(self, url: str) -> bytes:
        with self.lock:
            if url in self.cache:
                return self.cache[url]
        target = rewrite(url, self.rules)
        error: Exception | None = None
        for attempt in range(ATTEMPTS):
            try:
                with urllib.request.urlopen(target, timeout=self.timeout) as response:
                    body: bytes = response.read()
                with self.lock:
                    self.cache[url] = body
                return body
            except urllib.error.HTTPError as failure:
                if failure.code < 500:
                    raise FetchError(f"cannot download {target}: HTTP {failure.code}") from None
                error = failure
            except (urllib.error.URLError, TimeoutError, OSError) as failure:
                error = failure
            time.sleep(attempt + 1)
        raise FetchError(f"cannot download {target}: {error}")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as handle:
        handle.write(data)
    os.replace(handle.name, path)


def fetch_entry(entry: dict[str, Any], dest: Path, downloader: Downloader) -> str:
    """'kept' or 'downloaded'; raises FetchError naming the path."""
    relative = str(entry["path"])
    if relative.startswith("/") or ".." in Path(relative).parts:
        raise FetchError(f"{relative}: path must stay inside the destination")
    target = dest / relative
    expected = str(entry["sha256"])
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
        return "kept"
    try:
        body = downloader.get(str(entry["url"]))
        if "extract" in entry:
            body = extract(body.decode("utf-8"), entry["extract"]).encode("utf-8")
    except (FetchError, UnicodeDecodeError) as error:
        raise FetchError(f"{relative}: {error}") from None
    actual = hashlib.sha256(body).hexdigest()
    if actual != expected:
        raise FetchError(f"{relative}: sha256 mismatch for {entry['url']}: expected {expected}, got {actual}")
    _write(target, body)
    return "downloaded"


def fetch(manifest: dict[str, Any], dest: Path, rules: list[tuple[str, str]], jobs: int = 8, timeout: float = 60) -> list[str]:
    """Fetch every entry; the errors (empty: the folder holds every file with the pinned digest)."""
    downloader = Downloader(rules, timeout)
    entries = list(manifest["files"])
    errors: list[str] = []
    counts = {"kept": 0, "downloaded": 0}

    def one(entry: dict[str, Any]) -> tuple[str | None, str | None]:
        try:
            return fetch_entry(entry, dest, downloader), None
        except FetchError as error:
            return None, str(error)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for outcome, error in pool.map(one, entries):
            if error:
                errors.append(error)
            elif outcome:
                counts[outcome] += 1
    print(f"{dest}: {counts['downloaded']} downloaded, {counts['kept']} already present, {len(errors)} failed")
    return sorted(errors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    parser.add_argument("--dest", type=Path, required=True, help="the shared-layout folder to fill (HPCFORGE_SHARED)")
    parser.add_argument("--rewrite", action="append", default=[], metavar="FROM=TO", help="replace a URL prefix")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args(argv)
    rules = []
    for rule in args.rewrite:
        old, sep, new = rule.partition("=")
        if not sep or not old:
            parser.error(f"--rewrite expects FROM=TO, got {rule!r}")
        rules.append((old, new))
    manifest = json.loads(args.manifest.read_text())
    errors = fetch(manifest, args.dest, rules, args.jobs, args.timeout)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

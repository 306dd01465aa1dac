"""Build scripts/ci/shared-manifest.json: every upstream file the schema tier reads from the shared
folder (`crds/*/*.yaml`, `charts/*/values.yaml`, `charts/*/values.schema.json` and the subcharts'),
with the URL of the file at its pinned upstream tag and the sha256 of the copy in the shared folder.

    python scripts/ci/build_shared_manifest.py [--shared ../shared] [--out scripts/ci/shared-manifest.json]

The sources come from the shared folder's own INDEX.md files (crds/INDEX.md: repository, tag and
source path per CRD; charts/INDEX.md: repository @ tag : chart directory per chart). Files that were
cut out of a multi-document upstream manifest get an `extract` rule that fetch_shared.py applies.
Run it again when the shared folder gains or changes files; the digests pin what CI downloads.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "scripts" / "ci" / "shared-manifest.json"
GITHUB = re.compile(r"https://github\.com/([^/\s]+)/([^/\s]+?)/?$")


def raw_url(repo: str, tag: str, path: str) -> str:
    match = GITHUB.match(repo.strip())
    if not match:
        raise ValueError(f"not a GitHub repository URL: {repo!r}")
    owner, name = match.groups()
    return f"https://raw.githubusercontent.com/{owner}/{name}/{tag}/{path.lstrip('/')}"


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _code(cell: str) -> str:
    found = re.findall(r"`([^`]*)`", cell)
    return found[0] if found else cell.strip()


def crd_entries(shared: Path) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    for line in (shared / "crds" / "INDEX.md").read_text().splitlines():
        if not line.startswith("| ") or "`crds/" not in line:
            continue
        cells = _cells(line)
        file, repo, tag, source = _code(cells[4]), cells[5], _code(cells[6]), _code(cells[7])
        extract: dict[str, object] | None = None
        document = re.search(r"\(document (\d+) of \d+\)", source)
        if document:
            extract = {"document": int(document.group(1))}
        elif "(CRD document only)" in source:
            extract = {"contains": "kind: CustomResourceDefinition"}
        source_path = re.sub(r"\s*\(.*\)\s*$", "", source)
        entry: dict[str, object] = {"path": file, "url": raw_url(repo, tag, source_path)}
        if extract:
            entry["extract"] = extract
        entries.append(entry)
    return entries


def chart_entries(shared: Path) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    for line in (shared / "charts" / "INDEX.md").read_text().splitlines():
        if not line.startswith("| ") or " @ `" not in line:
            continue
        cells = _cells(line)
        chart, version, source, present = cells[0], cells[1], cells[5], cells[6]
        repo_match = re.match(r"(\S+) @ `([^`]+)` : `([^`]+)`", source)
        if not repo_match:
            raise ValueError(f"charts/INDEX.md: cannot read the upstream source of {chart!r}: {source!r}")
        repo, tag, directory = repo_match.groups()
        inside = re.search(r"\(in `([^`]+)/`\)", present)
        folder = inside.group(1) if inside else f"{chart}-{version}"
        for name in re.findall(r"`([^`]+)`", present.split("(in ")[0]):
            if not name.endswith(("values.yaml", "values.schema.json")):
                continue  # licenses are not read by the schema tier
            # A subchart's files are listed as charts/<sub>/values.yaml, relative to the parent chart.
            upstream = f"{directory.rstrip('/')}/{Path(name).name}" if "/" in name else f"{directory.rstrip('/')}/{name}"
            entries.append({"path": f"charts/{folder}/{name}", "url": raw_url(repo, tag, upstream)})
    return entries


def build(shared: Path) -> dict[str, object]:
    files = sorted(crd_entries(shared) + chart_entries(shared), key=lambda e: str(e["path"]))
    missing = [e["path"] for e in files if not (shared / str(e["path"])).is_file()]
    if missing:
        raise SystemExit(f"listed in INDEX.md but not in {shared}: {missing}")
    paths = [e["path"] for e in files]
    if len(paths) != len(set(paths)):
        raise SystemExit("a path is listed twice in the INDEX.md files")
    for entry in files:
        entry["sha256"] = hashlib.sha256((shared / str(entry["path"])).read_bytes()).hexdigest()
    return {
        "description": "Upstream files the schema tier reads, at their pinned tags (scripts/ci/build_shared_manifest.py)",
        "files": files,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    manifest = build(args.shared.resolve())
    args.out.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(manifest['files'])} entries to {args.out}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())

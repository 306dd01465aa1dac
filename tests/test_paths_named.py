"""Every repository path that hpcforge names exists (issue 37, item 6): in its source, docs, scripts and fixtures,
and in what it renders for dev and prod (a deployed script or a rendered file that names a moved module sends its
reader to nothing).

What counts as a repository path, so that the check stays exact:
- a path that starts at a top folder of the repository (`components/...`, `scripts/...`, `tests/...`, ...), not
  preceded by `/`, `.` or a word character (so `/etc/slurm/scripts/x.sh`, `../shared/...` and URLs are not);
- a relative `.py` or `.sh` path (`layers/slurm/nccl.py`, `slurm/prolog/10-gpu-check.sh`): the end of a path of
  the repository;
- a relative link of a Markdown file (`[text](../configuration.md)`), from that file's folder.
A placeholder stands for any name: a segment in capitals (`inventory/STACK/hosts.yaml`), or the rest of the path
after `<`, `{`, `*`, `[` or `$` (`policies/<pack>/` is checked as `policies/`). A module may be named without its
`.py` (`offline/diff/command`). A `test_*.py` path under a source folder that is not there is read relative to
`tests/` (the README's table of tiers names them so). Paths of other projects' repositories (cited with their pin)
and files that tests write in temporary folders are listed below with what they are; an entry that matches nothing
any more is itself an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from offline.program.engine import RecordedStack
from tests.helpers import REPO

TOP_FOLDERS = ("components", "offline", "policies", "scripts", "tests", "docs", "benchmarks", "inventory", ".github", ".ci")
"""The repository's top folders: a path that starts with one of them names a file or folder of the repository."""
TOP_FILES = (
    "README.md",
    "Makefile",
    "pyproject.toml",
    "__main__.py",
    "hpcforge",
    "Pulumi.yaml",
    "Pulumi.dev.yaml",
    "Pulumi.prod.yaml",
)
SKIPPED_SUFFIXES = (".pyc", ".pickle", ".gz", ".tgz", ".bz2", ".png")
SKIPPED_FOLDERS = ("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache")

ROOTED = re.compile(r"(?<![\w./~$@-])(?:" + "|".join(re.escape(top) for top in TOP_FOLDERS) + r")/[\w./-]*")
RELATIVE = re.compile(r"(?<![\w./~$@:-])(?:[\w-]+/)+[\w-]+\.(?:py|sh)\b")
LINK = re.compile(r"\]\(([\w./-]+)(?:#[^)]*)?\)")
PLACEHOLDER_AFTER = "{<*[$"
PLACEHOLDER_SEGMENT = re.compile(r"^[A-Z][A-Z0-9_]*$")

UPSTREAM: dict[str, str] = {
    "docs/concepts/nodeset-controller.md": "slurm-operator (SchedMD Slinky), cited at v1.2.1",
    "docs/usage/pyxis.md": "slurm-operator, cited at v1.2.1",
    "docs/usage/topology.md": "slurm-operator, cited at v1.2.1",
    "docs/usage/nodeset-operations.md": "slurm-operator, cited at v1.2.1",
    "internal/builder/controllerbuilder/scripts/reconfigure.sh": "slurm-operator, cited at v1.2.1",
    "docs/user-guide/auto_sync.md": "argo-cd, cited at v3.4.4",
    "docs/user-guide/app_deletion.md": "argo-cd, cited at v3.4.4",
    "docs/user-guide/helm.md": "argo-cd, cited at v3.4.4",
    "docs/storage.md": "mariadb-operator, cited at v26.6.0",
    "docs/logical_backup.md": "mariadb-operator, cited at v26.6.0",
    "docs/user-guide/projects.md": "argo-cd, cited at v3.4.4",
    "docs/add-ons/gpu_operators.md": "rancher/rke2-docs (RKE2's GPU Operator page)",
    "docs/advanced.md": "rancher/rke2-docs (RKE2's 'Configuring containerd')",
    "docs/runtime.md": "k0sproject/k0s, cited at v1.33.4+k0s.0",
    "components/accelerator/nvidia/query/testdata/nvidia-smi-query.535.161.08.out.0.valid": "leptonai/gpud at a7cdf53",
    "internal/captures/collect.sh": "utkuozdemir/nvidia_gpu_exporter (the nvidia-smi captures' collector)",
    "lib389/instance/setup.py": "389-ds-base's lib389",
    "nca/CoreDS/ConnectivityProperties.py": "np-guard's NCA, cited at 2.1.0",
    "nca/Parsers/K8sPolicyYamlParser.py": "np-guard's NCA, cited at 2.1.0",
    "offline/engine.py": "hpcforge before offline/program/ (b7ad5ae), which benchmarks/against.py still times",
    "offline/stackfile.py": "hpcforge before offline/program/ (b7ad5ae), which benchmarks/against.py still times",
    "pulumi/runtime/_depends_on.py": "the installed Pulumi Python SDK (pulumi 3.272.0), profiled in docs/performance.md",
    "pulumi/runtime/resource.py": "the installed Pulumi Python SDK (pulumi 3.272.0), profiled in docs/performance.md",
    "pulumi/runtime/resource_cycle_breaker.py": "the installed Pulumi Python SDK (pulumi 3.272.0), read for issue 36",
    "pulumi/runtime/rpc.py": "the installed Pulumi Python SDK (pulumi 3.272.0), profiled in docs/performance.md",
    "pydantic/main.py": "the installed pydantic, profiled in docs/performance.md",
    "pydantic/type_adapter.py": "the installed pydantic, profiled in docs/performance.md",
}
"""Paths in other projects' repositories that hpcforge cites, and whose they are; none of them is a path of this
repository (test_upstream_paths_are_not_paths_of_this_repository)."""

WRITTEN_BY_TESTS: dict[tuple[str, str], str] = {
    ("tests/components/site/test_inventory.py", "inventory/dev/nobody.yaml"): "the missing file the test names",
    ("tests/test_day2.py", "inventory/lab/hosts.yaml"): "written into a temporary project",
    ("tests/test_day2.py", "inventory/lab/users.yaml"): "written into a temporary project",
    ("tests/test_layers.py", "scripts/nope.sh"): "the missing prolog file the test names",
    ("tests/components/layers/slurm/test_script_include.py", "scripts/x.sh"): "written into a temporary project",
    ("tests/components/layers/slurm/test_script_include.py", "scripts/slurm/prolog/x.sh"): "written into a temporary project",
    ("tests/test_layout.py", "components/fake.py"): "the file name of a module the test compiles from a string",
}
"""(file, path) of paths that a test writes in a temporary folder, or names because it must be missing."""

EXAMPLES: dict[str, str] = {
    "inventory/STACK/slurm.yaml": "where `migrate-inventory --slurm` puts a stack's Slurm inventory (dev and prod keep it inline)",
    "inventory/prod/slurm.yaml": "where `migrate-inventory --slurm` puts prod's Slurm inventory (prod keeps it inline)",
    "inventory/site/slurm.yaml": "docs/inventories.md's example of a large site's Slurm inventory",
}
"""Paths of files that a site writes, named as examples in the docs and docstrings."""


def _files() -> Iterator[Path]:
    yield from (REPO / name for name in TOP_FILES if (REPO / name).is_file())
    for top in TOP_FOLDERS:
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and path.suffix not in SKIPPED_SUFFIXES and not set(path.parts) & set(SKIPPED_FOLDERS):
                yield path


def _texts() -> Iterator[tuple[str, str]]:
    for path in _files():
        try:
            yield path.relative_to(REPO).as_posix(), path.read_text()
        except UnicodeDecodeError:
            continue


def _exists(name: str) -> bool:
    """Whether `name` (a path from the repository's root, placeholders resolved as the module docstring says) exists."""
    parts = name.rstrip("/").split("/")
    if any(PLACEHOLDER_SEGMENT.match(part) for part in parts):
        pattern = "/".join("*" if PLACEHOLDER_SEGMENT.match(part) else part for part in parts)
        return any(REPO.glob(pattern))
    if (REPO / name).exists() or (REPO / f"{name}.py").is_file():  # a module may be named without its .py
        return True
    return parts[-1].startswith("test_") and parts[0] != "tests" and (REPO / "tests" / name).is_file()


def _rooted_paths(text: str) -> Iterator[str]:
    for match in ROOTED.finditer(text):
        name = match.group(0).rstrip(".-")
        if text[match.end() : match.end() + 1] in PLACEHOLDER_AFTER:
            name = name[: name.rfind("/") + 1]
        yield name


def _suffixes() -> set[str]:
    """Every end of a repository path after a `/` (`slurm/nccl.py` of `components/layers/slurm/nccl.py`)."""
    found = set()
    for path in _files():
        parts = path.relative_to(REPO).parts
        found.update("/".join(parts[index:]) for index in range(1, len(parts)))
    return found


HERE = Path(__file__).relative_to(REPO).as_posix()


def _exempt(where: str, name: str) -> bool:
    """Whether `name`, named in `where`, is listed above (this module names every listed path in its tables)."""
    if name in UPSTREAM or name in EXAMPLES or (where, name) in WRITTEN_BY_TESTS:
        return True
    return where == HERE and name in {path for _, path in WRITTEN_BY_TESTS}


def stale_paths(texts: Iterator[tuple[str, str]], suffixes: set[str]) -> list[str]:
    """`<where>: <path>` for each repository path named in `texts` ((where, text) pairs) that does not exist."""
    found = set()
    for where, text in texts:
        for name in _rooted_paths(text):
            if not _exists(name) and not _exempt(where, name):
                found.add(f"{where}: {name}")
        for match in RELATIVE.finditer(text):
            name = match.group(0)
            if not name.startswith(TOP_FOLDERS) and name not in suffixes and name not in UPSTREAM:
                found.add(f"{where}: {name}")
        if where.endswith(".md"):
            for target in LINK.findall(text):
                if (
                    "://" not in target
                    and not target.startswith("mailto:")
                    and not (REPO / where).parent.joinpath(target).exists()
                ):
                    found.add(f"{where}: {target} (a link)")
    return sorted(found)


def test_the_finder_finds_each_kind_of_stale_path() -> None:
    gone = "gone"  # spelled apart, so that this module names no stale path itself
    text = (
        f"see components/{gone}.py, the layers/{gone}/objects.py helper, [the guide](no-such-{gone}.md) and\n"
        "components/layers/slurm/ (a folder), inventory/STACK/hosts.yaml, policies/<pack>/, /etc/scripts/x.sh,\n"
        "tests/components/layers/test_renderers.py, components/layers/test_renderers.py (relative to tests/), docs/usage/pyxis.md\n"
    )
    assert stale_paths(iter([("example.md", text)]), _suffixes()) == [
        f"example.md: components/{gone}.py",
        f"example.md: layers/{gone}/objects.py",
        f"example.md: no-such-{gone}.md (a link)",
    ]


def test_every_path_named_in_the_repository_exists() -> None:
    texts = list(_texts())
    assert len(texts) > 500  # the check reads the real tree
    assert stale_paths(iter(texts), _suffixes()) == []


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_every_path_named_in_what_is_rendered_exists(any_stack: RecordedStack) -> None:
    texts = [(f"{r.type} {r.name}", text) for r in any_stack.resources for text in _strings(r.inputs)]
    assert any(ROOTED.search(text) for _, text in texts)  # the deployed scripts name repository paths
    assert stale_paths(iter(texts), _suffixes()) == []


def test_every_exemption_is_used_and_upstream_paths_are_not_paths_of_this_repository() -> None:
    texts = list(_texts())
    named = {name for _, text in texts for name in [*_rooted_paths(text), *RELATIVE.findall(text)]}
    assert sorted(set(UPSTREAM) - named) == []
    assert sorted(set(EXAMPLES) - named) == []
    assert sorted(key for key in WRITTEN_BY_TESTS if key[1] not in dict(texts).get(key[0], "")) == []
    assert sorted(name for name in [*UPSTREAM, *EXAMPLES] if (REPO / name).exists()) == []

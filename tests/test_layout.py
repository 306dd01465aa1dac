"""The import graph of the project (issues 29 and 37): no import circle, between modules or between packages; every
import runs down the floors written in FLOORS; a layer reaches another layer only through that layer's config or
face; components/ never imports offline/, no offline module takes another's private name, and each name under
components/layers/ has one import path (no re-export); and the tests' folders mirror the source's.

Every import counts, also those under `if TYPE_CHECKING:` and inside functions: a circle that only
typing or a late import breaks is still a circle for the reader.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.registration import Program

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("components", "offline", "policies")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if path.parent.name.startswith(".") or "-" in path.relative_to(REPO).parts[1]:
                continue  # policy packs' own __main__.py (policies/<pack>/) are run as scripts
            found[_module_name(path)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> Iterator[tuple[str, list[str]]]:
    """(imported project module, names taken from it) for every import statement of the module."""
    is_package = path.name == "__init__.py"
    package = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [alias.name for alias in node.names]
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in MODULES]
            yield from ((sub, []) for sub in submodules)
            taken = [n for n in names if f"{target}.{n}" not in MODULES]
            if target in MODULES and taken:  # `from . import sub` takes the submodule, not the package's names
                yield target, taken


GRAPH = {name: {target for target, _ in _imports(name, path) if target != name} for name, path in MODULES.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_reads_the_project() -> None:
    # The graph this file checks is the real one: the layer that wires every other is seen importing them.
    assert "components.layers.slurm.layer" in GRAPH["components.platform"]
    assert "components.site.root" in GRAPH["components.site.loader"]


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    assert _circles(GRAPH) == []


FLOORS: dict[str, tuple[tuple[str, ...], ...]] = {
    "": (("components",), ("policies",), ("offline",)),
    "components": (
        # The pins, the error type and where the project's files are.
        ("components.versions", "components.errors", "components.paths"),
        # Below every layer: the config's base types, YAML reader, inventory references, platform core, pools, hosts.
        ("components.ground",),
        # What every layer deploys with: the deployment context, the chart deployer, the Kubernetes helpers.
        (
            "components.context",
            "components.chart_hooks",
            "components.chart_security",
            "components.charts",
            "components.custom_resources",
            "components.k8s",
        ),
        ("components.layers",),
        # Above the layers: the root model, the loader, the inventories, placement, the checks across layers.
        ("components.site",),
        ("components.platform",),
    ),
    "components.layers": (
        (
            "components.layers.backups",
            "components.layers.batch",
            "components.layers.certificates",
            "components.layers.database",
            "components.layers.gitops",
            "components.layers.network",
            "components.layers.rdma",
            "components.layers.sealed_secrets",
            "components.layers.storage",
        ),
        ("components.layers.devops", "components.layers.directory", "components.layers.gpu"),
        ("components.layers.bootstrap", "components.layers.observability", "components.layers.slurm"),
        ("components.layers.provisioning",),
        ("components.layers.evidence",),
    ),
    "offline": (
        # The engine code every job shares.
        ("offline.program",),
        # What several jobs use: the schema tier, the charts rendered as helm.v4.Chart does, the running Slurm jobs.
        ("offline.schema", "offline.charts", "offline.live"),
        # The jobs, one folder each with its command.py.
        ("offline.preview", "offline.render", "offline.admission", "offline.diff", "offline.urns", "offline.inventory"),
        # `check` also prints what Argo CD admits of the charts it delivers (offline/admission/verdicts.py).
        ("offline.policy",),
        # The dispatcher: it only hands each subcommand to its job.
        ("offline.cli", "offline.__main__"),
    ),
    "policies": (
        ("policies.rules",),
        ("policies.admission",),
        ("policies.families", "policies.framework"),
        ("policies.security",),
    ),
}
"""The floors of each tree, from the ground up: a module imports only from its own floor or a floor below it. The ""
tree orders the trees themselves; a module stands on the floor of the entry that is the longest prefix of its dotted
name."""

CONTAINERS = ("components.layers",)
"""Folders that hold packages rather than code: each of their sub-folders is a package (each layer is one)."""

EXEMPT: dict[tuple[str, str], str] = {}
"""Package imports that run against the floors or close a circle, each with the issue that removes it."""


def _floor(tree: str, module: str) -> int | None:
    """The floor of `module` in `tree` (None: the module is the tree's own package, or outside the tree)."""
    matches = [
        (len(entry), level)
        for level, entries in enumerate(FLOORS[tree])
        for entry in entries
        if module == entry or module.startswith(entry + ".")
    ]
    return max(matches)[1] if matches else None


def _upward(tree: str, graph: dict[str, set[str]]) -> list[str]:
    """Imports of the modules of `tree` that run from a lower floor up to a higher one."""
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if (low := _floor(tree, name)) is not None
        and (high := _floor(tree, target)) is not None
        and high > low
        and (_package(name), _package(target)) not in EXEMPT
    )


def test_the_floor_finder_finds_an_upward_import() -> None:
    assert _upward("components", {"components.ground.base": {"components.site.root"}}) == [
        "components.ground.base -> components.site.root"
    ]
    assert _upward("components", {"components.site.root": {"components.ground.base"}}) == []


def test_every_module_stands_on_a_floor() -> None:
    """Every module of a tree is on one of its floors (a new folder is placed on purpose), and every entry names modules
    that exist (a floor cannot outlive what it names)."""
    for tree, floors in FLOORS.items():
        inside = [name for name in MODULES if tree == "" or name.startswith(tree + ".")]
        assert [name for name in inside if _floor(tree, name) is None and name != tree] == []
        named = [entry for entries in floors for entry in entries]
        assert [entry for entry in named if not any(n == entry or n.startswith(entry + ".") for n in MODULES)] == []


@pytest.mark.parametrize("tree", sorted(FLOORS))
def test_every_import_runs_down_the_floors(tree: str) -> None:
    assert _upward(tree, GRAPH) == []


def _package(module: str) -> str:
    """The package of a module: the folder under a tree's root (with its sub-folders), or under a folder of packages
    (CONTAINERS); a module directly under a tree's root (components/platform.py) is a package of its own."""
    parts = module.split(".")
    depth = 3 if ".".join(parts[:2]) in CONTAINERS else 2
    if len(parts) > depth or (len(parts) == depth and (REPO.joinpath(*parts) / "__init__.py").is_file()):
        return ".".join(parts[:depth])
    return module


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            edge = (_package(name), _package(target))
            if edge[0] != edge[1] and edge not in EXEMPT:
                packages.setdefault(edge[0], set()).add(edge[1])
    return packages


def test_the_package_graph_reads_the_packages() -> None:
    assert _package("components.platform") == "components.platform"
    assert _package("components.site.checks.gpu") == "components.site"
    assert _package("components.layers.slurm.face") == "components.layers.slurm"
    assert _package("offline.schema.values") == "offline.schema"
    assert "components.layers.slurm" in _package_graph(GRAPH)["components.layers.provisioning"]


def test_no_package_circle() -> None:
    """No two packages import each other, however far round (EXEMPT lists the ones an issue still has to remove)."""
    assert _circles(_package_graph(GRAPH)) == []


def test_every_exemption_is_still_used() -> None:
    used = {(_package(name), _package(target)) for name, targets in GRAPH.items() for target in targets}
    assert sorted(edge for edge in EXEMPT if edge not in used) == []


FACES = ("config", "face")
"""What a layer shows the other layers: its typed config and its face (face.py), nothing else of it."""


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if module.startswith(LAYERS + ".") and len(parts) > 2 else None


def test_layers_reach_each_other_through_config_or_face() -> None:
    reached = sorted(
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        for target in targets
        if (own := _layer(name)) is not None
        and (other := _layer(target)) is not None
        and own != other
        and target not in {f"{LAYERS}.{other}.{face}" for face in FACES}
    )
    assert reached == []
    assert len([name for name in GRAPH if name.startswith(LAYERS + ".") and name.endswith(".face")]) >= 5


@pytest.mark.parametrize("package", ["components", "policies"])
def test_the_program_and_the_rules_never_import_the_runner(package: str) -> None:
    arrows = sorted(f"{name} -> {target}" for name, targets in GRAPH.items() if name.startswith(package) for target in targets)
    assert [arrow for arrow in arrows if " -> offline" in arrow] == []


def test_offline_modules_take_no_private_name_of_another() -> None:
    taken = sorted(
        f"{name} takes {target}.{n}"
        for name, path in MODULES.items()
        if name.startswith("offline")
        for target, names in _imports(name, path)
        if target.startswith("offline")
        for n in names
        if n.startswith("_")
    )
    assert taken == []


MIRRORED = ("components", "offline", "policies", "scripts", "benchmarks")
"""Source folders whose tests sit under tests/ at the same path (tests/components/layers/slurm/ for
components/layers/slurm/); the project-wide tests stay in tests/ itself."""


def test_the_tests_mirror_the_source_tree() -> None:
    """Every test module under tests/<source folder>/ sits in a folder the source tree has, and every such folder is
    a package (an `__init__.py`: two test modules of the same name in different folders must not collide). That every
    file the docs, comments and fixtures name exists, tests/ included, is tests/test_paths_named.py's check."""
    modules = [path for package in MIRRORED for path in (REPO / "tests" / package).rglob("test_*.py")]
    assert len(modules) > 100  # the check reads the real tree
    strays = sorted(
        path.relative_to(REPO).as_posix() for path in modules if not (REPO / path.parent.relative_to(REPO / "tests")).is_dir()
    )
    assert strays == []
    packageless = {
        folder.relative_to(REPO).as_posix()
        for path in modules
        for folder in path.parents
        if folder.is_relative_to(REPO / "tests") and not (folder / "__init__.py").is_file()
    }
    assert sorted(packageless) == []


LAYERS = "components.layers"
"""Each name under components/layers/ has one import path: the module that defines it. A layer.py keeps what it
defines (its ComponentResource, Args, outputs, CHARTS); its builders are imported from objects.py, never through it."""
IMPORTERS = ("components", "offline", "policies", "scripts", "benchmarks", "tests", "docs")


def _defined(tree: ast.Module) -> set[str]:
    """The names a module's own top-level statements bind (def, class, assignment), not those it imports."""
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.If, ast.Try, ast.With, ast.For)):
            found.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
            found.update(n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
    return found


def _exported(tree: ast.Module) -> list[str]:
    """The names of a module's `__all__` (empty where it has none)."""
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
            return [e.value for e in ast.walk(node.value) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _reexports(source: str) -> list[str]:
    tree = ast.parse(source)
    return sorted(set(_exported(tree)) - _defined(tree) - {"__all__"})


def test_the_reexport_finder_finds_a_reexport() -> None:
    assert _reexports('from .objects import spec, CHART\nclass Layer: ...\n__all__ = ["CHART", "Layer", "spec"]\n') == [
        "CHART",
        "spec",
    ]
    assert _reexports('from .objects import spec\nCHARTS = ()\ndef build(): return spec()\n__all__ = ["CHARTS", "build"]\n') == []


def test_layer_modules_reexport_nothing() -> None:
    """No module under components/layers/ lists in `__all__` a name it only imports (a compatibility re-export)."""
    layers = {name: path for name, path in MODULES.items() if name.startswith(LAYERS)}
    assert len(layers) > 50  # the check reads the real tree
    handed_on = sorted(f"{name}: {n}" for name, path in layers.items() for n in _reexports(path.read_text()))
    assert handed_on == []


@functools.cache
def _defined_in(module: str) -> frozenset[str]:
    return frozenset(_defined(ast.parse(MODULES[module].read_text())))


def _module_aliases(name: str, path: Path) -> dict[str, str]:
    """{local name: module under components/layers/} for every `from package import module [as alias]` and
    `import package.module as alias` of a file."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    aliases = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - (node.level - 1)] if node.level else []
            for alias in node.names:
                module = ".".join([*base, *([node.module] if node.module else []), alias.name])
                if module.startswith(LAYERS) and module in MODULES:
                    aliases[alias.asname or alias.name] = module
        elif isinstance(node, ast.Import):
            aliases.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith(LAYERS) and a.name in MODULES})
    return aliases


def _taken_through(path: Path) -> Iterator[str]:
    """`module.name` for every name a file imports from (or reads off, `module.NAME`) a module under
    components/layers/ that does not define it."""
    name = _module_name(path)
    for target, names in _imports(name, path):
        if target.startswith(LAYERS):
            yield from (f"{target}.{n}" for n in names if n not in _defined_in(target))
    aliases = _module_aliases(name, path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            module = aliases[node.value.id]
            if node.attr not in _defined_in(module):
                yield f"{module}.{node.attr}"


def test_every_layer_name_is_imported_from_its_module() -> None:
    """Every importer (the program, the runner, the rules, the scripts, the tests, the docs' code) takes a name of
    components/layers/ from the module that defines it, not through one that imports it."""
    files = [path for root in IMPORTERS for path in (REPO / root).rglob("*.py") if ".venv" not in path.parts]
    through = sorted(f"{path.relative_to(REPO)}: {taken}" for path in files for taken in _taken_through(path))
    assert through == []


# Registration (issue 37 item 3): only a layer's layer.py registers resources, through the k8s helpers --------------

REGISTRARS = ("components/k8s/", "components/custom_resources.py", "components/charts.py", "components/platform.py")
"""Where resources may be registered besides a layer's layer.py: the helpers layer.py registers through (Scope,
LayerNamespace and what they wrap; the chart deployer, the one choke point for third-party software) and the
Platform, which makes the layers' components."""


@functools.cache
def _program() -> Program:
    return Program()


def _may_register(path: str) -> bool:
    parts = path.split("/")
    is_layer = len(parts) == 4 and parts[:2] == ["components", "layers"] and parts[3] == "layer.py"
    return is_layer or path.startswith(REGISTRARS)


def test_the_registration_finder_finds_a_registration() -> None:
    """A resource class constructed, a helper that registers called, and a Scope method called on a value the module
    does not name are each found; a pure function is not (the source is read, never run)."""
    source = (
        "import pulumi_kubernetes as k8s\n"
        "from components.k8s.generated import generated_password\n"
        "def build(ctx, scope):\n"
        "    k8s.core.v1.ConfigMap('x')\n"
        "    generated_password(ctx, 'pw', length=8, parent=scope.parent)\n"
        "    return scope.custom('v1', 'Kind', 'name', {})\n"
        "def pure():\n"
        "    return {'kind': 'ConfigMap'}\n"
    )
    module = ModuleType("components.fake")
    exec(compile(source, "fake.py", "exec"), vars(module))  # defines the functions only
    found = _program().registrations(REPO / "components/fake.py", ast.parse(source), vars(module))
    assert [(r.line, r.callee) for r in found] == [
        (4, "pulumi_kubernetes.core.v1.ConfigMap.ConfigMap"),
        (5, "components.k8s.generated.generated_password"),
        (6, ".custom(...), a method that registers"),
    ]


def test_only_layer_modules_and_the_k8s_helpers_register_resources() -> None:
    """No module of components/ but a layer's layer.py, the helpers of REGISTRARS and the Platform constructs a Pulumi
    resource or calls what does: every other module of a layer holds pure builders."""
    found = _program().every_registration()
    assert any(r.path == "components/layers/slurm/layer.py" for r in found)  # the finder reads the real tree
    assert sorted(str(r) for r in found if not _may_register(r.path)) == []


def test_custom_resources_and_network_policies_are_made_one_way() -> None:
    """`Scope.custom` and `Scope.network_policy` are the one way to make a custom resource or a NetworkPolicy: the
    classes are constructed in one module each (components/custom_resources.py, components/k8s/resources.py), and the
    functions that construct them are called by Scope and the helpers beside it (and, for the Argo CD Applications of
    the charts, by the chart deployer), never by a layer."""
    import pulumi_kubernetes as k8s

    from components import custom_resources
    from components.k8s import resources

    custom = (k8s.apiextensions.CustomResource, k8s.apiextensions.CustomResourcePatch, custom_resources.KubernetesObject)
    policies = (k8s.networking.v1.NetworkPolicy, k8s.networking.v1.NetworkPolicyPatch)
    assert {r.path for r in _program().constructions(custom)} == {"components/custom_resources.py"}
    assert {r.path for r in _program().constructions(policies)} == {"components/k8s/resources.py"}
    called = _program().calls_of((custom_resources.custom_resource, resources.network_policy))
    assert {r.path for r in called} == {"components/k8s/scope.py", "components/k8s/resources.py", "components/charts.py"}


def test_network_policy_allows_are_built_in_objects_modules() -> None:
    """A layer's NetworkPolicy allows are pure builders of its objects.py: no other module of a layer writes an
    `Allow` or calls the helpers that make one (layer.py passes what objects.py returns to its LayerNamespace)."""
    from components.k8s import resources

    makers = (resources.Allow, resources.egress_to_apiserver, resources.egress_to_internet, resources.egress_to_namespaces)
    makers += (resources.ingress_from_anywhere, resources.ingress_from_namespaces)
    made = [r for r in _program().calls_of(makers) if r.path.startswith("components/layers/")]
    assert len(made) > 20  # the finder reads the real tree
    assert sorted(str(r) for r in made if not r.path.endswith("/objects.py")) == []


def test_every_layer_has_an_objects_module() -> None:
    """Each layer folder has a layer.py (what it registers) and an objects.py (its pure builders, its allows too)."""
    layers = sorted(path for path in (REPO / "components" / "layers").iterdir() if (path / "__init__.py").is_file())
    assert len(layers) > 10  # the check reads the real tree
    assert [p.name for p in layers if not (p / "layer.py").is_file() or not (p / "objects.py").is_file()] == []


ROOT_ARITHMETIC = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?\.(?:parents\b|parent\.parent\b)")
"""A module finding the project's root by counting its own folders up (`Path(__file__).parents[2]`)."""
SELF_LOCATING = {
    "components/paths.py": "the one project-root helper",
    "policies/gitops-drift/__main__.py": "a policy pack run as a script puts the root on sys.path before any import",
    "policies/security/__main__.py": "a policy pack run as a script puts the root on sys.path before any import",
    "policies/slurm-contract/__main__.py": "a policy pack run as a script puts the root on sys.path before any import",
    "scripts/ci/build_shared_manifest.py": "a CI script run as `python scripts/ci/...`: the project is not importable",
}


def test_one_module_finds_the_project_root() -> None:
    """components/paths.py's PROJECT_ROOT is the project's root everywhere; only the scripts that must find the root
    before they can import anything (SELF_LOCATING) count folders up themselves."""
    assert ROOT_ARITHMETIC.search("ROOT = Path(__file__).resolve().parents[2]")
    assert ROOT_ARITHMETIC.search("ROOT = Path(__file__).parent.parent")
    assert not ROOT_ARITHMETIC.search("HERE = Path(__file__).resolve().parent")
    files = [
        p for root in ("components", "offline", "policies", "benchmarks", "scripts", "docs") for p in (REPO / root).rglob("*.py")
    ]
    counting = sorted(p.relative_to(REPO).as_posix() for p in files if ROOT_ARITHMETIC.search(p.read_text()))
    assert counting == sorted(SELF_LOCATING)

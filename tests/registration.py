"""Where the program registers Pulumi resources, read from its source (tests/test_layout.py holds it to "only a
layer's layer.py registers").

A call registers when its callee, looked up in the module's own globals (`k8s.core.v1.ConfigMap`, `Scope`,
`config_map`), is a Pulumi resource class (pulumi_kubernetes', pulumi_random's, pulumi_command's, or the project's own
ComponentResources and KubernetesObject) or a project function or method that registers; and a method called on a
value the globals do not name (`scope.config_map(...)`, `self._controller(...)`) registers when a project method of
that name does. A function registers when a call in its body does, found by iterating to a fixed point, so a
helper that registers through another helper is found too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pulumi

REPO = Path(__file__).resolve().parent.parent
_MISSING = object()


@dataclass(frozen=True)
class Registration:
    """A call that registers resources: where, and what it calls."""

    path: str
    line: int
    callee: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.callee}"


def module_name(path: Path, root: Path = REPO) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(globals_: Mapping[str, Any], node: ast.expr) -> Any:
    """What a callee expression names through the module's globals (a name, or attributes read off one), or _MISSING
    when it starts from anything else (a local variable, `self`, a call's result)."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in globals_:
        return _MISSING
    found = globals_[node.id]
    for attribute in reversed(attributes):
        found = getattr(found, attribute, _MISSING)
        if found is _MISSING:
            return _MISSING
    return found


def _is_resource_class(found: Any) -> bool:
    return inspect.isclass(found) and issubclass(found, pulumi.Resource)


def _key(found: Any) -> tuple[str, str] | None:
    """(module, qualified name) of a project function, or of a project class's __init__."""
    module = getattr(found, "__module__", None) or ""
    if not module.startswith("components"):
        return None
    if inspect.isclass(found):
        return (module, f"{found.__qualname__}.__init__")
    if inspect.isfunction(found):
        return (module, found.__qualname__)
    return None


@dataclass
class _Function:
    module: str
    qualname: str
    method: bool
    """Defined in a class's body."""
    calls: list[ast.Call]
    globals_: Mapping[str, Any]


def _functions(module: str, tree: ast.Module, globals_: Mapping[str, Any]) -> Iterator[_Function]:
    """Every function and method of a module with the calls in its body (nested functions' included), named as
    Python's __qualname__ names them."""

    def visit(node: ast.AST, prefix: str) -> Iterator[_Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{prefix}{child.name}"
                calls = [n for n in ast.walk(child) if isinstance(n, ast.Call)]
                yield _Function(module, qualname, isinstance(node, ast.ClassDef), calls, globals_)
                yield from visit(child, f"{qualname}.<locals>.")

    yield from visit(tree, "")


class Program:
    """The project's modules under `packages`, imported, with what registers among their functions and methods."""

    def __init__(self, packages: tuple[str, ...] = ("components",), root: Path = REPO) -> None:
        self.root = root
        self.modules: dict[str, tuple[Path, ast.Module, ModuleType]] = {}
        for package in packages:
            for path in sorted((root / package).rglob("*.py")):
                name = module_name(path, root)
                self.modules[name] = (path, ast.parse(path.read_text()), importlib.import_module(name))
        functions = [f for name, (_, tree, mod) in self.modules.items() for f in _functions(name, tree, vars(mod))]
        self.registering: set[tuple[str, str]] = set()
        self.registering_methods: set[str] = set()
        """Names of project methods that register (what a call on an unnamed value is taken to call)."""
        changed = True
        while changed:
            changed = False
            for function in functions:
                key = (function.module, function.qualname)
                if key not in self.registering and any(self.callee(c, function.globals_) for c in function.calls):
                    self.registering.add(key)
                    name = function.qualname.rsplit(".", 1)[-1]
                    if function.method and not name.startswith("__"):
                        self.registering_methods.add(name)
                    changed = True

    def callee(self, call: ast.Call, globals_: Mapping[str, Any]) -> str | None:
        """What `call` registers through (a resource class, or a registering project function or method), or None."""
        found = _resolve(globals_, call.func)
        if found is _MISSING:
            attribute = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if attribute in self.registering_methods:
                return f".{attribute}(...), a method that registers"
            return None
        if _is_resource_class(found):
            return f"{found.__module__}.{found.__qualname__}"
        key = _key(found)
        if key is not None and key in self.registering:
            return f"{key[0]}.{key[1].removesuffix('.__init__')}"
        return None

    def registrations(self, path: Path, tree: ast.Module, globals_: Mapping[str, Any]) -> list[Registration]:
        """Every call of a module (in its functions or at its top level) that registers."""
        relative = path.relative_to(self.root).as_posix()
        return [
            Registration(relative, node.lineno, callee)
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and (callee := self.callee(node, globals_)) is not None
        ]

    def every_registration(self) -> list[Registration]:
        return [r for path, tree, mod in self.modules.values() for r in self.registrations(path, tree, vars(mod))]

    def _resolved_calls(self) -> Iterator[tuple[Path, ast.Call, Any]]:
        """(module path, call, what its callee names through the module's globals) for every call of the modules."""
        for path, tree, mod in self.modules.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    yield path, node, _resolve(vars(mod), node.func)

    def constructions(self, classes: tuple[type, ...]) -> list[Registration]:
        """Every call of the modules that constructs one of `classes` (or a subclass)."""
        return [
            Registration(path.relative_to(self.root).as_posix(), call.lineno, f"{found.__module__}.{found.__qualname__}")
            for path, call, found in self._resolved_calls()
            if inspect.isclass(found) and issubclass(found, classes)
        ]

    def calls_of(self, functions: tuple[Any, ...]) -> list[Registration]:
        """Every call of the modules whose callee, through the module's globals, is one of `functions`."""
        return [
            Registration(path.relative_to(self.root).as_posix(), call.lineno, f"{found.__module__}.{found.__qualname__}")
            for path, call, found in self._resolved_calls()
            if any(found is function for function in functions)
        ]

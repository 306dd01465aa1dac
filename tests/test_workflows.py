"""The GitHub Actions workflows that users of hpcforge run (.github/workflows/*.yml).

Every workflow is checked, offline, by:
  1. the SchemaStore "github-workflows" JSON schema that check-jsonschema vendors (read from the
     installed package, validated with jsonschema), plus check-jsonschema's own "require timeout"
     schema; and the check-jsonschema command line over the same builtin schemas;
  2. an expression checker: every `${{ }}` (and every `if:`) must parse as a GitHub Actions
     expression, use known functions with the right number of arguments, use only the contexts
     available where it stands, and name steps, needs and matrix keys that exist;
  3. shellcheck on every `run:` script (expressions replaced by placeholders, as actionlint does).
Negative tests show that each check rejects what it should. Then the structure the project relies on:
policy packs paired with their configs, forks checked offline, prod behind an environment, drift alarm.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from io import StringIO
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.helpers import REPO, require_binaries

WORKFLOW_DIR = REPO / ".github" / "workflows"
WORKFLOWS = sorted(WORKFLOW_DIR.glob("*.yml"))
STACKS = ["dev", "prod"]
POLICY_PACKS = ["policies/gitops-drift", "policies/security", "policies/slurm-contract"]

# check-jsonschema's builtin schemas: (package, file) -> name on its command line
BUILTIN_SCHEMAS = {
    ("check_jsonschema.builtin_schemas.vendor", "github-workflows.json"): "vendor.github-workflows",
    (
        "check_jsonschema.builtin_schemas.custom",
        "github-workflows-require-timeout.json",
    ): "custom.github-workflows-require-timeout",
}


# --- loading ------------------------------------------------------------------------------------------------


def load_yaml(text: str) -> Any:
    """YAML 1.2, as GitHub reads workflows (`on` stays a string; duplicate keys are an error)."""
    return YAML(typ="safe", pure=True).load(StringIO(text))


def workflow(name: str) -> dict[str, Any]:
    document: dict[str, Any] = load_yaml((WORKFLOW_DIR / name).read_text())
    return document


# --- 1. JSON schema -------------------------------------------------------------------------------------------


def builtin_schema(package: str, name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((files(package) / name).read_text(encoding="utf-8"))
    return schema


def schema_problems(document: Any) -> list[str]:
    """Every violation of the vendored GitHub workflow schemas, with its JSON path."""
    problems: list[str] = []
    for (package, name), label in BUILTIN_SCHEMAS.items():
        schema = builtin_schema(package, name)
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
        for error in validator.iter_errors(document):
            details = sorted({f"{sub.json_path}: {sub.message}" for sub in error.context or []})
            problems.append(f"[{label}] {error.json_path}: {error.message[:200]}" + "".join(f"\n    {d}" for d in details))
    return problems


def check_jsonschema_cli(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    """check-jsonschema's own command line over the builtin schemas (no network: builtin schemas)."""
    combined = subprocess.CompletedProcess[str](args=[], returncode=0, stdout="", stderr="")
    for label in BUILTIN_SCHEMAS.values():
        result = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", label, *map(str, paths)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        combined.returncode = combined.returncode or result.returncode
        combined.stdout += result.stdout
        combined.stderr += result.stderr
    return combined


# --- 2. expressions ---------------------------------------------------------------------------------------------

# name -> (min args, max args or None); GitHub matches function names case-insensitively.
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "contains": (2, 2),
    "startswith": (2, 2),
    "endswith": (2, 2),
    "format": (1, None),
    "join": (1, 2),
    "tojson": (1, 1),
    "fromjson": (1, 1),
    "hashfiles": (1, None),
    "success": (0, 0),
    "always": (0, 0),
    "cancelled": (0, 0),
    "failure": (0, 0),
    "case": (3, None),
}
STATUS_FUNCTIONS = {"success", "always", "cancelled", "failure"}
CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix", "needs", "inputs"}

# Which contexts each place of a workflow may use (GitHub's "context availability" table).
WORKFLOW_LEVEL = {"github", "inputs", "vars"}
WORKFLOW_ENV = {"github", "secrets", "inputs", "vars"}
JOB_IF = {"github", "needs", "vars", "inputs"}
JOB_STRATEGY = {"github", "needs", "vars", "inputs"}
JOB_LEVEL = {"github", "needs", "strategy", "matrix", "vars", "inputs"}
JOB_ENV = JOB_LEVEL | {"secrets"}
JOB_DEFAULTS = JOB_LEVEL | {"env"}
JOB_OUTPUTS = JOB_LEVEL | {"job", "runner", "env", "secrets", "steps"}
STEP_IF = JOB_LEVEL | {"job", "runner", "env", "steps"}
STEP = STEP_IF | {"secrets"}
CALL_WITH = JOB_LEVEL | {"secrets"}

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<string>'(?:[^']|'')*')
  | (?P<number>0x[0-9a-fA-F]+|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[<>!()\[\].,*])
    )""",
    re.VERBOSE,
)


class ExpressionError(ValueError):
    pass


@dataclass
class Parsed:
    functions: list[str]
    references: list[tuple[str, str | None]]
    """(context, first property) of every context access, e.g. ('steps', 'deployed')."""


def tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ExpressionError(f"unexpected character {text[position:].lstrip()[:1]!r} at {position}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


class _Parser:
    """Recursive descent over GitHub's expression grammar."""

    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.index = 0
        self.parsed = Parsed(functions=[], references=[])

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ExpressionError(f"unexpected end of expression{f' (expected {value!r})' if value else ''}")
        if value is not None and token[1] != value:
            raise ExpressionError(f"expected {value!r}, found {token[1]!r}")
        self.index += 1
        return token

    def at(self, *values: str) -> bool:
        token = self.peek()
        return token is not None and token[0] == "op" and token[1] in values

    def parse(self) -> Parsed:
        if not self.tokens:
            raise ExpressionError("empty expression")
        self.binary(0)
        extra = self.peek()
        if extra is not None:
            raise ExpressionError(f"unexpected {extra[1]!r} after a complete expression")
        return self.parsed

    LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="))

    def binary(self, level: int) -> None:
        if level == len(self.LEVELS):
            self.unary()
            return
        self.binary(level + 1)
        while self.at(*self.LEVELS[level]):
            self.take()
            self.binary(level + 1)

    def unary(self) -> None:
        if self.at("!"):
            self.take()
            self.unary()
            return
        self.postfix()

    def postfix(self) -> None:
        reference = self.primary()
        first = True
        while self.at(".", "["):
            if self.take()[1] == ".":
                kind, name = self.take()
                if kind != "ident" and name != "*":
                    raise ExpressionError(f"expected a property name after '.', found {name!r}")
            else:
                name = "[]"
                self.binary(0)
                self.take("]")
            if reference is not None and first:
                self.parsed.references.append((reference, name if name not in ("*", "[]") else None))
            first = False
        if reference is not None and first:
            self.parsed.references.append((reference, None))

    def primary(self) -> str | None:
        kind, value = self.take()
        if kind in ("string", "number"):
            return None
        if kind == "op" and value == "(":
            self.binary(0)
            self.take(")")
            return None
        if kind != "ident":
            raise ExpressionError(f"unexpected {value!r}")
        if self.at("("):
            self.call(value)
            return None
        if value in ("true", "false", "null"):
            return None
        if value.lower() not in CONTEXTS:
            raise ExpressionError(f"unknown context {value!r} (known: {', '.join(sorted(CONTEXTS))})")
        return value.lower()

    def call(self, name: str) -> None:
        function = name.lower()
        if function not in FUNCTIONS:
            raise ExpressionError(f"unknown function {name!r}")
        self.take("(")
        count = 0
        if not self.at(")"):
            self.binary(0)
            count = 1
            while self.at(","):
                self.take()
                self.binary(0)
                count += 1
        self.take(")")
        low, high = FUNCTIONS[function]
        if count < low or (high is not None and count > high):
            arity = str(low) if high == low else f"{low}..{high if high is not None else 'n'}"
            raise ExpressionError(f"{name}() takes {arity} argument(s), got {count}")
        self.parsed.functions.append(function)


def parse_expression(text: str) -> Parsed:
    return _Parser(text).parse()


def embedded_expressions(value: str) -> Iterator[str]:
    """The bodies of the `${{ }}` in a string; an unterminated one raises ExpressionError."""
    start = value.find("${{")
    while start != -1:
        position, quoted = start + 3, False
        while position < len(value):
            if value[position] == "'":
                quoted = not quoted
            elif not quoted and value.startswith("}}", position):
                break
            position += 1
        else:
            raise ExpressionError(f"unterminated '${{{{' in {value[start : start + 40]!r}")
        yield value[start + 3 : position]
        start = value.find("${{", position + 2)


@dataclass
class Scope:
    """What a place of the workflow may refer to."""

    contexts: set[str]
    needs: set[str]
    steps: set[str]
    matrix: set[str] | None
    """None: the matrix is computed (not checkable)."""
    inputs: set[str]
    is_if: bool = False
    in_step: bool = False


def check_expression(body: str, scope: Scope) -> list[str]:
    try:
        parsed = parse_expression(body)
    except ExpressionError as error:
        return [f"invalid expression ${{{{ {body.strip()} }}}}: {error}"]
    problems: list[str] = []
    for function in parsed.functions:
        if function in STATUS_FUNCTIONS and not scope.is_if:
            problems.append(f"{function}() is only available in `if:`")
        if function == "hashfiles" and not scope.in_step:
            problems.append("hashFiles() is only available in steps")
    for context, name in parsed.references:
        if context not in scope.contexts:
            problems.append(f"context {context!r} is not available here (available: {', '.join(sorted(scope.contexts))})")
        elif name is None:
            continue
        elif context == "needs" and name not in scope.needs:
            problems.append(f"needs.{name}: {name!r} is not a job this job needs ({', '.join(sorted(scope.needs)) or 'none'})")
        elif context == "steps" and name not in scope.steps:
            problems.append(f"steps.{name}: no earlier step has id {name!r}")
        elif context == "matrix" and scope.matrix is not None and name not in scope.matrix:
            problems.append(f"matrix.{name}: not a matrix key ({', '.join(sorted(scope.matrix)) or 'no matrix'})")
        elif context == "inputs" and name not in scope.inputs:
            problems.append(f"inputs.{name}: no such input")
    return [f"{problem} (in ${{{{ {body.strip()} }}}})" for problem in problems]


def check_value(value: Any, scope: Scope, where: str, as_condition: bool = False) -> list[str]:
    """Check every expression inside a value (strings, lists, mappings)."""
    problems: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            problems += check_value(item, scope, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems += check_value(item, scope, f"{where}[{index}]")
    elif isinstance(value, str):
        try:
            bodies = list(embedded_expressions(value))
        except ExpressionError as error:
            return [f"{where}: {error}"]
        if as_condition:
            stripped = value.strip()
            if not bodies:
                bodies = [stripped]
            elif not (stripped.startswith("${{") and stripped.endswith("}}") and len(bodies) == 1):
                return [f"{where}: an `if:` mixing ${{{{ }}}} with other text is a non-empty string, always true"]
        for body in bodies:
            problems += [f"{where}: {problem}" for problem in check_expression(body, scope)]
    return problems


def _inputs(document: dict[str, Any]) -> set[str]:
    triggers = document.get("on")
    names: set[str] = set()
    if isinstance(triggers, dict):
        for trigger in ("workflow_dispatch", "workflow_call"):
            spec = triggers.get(trigger) or {}
            names |= set((spec.get("inputs") or {}) if isinstance(spec, dict) else {})
    return names


def _matrix_keys(job: dict[str, Any]) -> set[str] | None:
    matrix = (job.get("strategy") or {}).get("matrix")
    if matrix is None:
        return set()
    if not isinstance(matrix, dict):
        return None
    keys = {key for key in matrix if key not in ("include", "exclude")}
    for entry in matrix.get("include") or []:
        if isinstance(entry, dict):
            keys |= set(entry)
    return keys


JOB_KEYS = ("name", "runs-on", "concurrency", "environment", "timeout-minutes", "continue-on-error", "container", "services")


def expression_problems(document: dict[str, Any]) -> list[str]:
    """Every expression problem of a workflow, each naming where it is."""
    inputs = _inputs(document)
    problems: list[str] = []

    def check(value: Any, where: str, contexts: set[str], **scope: Any) -> None:
        condition = where.endswith(".if")
        settings: dict[str, Any] = {"needs": set(), "steps": set(), "matrix": set(), "inputs": inputs, "is_if": condition}
        settings.update(scope)
        problems.extend(check_value(value, Scope(contexts=contexts, **settings), where, as_condition=condition))

    for key in ("name", "run-name", "concurrency", "defaults"):
        check(document.get(key), key, WORKFLOW_LEVEL)
    check(document.get("env"), "env", WORKFLOW_ENV)

    for job_id, job in (document.get("jobs") or {}).items():
        where = f"jobs.{job_id}"
        needs_value = job.get("needs") or []
        needs = {needs_value} if isinstance(needs_value, str) else set(needs_value)
        matrix = _matrix_keys(job)
        check(job.get("if"), f"{where}.if", JOB_IF, needs=needs, matrix=matrix)
        check(job.get("strategy"), f"{where}.strategy", JOB_STRATEGY, needs=needs, matrix=matrix)
        for key in JOB_KEYS:
            check(job.get(key), f"{where}.{key}", JOB_LEVEL, needs=needs, matrix=matrix)
        check(job.get("env"), f"{where}.env", JOB_ENV, needs=needs, matrix=matrix)
        check(job.get("defaults"), f"{where}.defaults", JOB_DEFAULTS, needs=needs, matrix=matrix)
        for key in ("with", "secrets"):
            check(job.get(key), f"{where}.{key}", CALL_WITH, needs=needs, matrix=matrix)
        seen: set[str] = set()
        for index, step in enumerate(job.get("steps") or []):
            for key, item in step.items():
                contexts = STEP_IF if key == "if" else STEP
                check(item, f"{where}.steps[{index}].{key}", contexts, needs=needs, matrix=matrix, steps=set(seen), in_step=True)
            if "id" in step:
                seen.add(str(step["id"]))
        check(job.get("outputs"), f"{where}.outputs", JOB_OUTPUTS, needs=needs, matrix=matrix, steps=seen)
    return problems


# --- 3. shellcheck ---------------------------------------------------------------------------------------------------


def _shell(document: dict[str, Any], job: dict[str, Any], step: dict[str, Any]) -> str:
    for source in (step, (job.get("defaults") or {}).get("run") or {}, (document.get("defaults") or {}).get("run") or {}):
        if "shell" in source:
            return str(source["shell"])
    return "bash"


def run_scripts(document: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, script) of every bash `run:`, with each `${{ }}` replaced by a same-length placeholder word."""
    for job_id, job in (document.get("jobs") or {}).items():
        for index, step in enumerate(job.get("steps") or []):
            if "run" not in step or _shell(document, job, step).split()[0] not in ("bash", "sh"):
                continue
            script = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), str(step["run"]), flags=re.DOTALL)
            yield f"jobs.{job_id}.steps[{index}]", script


def shellcheck_problems(document: dict[str, Any]) -> list[str]:
    shellcheck = require_binaries("shellcheck")["shellcheck"]
    problems: list[str] = []
    for where, script in run_scripts(document):
        result = subprocess.run(
            [shellcheck, "--shell=bash", "--severity=style", "--format=gcc", "-"],
            input=script,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if result.returncode != 0:
            problems.append(f"{where}: shellcheck:\n{result.stdout.replace('-:', '    line ')}")
    return problems


def lint(document: dict[str, Any]) -> list[str]:
    return schema_problems(document) + expression_problems(document) + shellcheck_problems(document)


# --- the workflows are valid ---------------------------------------------------------------------------------------


def test_the_three_workflows_exist() -> None:
    assert {path.name for path in WORKFLOWS} >= {"pull-request.yml", "deploy.yml", "drift.yml"}


def test_schemas_come_from_the_installed_package() -> None:
    schema = builtin_schema("check_jsonschema.builtin_schemas.vendor", "github-workflows.json")
    assert schema["$id"] == "https://json.schemastore.org/github-workflow.json"
    assert "normalJob" in schema["definitions"] and "step" in schema["definitions"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_workflow_matches_the_github_workflow_schema(path: Path) -> None:
    problems = schema_problems(load_yaml(path.read_text()))
    assert not problems, "\n".join(problems)


def test_check_jsonschema_accepts_every_workflow() -> None:
    result = check_jsonschema_cli(WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_workflow_expressions_are_valid(path: Path) -> None:
    problems = expression_problems(load_yaml(path.read_text()))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_run_scripts_pass_shellcheck(path: Path) -> None:
    problems = shellcheck_problems(load_yaml(path.read_text()))
    assert not problems, "\n".join(problems)


# --- ... and the checks reject broken workflows --------------------------------------------------------------------

MINIMAL = """\
name: minimal
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    timeout-minutes: 5
    steps:
      - uses: actions/checkout@v4
      - run: echo "hello"
"""


def test_minimal_workflow_is_clean() -> None:
    assert lint(load_yaml(MINIMAL)) == []


def test_misspelled_key_is_rejected_by_the_schema(tmp_path: Path) -> None:
    broken = MINIMAL.replace("runs-on:", "runs-onn:")
    problems = schema_problems(load_yaml(broken))
    assert problems and any("'runs-onn' was unexpected" in problem for problem in problems), problems
    path = tmp_path / "broken.yml"
    path.write_text(broken)
    result = check_jsonschema_cli([path])
    assert result.returncode != 0 and "runs-onn" in result.stdout + result.stderr


def test_misspelled_key_in_a_real_workflow_is_rejected() -> None:
    document = workflow("deploy.yml")
    prod = document["jobs"]["prod"]
    prod["enviroment"] = prod.pop("environment")
    assert any("'enviroment' was unexpected" in problem for problem in schema_problems(document))


def test_job_without_timeout_is_rejected() -> None:
    problems = schema_problems(load_yaml(MINIMAL.replace("    timeout-minutes: 5\n", "")))
    assert any("timeout-minutes" in problem for problem in problems), problems


def test_malformed_expression_in_a_typed_field_is_rejected_by_the_schema() -> None:
    broken = MINIMAL.replace("timeout-minutes: 5", "timeout-minutes: ${{ matrix.minutes")
    assert schema_problems(load_yaml(broken))


@pytest.mark.parametrize(
    ("step_if", "expected"),
    [
        ("${{ github.event_name == 'push' }", "unterminated"),
        ("${{ github.event_name = 'push' }}", "unexpected character '='"),
        ("${{ contain(github.ref, 'refs/heads/main') }}", "unknown function 'contain'"),
        ("${{ startsWith(github.ref) }}", "startsWith() takes 2 argument(s), got 1"),
        ("${{ secret.PULUMI_ACCESS_TOKEN != '' }}", "unknown context 'secret'"),
        ("${{ (github.ref == 'main' }}", "expected ')'"),
        ("${{ github.ref == 'refs/heads/main' }} && always()", "always true"),
        ("secrets.PULUMI_ACCESS_TOKEN != ''", "context 'secrets' is not available here"),
        ("steps.nope.outcome == 'failure'", "no earlier step has id 'nope'"),
        ("needs.build.result == 'success'", "'build' is not a job this job needs"),
        ("matrix.stak == 'prod'", "matrix.stak: not a matrix key"),
    ],
)
def test_invalid_expression_is_rejected(step_if: str, expected: str) -> None:
    document = load_yaml(MINIMAL)
    document["jobs"]["build"]["strategy"] = {"matrix": {"stack": ["dev", "prod"]}}
    document["jobs"]["build"]["steps"][1]["if"] = step_if
    problems = lint(document)
    assert any(expected in problem for problem in problems), problems


def test_invalid_expression_in_a_real_workflow_is_rejected() -> None:
    document = workflow("pull-request.yml")
    step = next(s for s in document["jobs"]["preview"]["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@"))
    step["with"]["stack-name"] = "${{ vars.PULUMI_ORG || github.repository_owner }/${{ matrix.stack }}"
    assert any("invalid expression" in problem for problem in expression_problems(document))
    document = workflow("drift.yml")
    document["jobs"]["drift"]["steps"][-2]["if"] = "failure() && steps.drfit.outcome == 'failure'"
    assert any("steps.drfit" in problem for problem in expression_problems(document))


def test_status_functions_only_in_if() -> None:
    document = load_yaml(MINIMAL)
    document["jobs"]["build"]["steps"][1]["run"] = "echo ${{ failure() }}"
    assert any("failure() is only available in `if:`" in p for p in expression_problems(document))


def test_shellcheck_rejects_a_broken_run_script() -> None:
    document = load_yaml(MINIMAL)
    document["jobs"]["build"]["steps"][1]["run"] = 'for f in $(ls *.txt); do cat $f; done\necho "${{ github.sha }}"'
    problems = shellcheck_problems(document)
    assert problems and "SC2045" in problems[0] and "SC2086" in problems[0], problems


# --- every action is pinned ---------------------------------------------------------------------------------------

_PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@(v\d+(\.\d+){0,2}|[0-9a-f]{40})$")


def all_steps(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for job_id, job in (document.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            yield job_id, job, step


def uses_problems(document: dict[str, Any]) -> list[str]:
    problems = []
    for job_id, job in (document.get("jobs") or {}).items():
        references = [str(step["uses"]) for step in job.get("steps") or [] if "uses" in step]
        if "uses" in job:
            references.append(str(job["uses"]))
        for reference in references:
            if reference.startswith("./"):
                continue
            if not _PINNED.match(reference):
                problems.append(f"jobs.{job_id}: {reference!r} is not pinned to a version tag (vN[.N[.N]]) or a commit SHA")
    return problems


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_version(path: Path) -> None:
    document = load_yaml(path.read_text())
    assert not uses_problems(document), uses_problems(document)
    used = {str(step["uses"]).split("@")[0] for _, _, step in all_steps(document) if "uses" in step}
    assert used <= {
        "actions/cache",
        "actions/checkout",
        "actions/setup-python",
        "actions/upload-artifact",
        "actions/github-script",
        "pulumi/actions",
    }


@pytest.mark.parametrize(
    "reference", ["actions/checkout@main", "pulumi/actions@latest", "pulumi/actions", "actions/setup-python@v5-beta"]
)
def test_unpinned_actions_are_rejected(reference: str) -> None:
    document = load_yaml(MINIMAL)
    document["jobs"]["build"]["steps"][0]["uses"] = reference
    assert uses_problems(document)


# --- pulumi/actions steps: policy packs paired with their configs ---------------------------------------------------


def pulumi_steps(document: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every pulumi/actions step, those that only install the CLI (no `command`) too."""
    return [
        (job_id, job, step)
        for job_id, job, step in all_steps(document)
        if str(step.get("uses", "")).startswith("pulumi/actions@")
    ]


def pulumi_command_steps(document: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The pulumi/actions steps that run a command (preview, up): the others only install the CLI."""
    return [(job_id, job, step) for job_id, job, step in pulumi_steps(document) if (step.get("with") or {}).get("command")]


def lines(value: Any) -> list[str]:
    return [line.strip() for line in str(value or "").splitlines() if line.strip()]


def pairing_problems(step: dict[str, Any], stack: str) -> list[str]:
    """policyPacks and policyPackConfigs pair by position: the three packs, each with policies/config/<stack>.json."""
    with_ = step.get("with") or {}
    packs, configs = lines(with_.get("policyPacks")), lines(with_.get("policyPackConfigs"))
    problems = []
    if packs != POLICY_PACKS:
        problems.append(f"policyPacks {packs} != {POLICY_PACKS}")
    if len(configs) != len(packs):
        problems.append(f"{len(packs)} policy packs but {len(configs)} configs: they pair by position")
    for pack, config in zip(packs, configs, strict=False):
        if config != f"policies/config/{stack}.json":
            problems.append(f"{pack} is paired with {config}, not policies/config/{stack}.json")
    return problems


def test_pairing_check_rejects_mismatches() -> None:
    good = {"with": {"policyPacks": "\n".join(POLICY_PACKS), "policyPackConfigs": "policies/config/prod.json\n" * 3}}
    assert pairing_problems(good, "prod") == []
    assert pairing_problems(good, "dev")
    short = copy.deepcopy(good)
    short["with"]["policyPackConfigs"] = "policies/config/prod.json\n" * 2
    assert any("pair by position" in p for p in pairing_problems(short, "prod"))
    swapped = copy.deepcopy(good)
    swapped["with"]["policyPacks"] = "\n".join(reversed(POLICY_PACKS))
    assert pairing_problems(swapped, "prod")


def _resolve(value: str, stack: str) -> str:
    return value.replace("${{ matrix.stack }}", stack)


def installs_python_dependencies_before(job: dict[str, Any], step: dict[str, Any]) -> bool:
    steps = job["steps"]
    before = steps[: steps.index(step)]
    return any("pip install" in str(s.get("run", "")) and "requirements.txt" in str(s.get("run", "")) for s in before) and any(
        str(s.get("uses", "")).startswith("actions/setup-python@") for s in before
    )


def uses_credentials(document: dict[str, Any], job: dict[str, Any]) -> None:
    env = {**(document.get("env") or {}), **(job.get("env") or {})}
    assert env.get("PULUMI_ACCESS_TOKEN") == "${{ secrets.PULUMI_ACCESS_TOKEN }}"
    kubeconfig_steps = [s for s in job["steps"] if (s.get("env") or {}).get("KUBECONFIG_CONTENT") == "${{ secrets.KUBECONFIG }}"]
    assert kubeconfig_steps and "KUBECONFIG=" in kubeconfig_steps[0]["run"] and "GITHUB_ENV" in kubeconfig_steps[0]["run"]


def pulumi_version(document: dict[str, Any]) -> str:
    return str(document["env"]["PULUMI_VERSION"])


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_pulumi_cli_matches_the_sdk_pin(path: Path) -> None:
    document = load_yaml(path.read_text())
    if not pulumi_steps(document):
        return
    pin = re.search(r"^pulumi==(\S+)$", (REPO / "requirements.txt").read_text(), re.MULTILINE)
    assert pin is not None
    assert pulumi_version(document) == pin.group(1)
    for _, _, step in pulumi_steps(document):
        assert step["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"


# --- pull-request.yml ------------------------------------------------------------------------------------------------


def _step_index(steps: list[dict[str, Any]], predicate: Any) -> int:
    return next(i for i, step in enumerate(steps) if predicate(step))


def test_pull_request_runs_the_full_strict_suite_on_python_311() -> None:
    """The users' CI runs what .ci/run runs (Debian daemons, `make test` and `make lint` with
    HPCFORGE_STRICT=1), with the upstream CRDs and chart values fetched at their pinned digests."""
    document = workflow("pull-request.yml")
    assert "pull_request" in document["on"] and "pull_request_target" not in document["on"]
    assert document["env"]["PYTHON_VERSION"] == "3.11"
    test = document["jobs"]["test"]
    steps = test["steps"]
    setup = _step_index(steps, lambda s: str(s.get("uses", "")).startswith("actions/setup-python@"))
    assert steps[setup]["with"]["python-version"] == "${{ env.PYTHON_VERSION }}"
    fetch = _step_index(steps, lambda s: str(s.get("run", "")).startswith("python scripts/ci/fetch_shared.py"))
    assert '--dest "$HPCFORGE_SHARED"' in steps[fetch]["run"]
    assert test["env"]["HPCFORGE_SHARED"].startswith("${{ github.workspace }}")
    cache = _step_index(steps, lambda s: str(s.get("uses", "")).startswith("actions/cache@"))
    assert steps[cache]["with"]["path"] == "${{ env.HPCFORGE_SHARED }}"
    assert "hashFiles('scripts/ci/shared-manifest.json')" in steps[cache]["with"]["key"]
    # as root (the real-daemon tier needs it), with the PATH that has setup-python's Python
    suite = _step_index(steps, lambda s: str(s.get("run", "")).strip() == 'sudo -E env "PATH=$PATH" .ci/run')
    assert setup < cache < fetch < suite
    # .ci/run is what makes the suite strict and installs the daemons: check it still does.
    ci_run = (REPO / ".ci" / "run").read_text()
    assert "export HPCFORGE_STRICT=1" in ci_run and "DEBIAN_PACKAGES=(" in ci_run
    assert re.search(r"^make test$", ci_run, re.M) and re.search(r"^make lint$", ci_run, re.M)
    assert not any("secrets." in json.dumps(step) for step in steps)


def test_pull_request_checks_the_charts_rendered_like_the_engine() -> None:
    document = workflow("pull-request.yml")
    charts = document["jobs"]["charts"]
    assert charts["strategy"]["matrix"]["stack"] == STACKS and "test" in charts["needs"]
    steps = charts["steps"]
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    assert cache["with"]["path"] == "${{ env.HPCFORGE_CHARTS_CACHE }}"
    assert charts["env"]["HPCFORGE_CHARTS_CACHE"].startswith("${{ github.workspace }}")
    check = next(str(s["run"]) for s in steps if "hpcforge check" in str(s.get("run", "")))
    assert "--render-charts --pull-charts" in check and '--stack "$STACK"' in check
    arguments = re.findall(r"--(policy-pack(?:-config)?) (\S+)", check)
    assert [value for flag, value in arguments if flag == "policy-pack"] == POLICY_PACKS


def test_pull_request_previews_each_stack_with_the_policy_packs() -> None:
    document = workflow("pull-request.yml")
    preview = document["jobs"]["preview"]
    assert preview["strategy"]["matrix"]["stack"] == STACKS
    assert "test" in preview["needs"]
    [(job_id, job, step)] = pulumi_command_steps(document)
    assert job_id == "preview"
    with_ = step["with"]
    assert with_["command"] == "preview" and with_["comment-on-pr"] is True
    assert with_["stack-name"] == "${{ vars.PULUMI_ORG || github.repository_owner }}/${{ matrix.stack }}"
    for stack in STACKS:
        resolved = {**step, "with": {k: _resolve(str(v), stack) for k, v in with_.items()}}
        assert pairing_problems(resolved, stack) == []
    assert installs_python_dependencies_before(job, step)
    uses_credentials(document, job)
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}


def test_pull_requests_from_forks_are_checked_offline() -> None:
    document = workflow("pull-request.yml")
    jobs = document["jobs"]
    probe = jobs["credentials"]["steps"][0]
    # the probe sees whether the secrets are set and whether the head repository is a fork, never the values
    assert probe["env"]["FROM_FORK"] == "${{ github.event.pull_request.head.repo.fork }}"
    assert probe["env"]["HAS_PULUMI_TOKEN"] == "${{ secrets.PULUMI_ACCESS_TOKEN != '' }}"
    assert probe["env"]["HAS_KUBECONFIG"] == "${{ secrets.KUBECONFIG != '' }}"
    assert "head.repo.fork == false" in jobs["preview"]["if"] and "available == 'true'" in jobs["preview"]["if"]
    offline = jobs["offline-check"]
    assert offline["if"] == "needs.credentials.outputs.available != 'true'"
    assert offline["strategy"]["matrix"]["stack"] == STACKS
    assert not any("secrets." in json.dumps(value) for value in (offline, jobs["test"]))
    runs = [str(s.get("run", "")) for s in offline["steps"]]
    check = next(run for run in runs if "hpcforge check" in run)
    arguments = re.findall(r"--(policy-pack(?:-config)?) (\S+)", check)
    assert arguments == [
        (flag, value)
        for pack in POLICY_PACKS
        for flag, value in (("policy-pack", pack), ("policy-pack-config", '"policies/config/$STACK.json"'))
    ]
    assert '--stack "$STACK"' in check and offline["env"]["STACK"] == "${{ matrix.stack }}"
    assert "--preview" in check  # as the preview job's `pulumi preview` sees the program
    render = next(run for run in runs if "hpcforge render" in run)
    assert '--out "out/$STACK"' in render
    upload = next(s for s in offline["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["path"] == "out/${{ matrix.stack }}" and upload["with"]["if-no-files-found"] == "error"
    assert runs.index(check) < runs.index(render)


def test_pull_request_permissions_are_least_privilege() -> None:
    document = workflow("pull-request.yml")
    assert document["permissions"] == {"contents": "read"}
    for job_id, job in document["jobs"].items():
        permissions = job.get("permissions", document["permissions"])
        writes = {scope for scope, level in permissions.items() if level == "write"}
        assert writes <= ({"pull-requests"} if job_id in ("preview", "impact") else set()), (job_id, permissions)


# --- deploy.yml --------------------------------------------------------------------------------------------------------


def test_deploy_runs_on_push_to_main() -> None:
    document = workflow("deploy.yml")
    assert document["on"]["push"]["branches"] == ["main"]
    assert document["permissions"] == {"contents": "read"}


def test_deploy_updates_dev_then_prod_behind_the_production_environment() -> None:
    document = workflow("deploy.yml")
    jobs = document["jobs"]
    dev, prod = jobs["dev"], jobs["prod"]
    assert prod["needs"] == "dev" or prod["needs"] == ["dev"]
    assert prod["environment"] == "production"
    assert "environment" not in dev or dev["environment"] != "production"
    groups = set()
    for stack, job in (("dev", dev), ("prod", prod)):
        assert job["concurrency"]["cancel-in-progress"] is False
        assert stack in job["concurrency"]["group"]
        groups.add(job["concurrency"]["group"])
        [step] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("pulumi/actions@") and s["with"].get("command")]
        assert step["with"]["command"] == "up"
        assert step["with"]["stack-name"] == f"${{{{ vars.PULUMI_ORG || github.repository_owner }}}}/{stack}"
        assert pairing_problems(step, stack) == []
        assert installs_python_dependencies_before(job, step)
        uses_credentials(document, job)
    assert len(groups) == 2, "each stack has its own concurrency group"
    header = (WORKFLOW_DIR / "deploy.yml").read_text().split("\nname:")[0]
    assert "Required reviewers" in header and "production" in header


# --- drift.yml ---------------------------------------------------------------------------------------------------------


def test_drift_runs_on_a_schedule_and_on_demand() -> None:
    document = workflow("drift.yml")
    assert "workflow_dispatch" in document["on"]
    [schedule] = document["on"]["schedule"]
    assert re.fullmatch(r"\d+ \*/6 \* \* \*", schedule["cron"])
    assert document["permissions"] == {"contents": "read", "issues": "write"}


def test_drift_previews_with_refresh_and_expects_no_changes() -> None:
    document = workflow("drift.yml")
    job = document["jobs"]["drift"]
    assert job["strategy"]["matrix"]["stack"] == STACKS
    assert job["env"]["STACK_NAME"] == "${{ vars.PULUMI_ORG || github.repository_owner }}/${{ matrix.stack }}"
    commands = [step for _, _, step in pulumi_steps(document) if "command" in step.get("with", {})]
    [step] = commands
    assert step["with"]["command"] == "preview"
    assert step["with"]["refresh"] is True and step["with"]["expect-no-changes"] is True
    assert step["with"]["stack-name"] == "${{ env.STACK_NAME }}"
    assert step.get("continue-on-error") in (None, False), "the job must fail when the stack drifted"
    assert installs_python_dependencies_before(job, step)
    uses_credentials(document, job)


def test_drift_opens_an_issue_naming_the_stack_on_failure() -> None:
    document = workflow("drift.yml")
    steps = document["jobs"]["drift"]["steps"]
    [report] = [s for s in steps if s.get("if") == "failure()"]
    assert report["uses"].startswith("actions/github-script@")
    assert report["env"]["STACK"] == "${{ matrix.stack }}"
    script = report["with"]["script"]
    assert "Drift detected in stack ${stack}" in script
    assert "issues.create" in script and "issues.createComment" in script
    [close] = [s for s in steps if s.get("if") == "success()"]
    assert "state: 'closed'" in close["with"]["script"]
    # the issue steps come after the preview, so a drifted preview reaches them
    preview = next(s for s in steps if s.get("id") == "drift")
    assert steps.index(preview) < steps.index(report)


# --- the change-impact gate (scripts/ci/impact_gate.py; tests/scripts/ci/test_impact_gate.py) ------------------------------------

RERUN_ONLY_THE_GATE = ["edited", "labeled", "unlabeled"]


def test_pull_request_gates_on_the_impact_and_reruns_it_when_the_acknowledgement_changes() -> None:
    document = workflow("pull-request.yml")
    assert set(RERUN_ONLY_THE_GATE) <= set(document["on"]["pull_request"]["types"])
    assert {"opened", "synchronize", "reopened"} <= set(document["on"]["pull_request"]["types"])
    jobs = document["jobs"]
    skip = '${{ !contains(fromJSON(\'["edited", "labeled", "unlabeled"]\'), github.event.action) }}'
    assert jobs["test"]["if"] == skip and jobs["credentials"]["if"] == skip  # the others need these two
    assert "'impact'" in document["concurrency"]["group"]  # a label never cancels the running suite
    impact = jobs["impact"]
    assert "if" not in impact and "needs" not in impact
    assert impact["env"]["BASE_SHA"] == "${{ github.event.pull_request.base.sha }}"
    assert (
        impact["env"]["ACKNOWLEDGED_BY_LABEL"]
        == "${{ contains(github.event.pull_request.labels.*.name, 'impact-acknowledged') }}"
    )
    assert impact["env"]["PR_BODY"] == "${{ github.event.pull_request.body }}"
    checkout = next(s for s in impact["steps"] if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    runs = [str(s.get("run", "")) for s in impact["steps"]]
    assert not any("github.event.pull_request.body" in run for run in runs), "untrusted text only through env"
    gate = next(run for run in runs if "scripts/ci/impact_gate.py" in run)
    for option in ('--against "$BASE_SHA"', "--stack dev --stack prod", '--label-acknowledged "$ACKNOWLEDGED_BY_LABEL"'):
        assert option in gate
    assert '--summary "$GITHUB_STEP_SUMMARY"' in gate and "--body-file" in gate and "--comment" in gate
    comment = next(run for run in runs if "gh api" in run)
    comment_step = next(s for s in impact["steps"] if "gh api" in str(s.get("run", "")))
    assert "github.event.pull_request.head.repo.fork == false" in comment_step["if"]  # forks: the job summary only
    assert "<!-- hpcforge-impact -->" in comment and "--method PATCH" in comment and "--method POST" in comment
    last = impact["steps"][-1]
    assert last["env"]["RC"] == "${{ steps.gate.outputs.rc }}" and 'exit "${RC:-2}"' in last["run"]


def test_the_gate_script_and_the_comment_step_agree_on_the_marker() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("impact_gate", REPO / "scripts" / "ci" / "impact_gate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    steps = workflow("pull-request.yml")["jobs"]["impact"]["steps"]
    assert module.MARKER in next(str(s["run"]) for s in steps if "gh api" in str(s.get("run", "")))
    assert module.LABEL == "impact-acknowledged"


def test_deploy_refuses_an_unacknowledged_impact_before_any_stack_is_updated() -> None:
    document = workflow("deploy.yml")
    jobs = document["jobs"]
    assert jobs["dev"]["needs"] in ("impact", ["impact"]) and jobs["prod"]["needs"] in ("dev", ["dev"])
    assert document["on"]["workflow_dispatch"]["inputs"]["acknowledge"]["default"] == ""
    impact = jobs["impact"]
    assert impact["permissions"] == {"contents": "read", "pull-requests": "read"}
    runs = [str(s.get("run", "")) for s in impact["steps"]]
    lookup = next(run for run in runs if "gh api" in run)
    assert "commits/$SHA/pulls" in lookup and "impact-acknowledged" in lookup
    gate = next(run for run in runs if "scripts/ci/impact_gate.py" in run)
    assert '--reason "$REASON"' in gate and '--against "$AGAINST"' in gate and "|| " not in gate
    step = next(s for s in impact["steps"] if "scripts/ci/impact_gate.py" in str(s.get("run", "")))
    assert step["env"]["REASON"] == "${{ inputs.acknowledge }}"
    assert "github.event.before" in step["env"]["AGAINST"]


def test_pull_request_impact_is_against_the_deployed_state_where_the_token_allows() -> None:
    """Issue 34: the base is what runs (`pulumi stack export`), where the pull request may read the stacks; else the
    base commit, and the comment says which (scripts/ci/impact_gate.py --state, --no-state-reason)."""
    impact = workflow("pull-request.yml")["jobs"]["impact"]
    steps = impact["steps"]
    probe = next(s for s in steps if s.get("id") == "probe")
    assert probe["env"] == {
        "FROM_FORK": "${{ github.event.pull_request.head.repo.fork }}",
        "HAS_PULUMI_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN != '' }}",
    }
    cli = next(s for s in steps if str(s.get("uses", "")).startswith("pulumi/actions@"))
    export = next(s for s in steps if "pulumi stack export" in str(s.get("run", "")))
    gate = next(s for s in steps if "scripts/ci/impact_gate.py" in str(s.get("run", "")))
    for step in (cli, export):
        assert step["if"] == "steps.probe.outputs.available == 'true'"
    assert "command" not in cli["with"]  # only installs the CLI
    assert '--stack "$ORG/$stack" --file "$RUNNER_TEMP/state/$stack.json"' in export["run"]
    assert "--show-secrets" not in export["run"] and 'rm -f "$HOME/.pulumi/credentials.json"' in export["run"]
    with_token = [s for s in steps if "secrets.PULUMI_ACCESS_TOKEN }}" in json.dumps(s.get("env") or {})]
    assert with_token == [export]  # the token in that step only, never where the pull request's program runs
    assert '--state "dev=$RUNNER_TEMP/state/dev.json" --state "prod=$RUNNER_TEMP/state/prod.json"' in gate["run"]
    assert '--no-state-reason "$NO_STATE_REASON"' in gate["run"] and '--reports "$RUNNER_TEMP/impact-report"' in gate["run"]
    assert steps.index(probe) < steps.index(cli) < steps.index(export) < steps.index(gate)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "impact-report" and upload["with"]["path"] == "${{ runner.temp }}/impact-report"
    assert steps.index(gate) < steps.index(upload)


def test_deploy_checks_each_stack_s_prediction_after_the_update_and_keeps_the_verdicts() -> None:
    """Issue 34: before `pulumi up`, the prediction against the deployed state (JSON) and the jobs; after it, what the
    cluster shows (scripts/ci/collect_cluster.sh) and `./hpcforge diff --verify`, kept as an artifact."""
    jobs = workflow("deploy.yml")["jobs"]
    for stack in STACKS:
        steps = jobs[stack]["steps"]
        runs = [str(s.get("run", "")) for s in steps]

        def at(text: str, runs: list[str] = runs) -> int:
            return next(i for i, run in enumerate(runs) if text in run)

        up = next(i for i, s in enumerate(steps) if (s.get("with") or {}).get("command") == "up")
        predict, before, after, verify = (
            at(f'pulumi stack export --stack "$ORG/{stack}"'),
            at("collect_cluster.sh before"),
            at("collect_cluster.sh after"),
            at("./hpcforge diff --verify"),
        )
        upload = next(i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
        assert predict < before < up < after < verify < upload
        assert f'./hpcforge diff --stack {stack} --against "$RUNNER_TEMP/impact/state.json"' in runs[predict]
        assert '--json "$RUNNER_TEMP/impact/prediction.json"' in runs[predict] and "::warning::" in runs[predict]
        assert '--observed "$RUNNER_TEMP/impact/observed"' in runs[verify] and "GITHUB_STEP_SUMMARY" in runs[verify]
        for index in (after, verify, upload):
            assert steps[index]["if"] == "${{ !cancelled() }}"
        assert steps[upload]["with"]["name"] == f"impact-verify-{stack}"
        assert steps[upload]["with"]["path"] == "${{ runner.temp }}/impact"

"""Every command of the operator docs (docs/operations.md, docs/layers/*.md) is run, or its names are checked.

Each shell block carries `<!-- runs: offline|real-daemon|cluster-only [ID] -->` (tests/docblocks.py); a block without
one fails here. Offline and real-daemon blocks are run by the test that EXECUTED names (the restore runbook's by
tests/components/layers/backups/test_runbook.py, its EXERCISED). The names in every block (namespaces, Deployments,
StatefulSets, pods, containers, Secrets, claims, partitions, node labels and taints, URNs, config keys, scripts)
are checked against what dev, prod and the docs' add-a-nodeset example render, what the operators make of those
objects (DERIVED: each rule cites the upstream code at the pinned tag), tests/urns/<stack>.txt and the repository;
a cluster-only block must name at least one such thing, or have its own check in CUSTOM.
"""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from docs.sources import Sources
from tests.docblocks import TIERS, Fenced, block, fences, fences_of, problems, shell_blocks
from tests.helpers import REPO

# Block id -> the test that runs it (module path::function); the module must read the block by its id.
EXECUTED: dict[str, str] = {
    "quick-check": "tests/test_docs_commands.py::test_the_quick_check_block_runs_offline",
    "diff-examples": "tests/test_docs_commands.py::test_the_review_a_change_block_runs_offline",
    "live-impact": "tests/offline/live/test_real_live_impact.py::test_the_drain_block_of_the_operations_guide_runs_against_this_cluster",
    "upgrade-dump": "tests/components/layers/backups/test_runbook.py::test_accounting_runbook_stops_slurmdbd_restores_the_newest_dump_and_restarts_it",
    "recover-prolog-node": "tests/components/layers/slurm/test_real_prolog_requeue.py::test_a_failing_prolog_holds_the_job_and_the_recovery_block_runs_it_again",
}


# --- the tags ---------------------------------------------------------------------------------------------------


def test_every_shell_block_of_the_operator_docs_carries_a_tag() -> None:
    found = fences()
    assert problems(found) == []
    shells = [f for f in found if f.shell]
    counts = {tier: sum(1 for f in shells if f.tier == tier) for tier in TIERS}
    executed = sum(1 for f in shells if f.tier != "cluster-only")
    print(f"shell blocks: {len(shells)}; per tier: {counts}; run by a test: {executed}")
    assert len(shells) >= 35 and counts["cluster-only"] and counts["offline"] and counts["real-daemon"]


def test_a_block_without_a_tag_or_a_fence_without_a_language_is_refused() -> None:
    page = Path("page.md")
    text = "Run:\n\n```sh\nkubectl get pods\n```\n\n<!-- runs: offline -->\n```sh\n./hpcforge preview\n```\n\n```\nout\n```\n"
    refused = problems(fences_of(text, page))
    assert refused == [
        "page.md:3: a shell block without `<!-- runs: offline|real-daemon|cluster-only ID -->`",
        "page.md:8: a offline block needs an id, for the test that runs it",
        "page.md:12: a fence without a language (```sh, ```text, ```yaml ...)",
    ]
    tagged = "<!-- runs: cluster-only -->\n```sh\nkubectl get pods\n```\n<!-- runs: somewhere x -->\n```sh\nls\n```\n"
    assert problems(fences_of(tagged, page)) == [
        "page.md:6: unknown tier 'somewhere' (one of offline, real-daemon, cluster-only)"
    ]


def test_every_offline_and_real_daemon_block_is_run_by_a_named_test() -> None:
    from tests.components.layers.backups.test_runbook import EXERCISED

    ran = {f.id: f for f in shell_blocks() if f.tier in ("offline", "real-daemon")}
    assert set(ran) == set(EXECUTED) | set(EXERCISED), "add the block's test to EXECUTED (or the runbook's EXERCISED)"
    for block_id, where in {
        **EXECUTED,
        **{k: f"tests/components/layers/backups/test_runbook.py::{v}" for k, v in EXERCISED.items()},
    }.items():
        path, function = where.split("::")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert callable(getattr(module, function, None)), f"{block_id}: {where} does not exist"
        source = (REPO / path).read_text()
        assert f'"{block_id}"' in source, f"{block_id}: {path} does not read the block by its id"


# --- running the offline blocks ----------------------------------------------------------------------------------


def _hpcforge_dir(folder: Path) -> Path:
    """A folder whose ./hpcforge is this checkout's, so that a block's own files land in it and not in the repository."""
    folder.mkdir(parents=True, exist_ok=True)
    wrapper = folder / "hpcforge"
    wrapper.write_text(f'#!/bin/sh\nexec "{REPO / "hpcforge"}" "$@"\n')
    wrapper.chmod(0o755)
    return folder


def _run_block(block_id: str, cwd: Path, substitutions: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """The block as written, with `substitutions` (each must be in it) applied: bash -euo pipefail."""
    text = block(block_id)
    for old, new in substitutions.items():
        assert old in text, f"{block_id}: {old!r} is no longer in the block"
        text = text.replace(old, new)
    env = {**os.environ, "HPCFORGE_DIFF_BASE_DIR": str(cwd / ".diff-base"), "HPCFORGE_RECORDING_CACHE": "off"}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", text], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.mark.timeout(1200)
def test_the_quick_check_block_runs_offline(tmp_path: Path) -> None:
    # `main` is the base the reader compares with; the test compares with this checkout's HEAD (a git ref all the same).
    done = _run_block("quick-check", _hpcforge_dir(tmp_path), {"--against main": "--against HEAD"})
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "Policy summary: 3 packs, " in done.stdout
    assert re.search(r"^prod: none; 0 resources change", done.stdout, re.M) or "gate: pass" in done.stdout


@pytest.mark.timeout(1200)
def test_the_review_a_change_block_runs_offline(prod_stack: Any, tmp_path: Path) -> None:
    import json

    from tests.offline.diff.stack_exports import export_of

    folder = _hpcforge_dir(tmp_path)
    (folder / "prod-state.json").write_text(json.dumps(export_of(prod_stack)))  # what `pulumi stack export` would write
    done = _run_block(
        "diff-examples",
        folder,
        {"--against origin/main": "--against HEAD", "--drift-against origin/main": "--drift-against HEAD"},
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.count("gate: pass") == 2, done.stdout[-3000:]


# --- the names in the blocks ---------------------------------------------------------------------------------------

PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9 _-]*>")
SEPARATORS = {"|", "||", "&&", ";", "(", ")", "<", ">", ">>", "&", "$"}
VALUE_FLAGS = {"-n", "--namespace", "-c", "--container", "-o", "-l", "--selector", "-f", "--timeout", "-p"}
KINDS = {
    "secret": "Secret",
    "pod": "Pod",
    "pods": "Pod",
    "statefulset": "StatefulSet",
    "sts": "StatefulSet",
    "deployment": "Deployment",
    "deploy": "Deployment",
    "nodesets": "NodeSet",
    "jobs": "Job",
    "job": "Job",
    "certificate": "Certificate",
}

# What the operators make of the objects hpcforge renders, at the pinned versions (components/versions.py).
DERIVED = {
    "Controller": "slurm-operator v1.2.1 api/v1beta1/controller_keys.go:25 (StatefulSet <name>-controller), "
    "internal/builder/labels/labels.go:71 and controllerbuilder/controller_app.go:263 (container slurmctld)",
    "Accounting": "slurm-operator v1.2.1 api/v1beta1/accounting_keys.go:18 (StatefulSet <name>-accounting)",
    "LoginSet": "slurm-operator v1.2.1 api/v1beta1/loginset_keys.go:17 (Deployment <name>)",
    "RestApi": "slurm-operator v1.2.1 api/v1beta1/restapi_keys.go:16 (Deployment <name>-restapi)",
    "MariaDB": "mariadb-operator v26.6.0 internal/controller/mariadb_controller.go:418 (the StatefulSet's key is the "
    "MariaDB's) and pkg/statefulset/statefulset.go:51 (pod <name>-<index>)",
    "StatefulSet": "Kubernetes: a StatefulSet's pods are <name>-<ordinal>",
    "Certificate": "cert-manager: the Certificate's spec.secretName",
    "sealed-secrets": "sealed-secrets chart helm-v2.18.5 templates/deployment.yaml:5 and _helpers.tpl:13-15 (Deployment "
    "fullnameOverride in the release's namespace)",
    "slurm-operator": "slurm-operator chart v1.2.1 templates/operator/deployment.yaml:10 and _helpers.tpl:9-10 (Deployment "
    "nameOverride or the chart's name, in namespaceOverride or the release's namespace)",
}


@dataclass
class Site:
    """What the docs' names may refer to: (kind, namespace, name) -> why it exists, and the containers of workloads."""

    objects: dict[tuple[str, str, str], str] = field(default_factory=dict)
    containers: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)
    namespaces: set[str] = field(default_factory=set)
    partitions: set[str] = field(default_factory=set)
    node_labels: set[str] = field(default_factory=set)
    taint_keys: set[str] = field(default_factory=set)
    env: dict[str, set[str]] = field(default_factory=dict)
    """Command resource name -> its environment's keys."""

    def add(self, kind: str, namespace: str, name: str, why: str, containers: set[str] | None = None) -> None:
        self.objects.setdefault((kind, namespace, name), why)
        self.namespaces.add(namespace)
        if containers:
            self.containers.setdefault((kind, namespace, name), set()).update(containers)

    def add_documents(self, documents: list[dict[str, Any]]) -> None:
        for doc in documents:
            kind, meta, spec = doc.get("kind", ""), doc.get("metadata") or {}, doc.get("spec") or {}
            ns, name = meta.get("namespace") or "", meta.get("name") or ""
            if kind == "Namespace":
                self.namespaces.add(name)
            self.add(kind, ns, name, "render", _containers(doc))
            if kind == "Controller":
                self.add("StatefulSet", ns, f"{name}-controller", DERIVED[kind], {"slurmctld"})
                self.add("Pod", ns, f"{name}-controller-0", DERIVED[kind], {"slurmctld"})
                text = spec.get("extraConf") or ""
                self.partitions |= set(re.findall(r"^PartitionName=(\S+)", text, re.M))
            elif kind == "Accounting":
                self.add("StatefulSet", ns, f"{name}-accounting", DERIVED[kind])
            elif kind == "LoginSet":
                self.add("Deployment", ns, name, DERIVED[kind])
            elif kind == "RestApi":
                self.add("Deployment", ns, f"{name}-restapi", DERIVED[kind])
            elif kind == "MariaDB":
                self.add("StatefulSet", ns, name, DERIVED[kind])
                self.add("Pod", ns, f"{name}-0", DERIVED[kind])
            elif kind == "StatefulSet":
                self.add("Pod", ns, f"{name}-0", DERIVED[kind], _containers(doc))
            elif kind == "Certificate" and spec.get("secretName"):
                self.add("Secret", ns, spec["secretName"], DERIVED[kind])
            template = ((spec.get("template") or {}).get("spec")) or {}
            self.node_labels |= {f"{k}={v}" for k, v in (template.get("nodeSelector") or {}).items()}
            self.taint_keys |= {t["key"] for t in template.get("tolerations") or [] if t.get("key")}

    def add_charts(self, releases: list[Any]) -> None:
        for release in releases:
            values = release.values or {}
            if release.release == "sealed-secrets":
                self.add("Deployment", release.namespace, values["fullnameOverride"], DERIVED["sealed-secrets"])
            elif release.release == "slurm-operator":
                namespace = values.get("namespaceOverride") or release.namespace
                self.add("Deployment", namespace, values.get("nameOverride") or release.pin.chart, DERIVED["slurm-operator"])


def _containers(doc: dict[str, Any]) -> set[str]:
    spec = doc.get("spec") or {}
    pod = ((spec.get("template") or {}).get("spec")) or spec
    return {
        c["name"]
        for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]
        if isinstance(c, dict) and "name" in c
    }


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    from offline.charts.render import chart_releases

    found = Site()
    with Sources() as sources:
        for name in ("dev", "prod", "prod+l40s"):  # the stacks, and the add-a-nodeset example the guide walks through
            found.add_documents(sources.documents(name))
            found.add_charts(chart_releases(sources.run(name)))
            for resource in sources.run(name).resources:
                if resource.type == "command:local:Command":
                    found.env[resource.name] = set((resource.inputs.get("environment") or {}).keys())
        yield found


@dataclass
class Checked:
    names: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def ok(self, what: str, good: bool, detail: str = "") -> None:
        (self.names if good else self.wrong).append(what + (f" ({detail})" if detail and not good else ""))


def _commands(text: str) -> Iterator[list[str]]:
    """The simple commands of a block (heredoc bodies left out, placeholders as PLACEHOLDER, `$(...)` split out)."""
    lines: list[str] = []
    heredoc = None
    for line in text.replace("\\\n", " ").splitlines():
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        match = re.search(r"<<-?'?(\w+)'?", line)
        if match:
            heredoc = match.group(1)
        lines.append(PLACEHOLDER.sub("PLACEHOLDER", line[: match.start()] if match else line))
    pending = ""
    for line in lines:
        pending = f"{pending}\n{line}" if pending else line
        lexer = shlex.shlex(pending, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:  # a quoted string that goes on on the next line
            continue
        pending = ""
        command: list[str] = []
        for raw in [*tokens, ";"]:
            token = raw.removesuffix("$") if raw.endswith("=$") else raw
            if token in SEPARATORS:
                while command and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", command[0]):
                    command.pop(0)
                if command:
                    yield command
                command = []
            else:
                command.append(token)


def _words(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    flags: dict[str, str] = {}
    words: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in VALUE_FLAGS and i + 1 < len(argv):
            flags[arg] = argv[i + 1]
            i += 2
            continue
        if arg.startswith("-"):
            key, _, value = arg.partition("=")
            flags[key] = value
        else:
            words.append(arg)
        i += 1
    return flags, words


def _ref(site: Site, checked: Checked, kind: str, namespace: str, name: str, container: str | None = None) -> None:
    if name == "PLACEHOLDER":
        checked.ok(f"namespace {namespace}", namespace in site.namespaces)
        return
    key = (kind, namespace, name)
    checked.ok(f"{kind} {namespace}/{name}", key in site.objects, "not rendered, nor made by an operator from what is")
    if container is not None and key in site.objects:
        checked.ok(f"container {container} of {kind} {namespace}/{name}", container in site.containers.get(key, set()))


def _target(words: list[str], at: int) -> tuple[str, str]:
    """(kind, name) of `KIND/NAME` or `KIND NAME` at words[at]."""
    if "/" in words[at]:
        kind, name = words[at].split("/", 1)
        return KINDS.get(kind, kind), name
    return KINDS.get(words[at], words[at]), words[at + 1] if at + 1 < len(words) else "PLACEHOLDER"


def _kubectl(site: Site, checked: Checked, argv: list[str], applied: set[tuple[str, str]]) -> None:  # noqa: PLR0912 (one branch per verb)
    remote = argv[argv.index("--") + 1 :] if "--" in argv else []
    flags, words = _words(argv[1 : argv.index("--")] if "--" in argv else argv[1:])
    namespace = flags.get("-n") or flags.get("--namespace") or "default"
    verb = words[0] if words else ""
    if verb == "exec":
        kind, name = _target(words, 1) if "/" in words[1] else ("Pod", words[1])
        if kind == "Pod" and (namespace, name) in applied:
            checked.ok(f"pod {namespace}/{name} (applied by the guide)", True)
        else:
            _ref(site, checked, kind, namespace, name, flags.get("-c"))
        if remote[:1] in (["sinfo"], ["squeue"]) and "-p" in remote:
            part = remote[remote.index("-p") + 1]
            checked.ok(f"partition {part}", part in site.partitions)
    elif verb in ("get", "describe", "logs") and len(words) > 1:
        kinds = words[1].split(",")
        if len(words) > 2 or "/" in words[1]:
            kind, name = _target(words, 1)
            _ref(site, checked, kind, namespace, name)
        else:
            checked.ok(f"namespace {namespace}", namespace in site.namespaces)
            for kind in kinds:
                if KINDS.get(kind) == "NodeSet":
                    checked.ok(
                        f"NodeSets in {namespace}", any(k == ("NodeSet", namespace) for k in ((o[0], o[1]) for o in site.objects))
                    )
    elif verb in ("scale", "rollout"):
        at = 2 if verb == "rollout" else 1
        kind, name = _target(words, at)
        _ref(site, checked, kind, namespace, name)
    elif verb in ("delete", "wait", "cp"):
        for word in words[1:]:
            if word.startswith(("pod/", "PLACEHOLDER")) or (verb == "delete" and words[1] == "pod" and word != "pod"):
                name = word.removeprefix("pod/")
                if (namespace, name) in applied:
                    checked.ok(f"pod {namespace}/{name} (applied by the guide)", True)
                else:
                    _ref(site, checked, "Pod", namespace, name)
            elif verb == "cp" and ":" in word:
                pod = word.split(":", 1)[0].rpartition("/")[2]
                checked.ok(f"pod {namespace}/{pod}", (namespace, pod) in applied or ("Pod", namespace, pod) in site.objects)
    elif verb == "label":
        for label in words[2:]:
            if "=" in label:
                checked.ok(f"node label {label}", label in site.node_labels, "no nodeSelector of the render selects it")
    elif verb == "taint":
        for taint in words[2:]:
            if "=" in taint or ":" in taint:
                key = re.split(r"[=:]", taint)[0]
                checked.ok(f"taint {key}", key in site.taint_keys, "no toleration of the render tolerates it")
    elif verb in ("apply", "cordon", "drain", "create"):
        pass  # applied manifests are checked below; cordon/drain name a Kubernetes node; create: CUSTOM
    else:
        checked.wrong.append(f"kubectl {verb}: not understood by this check (teach it, test_docs_commands.py)")


def _urns(stack: str) -> list[str]:
    return (REPO / "tests" / "urns" / f"{stack}.txt").read_text().split()


def _pulumi(checked: Checked, argv: list[str], following: list[str] | None) -> None:
    from docs.reference import build_sections

    if argv[1:3] == ["stack", "--show-urns"] and following and following[0] == "grep":
        pattern = following[-1]
        matches = [u for u in _urns("prod") if pattern in u]
        checked.ok(f"URN grep {pattern!r}", len(matches) == 1, f"{len(matches)} URNs of tests/urns/prod.txt match")
    for arg in argv:
        if arg.startswith("urn:pulumi:"):
            stack = arg.split("::")[0].removeprefix("urn:pulumi:")
            regex = re.compile(re.escape(arg).replace(re.escape("..."), ".*") + "$")
            matches = [u for u in _urns(stack) if regex.match(u)]
            checked.ok(f"URN {arg}", len(matches) == 1, f"{len(matches)} URNs of tests/urns/{stack}.txt match")
    if argv[1:3] == ["config", "set"]:
        key = next(a for a in argv[3:] if not a.startswith("-"))
        top = key.split(".")[0]
        checked.ok(f"config key {top}", top in {section.key for section in build_sections()})
    if "--stack" in argv:
        stack = argv[argv.index("--stack") + 1].rpartition("/")[2]
        checked.ok(f"stack {stack}", (REPO / f"Pulumi.{stack}.yaml").is_file())


def _applied(text: str) -> Iterator[dict[str, Any]]:
    for body in re.findall(r"<<'EOF'\n(.*?)\nEOF\n", text, re.S):
        yield from (doc for doc in yaml.safe_load_all(body) if doc)


def check_names(site: Site, fenced: Fenced, applied: set[tuple[str, str]]) -> Checked:
    checked = Checked()
    commands = list(_commands(fenced.text))
    for i, argv in enumerate(commands):
        tool = argv[0].rpartition("/")[2]
        if tool == "kubectl":
            _kubectl(site, checked, argv, applied)
        elif tool == "pulumi":
            _pulumi(checked, argv, commands[i + 1] if i + 1 < len(commands) else None)
        elif tool in ("bash", "python3", "sh") and len(argv) > 1 and argv[1].startswith("scripts/"):
            checked.ok(f"script {argv[1]}", (REPO / argv[1]).is_file())
    for pod in _applied(fenced.text):
        ns = pod["metadata"]["namespace"]
        for volume in pod["spec"].get("volumes", []):
            if "persistentVolumeClaim" in volume:
                _ref(site, checked, "PersistentVolumeClaim", ns, volume["persistentVolumeClaim"]["claimName"])
            elif "configMap" in volume:
                _ref(site, checked, "ConfigMap", ns, volume["configMap"]["name"])
            elif "secret" in volume:
                _ref(site, checked, "Secret", ns, volume["secret"]["secretName"])
        for container in pod["spec"]["containers"]:
            for item in container.get("env", []):
                ref = (item.get("valueFrom") or {}).get("secretKeyRef")
                if ref:
                    _ref(site, checked, "Secret", ns, ref["name"])
    return checked


def _custom_checks() -> dict[str, Callable[[Site, str], list[str]]]:
    from tests.docs_custom_checks import CUSTOM

    return CUSTOM


def test_the_names_in_the_operator_docs_blocks_are_the_render_s(site: Site) -> None:
    blocks = shell_blocks()
    applied = {(doc["metadata"]["namespace"], doc["metadata"]["name"]) for f in blocks for doc in _applied(f.text)}
    custom = _custom_checks()
    wrong: list[str] = []
    unchecked: list[str] = []
    total = 0
    for fenced in blocks:
        checked = check_names(site, fenced, applied)
        if fenced.id in custom:
            extra = custom[fenced.id](site, fenced.text)
            checked.names += [name for name in extra if not name.startswith("WRONG ")]
            checked.wrong += [name.removeprefix("WRONG ") for name in extra if name.startswith("WRONG ")]
        wrong += [f"{fenced.where}: {item}" for item in checked.wrong]
        total += len(checked.names)
        if fenced.tier == "cluster-only" and not checked.names:
            unchecked.append(fenced.where)
    assert wrong == []
    assert unchecked == [], "cluster-only blocks that name nothing this test checks: give them a CUSTOM check"
    assert set(custom) <= {f.id for f in blocks}
    print(f"{total} names checked in {len(blocks)} shell blocks")


def test_the_name_check_finds_a_wrong_name(site: Site) -> None:
    wrong = Fenced(Path("page.md"), 1, "sh", "", "<!-- runs: cluster-only -->")
    cases = {
        "kubectl -n slurm exec statefulset/slurmctld -c slurmctld -- sinfo -R\n": "StatefulSet slurm/slurmctld",
        "kubectl -n slurm exec statefulset/slurm-controller -c slurmd -- sinfo -R\n": "container slurmd",
        "kubectl -n slurm exec statefulset/slurm-controller -c slurmctld -- sinfo -p gpu-x -N\n": "partition gpu-x",
        "kubectl -n kube-system rollout restart deployment sealed-secrets\n": "Deployment kube-system/sealed-secrets",
        "kubectl -n database get secret mariadb-root-password -o yaml\n": "Secret database/mariadb-root-password",
        "kubectl label node n1 hpcforge.io/pool=gpu-x\n": "node label hpcforge.io/pool=gpu-x",
        "pulumi stack --show-urns | grep 'RandomBytes::slurm-keys'\n": "URN grep 'RandomBytes::slurm-keys'",
        "pulumi state unprotect 'urn:pulumi:prod::hpcforge::...::mariadb'\n": "URN urn:pulumi:prod::hpcforge::...::mariadb",
        "pulumi config set --secret hpcforge:sshKey < key\n": "config key hpcforge:sshKey",
    }
    for text, expected in cases.items():
        checked = check_names(site, Fenced(wrong.path, 1, "sh", text, wrong.tag_line), set())
        assert any(item.startswith(expected) for item in checked.wrong), (text, checked)
    right = "kubectl -n slurm exec statefulset/slurm-controller -c slurmctld -- sinfo -p gpu -N\n"
    assert check_names(site, Fenced(wrong.path, 1, "sh", right, wrong.tag_line), set()).wrong == []

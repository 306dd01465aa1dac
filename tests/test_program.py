"""Tier 2: the real __main__.py for every stack file under the mock engine; structural assertions."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline.preview.command import resource_tree
from offline.program.documents import render_documents, write_render
from offline.program.engine import RecordedStack
from tests.helpers import REPO, run_stack, write_variant

pytestmark = pytest.mark.program

TYPE_TOKEN = re.compile(r"^hpcforge:[a-z]+:[A-Z][A-Za-z]+$")


def _components(stack: RecordedStack) -> list[str]:
    return sorted({r.type for r in stack.resources if r.type.startswith("hpcforge:")})


def test_both_stacks_run_in_one_process(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    assert dev_stack.stack == "dev" and prod_stack.stack == "prod"
    assert len(dev_stack.resources) > 50 and len(prod_stack.resources) > 50
    # The second run must not see the first run's resources.
    assert not any(":prod::" in r.urn for r in dev_stack.resources)
    assert not any(":dev::" in r.urn for r in prod_stack.resources)


def test_runs_are_deterministic(dev_stack: RecordedStack) -> None:
    again = run_stack("dev")
    assert sorted(r.urn for r in again.resources) == sorted(r.urn for r in dev_stack.resources)
    first = {r.urn: r.raw_inputs for r in dev_stack.resources}
    assert all(first[r.urn] == r.raw_inputs for r in again.resources)


def test_component_type_tokens(any_stack: RecordedStack) -> None:
    tokens = _components(any_stack)
    assert "hpcforge:platform:Platform" in tokens
    assert all(TYPE_TOKEN.match(token) for token in tokens), tokens


def test_every_resource_hangs_under_the_platform(any_stack: RecordedStack) -> None:
    by_urn = {r.urn: r for r in any_stack.resources}
    platform = any_stack.find("hpcforge:platform:Platform", "hpcforge")
    for resource in any_stack.resources:
        node = resource
        while node.parent in by_urn and node is not platform:
            node = by_urn[node.parent]
        assert node is platform, f"{resource.type} {resource.name} is not under the Platform"


def test_kubernetes_objects_use_the_explicit_provider(any_stack: RecordedStack) -> None:
    for resource in any_stack.kubernetes_objects():
        assert "pulumi:providers:kubernetes::kubernetes" in resource.provider, resource.urn


def test_every_authored_object_is_labelled(any_stack: RecordedStack) -> None:
    for resource in any_stack.kubernetes_objects():
        labels = resource.inputs["metadata"].get("labels", {})
        for key in ("app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by"):
            assert key in labels, f"{resource.name} lacks {key}"
        assert labels["app.kubernetes.io/part-of"] == "hpcforge"


def test_delivery_modes(dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    dev_charts = {r.name for r in dev_stack.resources if r.is_chart}
    assert {"argocd", "metallb", "traefik", "cert-manager", "sealed-secrets"} <= dev_charts
    assert not dev_stack.by_type("kubernetes:argoproj.io/v1alpha1:AppProject") or all(
        r.name != "argocd/hpcforge-platform" for r in dev_stack.resources
    )
    # prod: only Argo CD itself is a Pulumi-rendered chart; every other chart is an Application.
    assert [r.name for r in prod_stack.resources if r.is_chart] == ["argocd"]
    apps = {
        r.inputs["metadata"]["name"]: r.inputs["spec"] for r in prod_stack.by_type("kubernetes:argoproj.io/v1alpha1:Application")
    }
    for chart in ("metallb", "traefik", "cert-manager", "sealed-secrets"):
        spec = apps[chart]
        assert spec["source"]["chart"] == chart and re.fullmatch(r"v?\d+\.\d+\.\d+", spec["source"]["targetRevision"])
        assert spec["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
        assert "CreateNamespace=true" in spec["syncPolicy"]["syncOptions"]
        assert spec["syncPolicy"]["retry"]["limit"] >= 1


def test_generated_secrets_are_pulumi_secrets(any_stack: RecordedStack) -> None:
    # Mock secrets are recognisable: none may appear outside a path the engine marks secret.
    for resource in any_stack.resources:
        text = json.dumps(resource.redacted_inputs())
        assert "MOCKSECRET" not in text, f"{resource.type} {resource.name} carries a generated secret in plain text"
    assert "argocdAdminPassword" in any_stack.secret_outputs


def test_secret_objects_hold_only_secret_values(any_stack: RecordedStack) -> None:
    for resource in any_stack.by_type("kubernetes:core/v1:Secret"):
        for field in ("stringData", "data"):
            if field in resource.inputs:
                assert any(path == field or path.startswith(f"{field}.") for path in resource.secret_paths), resource.name


def test_render_writes_parseable_objects(tmp_path: Path, any_stack: RecordedStack) -> None:
    paths = write_render(any_stack, tmp_path)
    assert len(paths) == len(render_documents(any_stack)) > 40
    for path in paths:
        document = yaml.safe_load(path.read_text())
        assert isinstance(document["apiVersion"], str) and isinstance(document["kind"], str)
        assert document["metadata"]["name"], path
        namespace = document["metadata"].get("namespace") or "_cluster"
        assert path.parent.name == namespace.replace("/", "_")
        assert path.name.startswith(f"{document['kind']}-")
        assert "MOCKSECRET" not in path.read_text()


def test_resource_tree_is_indented_by_parent(dev_stack: RecordedStack) -> None:
    tree = resource_tree(dev_stack)
    lines = tree.splitlines()
    assert "pulumi:pulumi:Stack" in lines[1] and "hpcforge-dev" in lines[1]
    assert any(re.search(r"└─ hpcforge:platform:Platform\s+hpcforge$", line) for line in lines)
    assert any(re.search(r"^ \+   (│  |   )[├└]─ hpcforge:network:Network\s+network$", line) for line in lines)
    assert len(lines) == len(dev_stack.resources) + 2


# --- the command line ------------------------------------------------------------------------------


def _offline(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offline", *args], check=False, cwd=REPO, capture_output=True, text=True, timeout=300
    )


def test_cli_preview_tree_prints_tree_and_count(tmp_path: Path) -> None:
    result = _offline("preview", "--stack", "dev", "--tree", "--json", str(tmp_path / "dev.json"))
    assert result.returncode == 0, result.stderr
    assert "hpcforge:platform:Platform" in result.stdout
    assert "wrote" not in result.stdout and f"resources to {tmp_path / 'dev.json'}" in result.stderr
    count = int(re.search(r"\+ (\d+) to create", result.stdout).group(1))  # type: ignore[union-attr]
    recorded: dict[str, Any] = json.loads((tmp_path / "dev.json").read_text())
    assert count == len(recorded["resources"]) + 1
    assert recorded["outputs"]["argocdAdminPassword"] == "[secret]"
    protects = {r["name"]: r["options"]["protect"] for r in recorded["resources"]}
    assert protects  # options are recorded for every resource


def test_cli_preview_prints_counts_per_layer_not_the_tree(dev_stack: RecordedStack) -> None:
    from offline.preview.summary import layer_counts

    result = _offline("preview", "--stack", "dev")
    assert result.returncode == 0, result.stderr
    assert "hpcforge:platform:Platform" not in result.stdout and " +   " not in result.stdout
    counts = {count.layer: count for count in layer_counts(dev_stack)}
    assert sum(count.total for count in counts.values()) == len(dev_stack.resources)
    slurm = next(line for line in result.stdout.splitlines() if line.strip().startswith("slurm "))
    nodesets = len([r for r in dev_stack.resources if r.type.endswith(":NodeSet")])
    assert f"{counts['slurm'].total} resources:" in slurm and f"{nodesets} NodeSets" in slurm
    assert "--tree" in result.stdout
    assert len(result.stdout.splitlines()) < 30


def test_cli_render_prod(tmp_path: Path) -> None:
    result = _offline("render", "--stack", "prod", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    written = int(re.search(r"wrote (\d+) files", result.stdout).group(1))  # type: ignore[union-attr]
    assert written == len(list((tmp_path / "out").rglob("*.yaml")))


def test_cli_unknown_key_exits_2(tmp_path: Path) -> None:
    path = write_variant(tmp_path, "dev", lambda v: v["hpcforge:slurm"].update(clustername="x"))
    result = _offline("preview", "--stack", "dev", "--config", str(path))
    assert result.returncode == 2
    assert "hpcforge:slurm.clustername: unknown key (did you mean 'clusterName'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_wrong_type_exits_2(tmp_path: Path) -> None:
    path = write_variant(tmp_path, "dev", lambda v: v["hpcforge:network"]["ingress"].update(replicas="many"))
    result = _offline("render", "--stack", "dev", "--config", str(path), "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "hpcforge:network.ingress.replicas: expected an integer (got 'many')" in result.stderr
    assert not (tmp_path / "o").exists()


def test_cli_missing_stack_file_exits_2() -> None:
    result = _offline("preview", "--stack", "nosuchstack")
    assert result.returncode == 2 and "no such stack file" in result.stderr

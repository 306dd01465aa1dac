"""Tier 5: the policy packs started as the Pulumi engine starts them and driven over the gRPC Analyzer
protocol (offline/policy/driver.py) against the dev and prod programs, and against prod variants that break
one rule of each family.

Every test runs twice: with the program recorded as `pulumi up` sees it (`up`: every output known)
and as `pulumi preview` of a new stack sees it (`preview`: generated secrets, command output,
object status and ids unknown; see offline/program/engine.py `preview_outputs`), as PR CI runs the packs."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from offline.policy.config import PolicyRunError
from offline.policy.packs import PackSpec
from offline.policy.report import CheckResult
from offline.policy.session import EXIT_ERROR, EXIT_OK, EXIT_POLICY, check_stack
from offline.program.engine import SECRET_SIG, SIG_KEY, UNKNOWN, RecordedResource, RecordedStack
from offline.program.stackfile import StackFile, read_stack_file
from tests.helpers import REPO, run_stack_file, write_variant

pytestmark = pytest.mark.policy_protocol


@pytest.fixture(scope="module", params=[False, True], ids=["up", "preview"])
def preview(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def dev_stack(preview: bool, dev_stack: RecordedStack, dev_preview_stack: RecordedStack) -> RecordedStack:
    """The session's dev recording in this test's mode (overrides conftest's `dev_stack` here)."""
    return dev_preview_stack if preview else dev_stack


@pytest.fixture
def prod_stack(preview: bool, prod_stack: RecordedStack, prod_preview_stack: RecordedStack) -> RecordedStack:
    """The session's prod recording in this test's mode (overrides conftest's `prod_stack` here)."""
    return prod_preview_stack if preview else prod_stack


PACKS = ("gitops-drift", "security", "slurm-contract")


def packs(stack: str, config: Path | None = None, names: tuple[str, ...] = PACKS) -> list[PackSpec]:
    path = config or REPO / "policies" / "config" / f"{stack}.json"
    return [PackSpec(REPO / "policies" / name, path) for name in names]


def stack_file(stack: str, path: Path | None = None) -> StackFile:
    return read_stack_file(path or REPO / f"Pulumi.{stack}.yaml", name=stack)


def run(recorded: RecordedStack, file: StackFile, specs: list[PackSpec]) -> tuple[CheckResult, str, str]:
    out, err = io.StringIO(), io.StringIO()
    result = check_stack(recorded, file, specs, out=out, err=err)
    return result, out.getvalue(), err.getvalue()


def edited(
    recorded: RecordedStack, match: Callable[[RecordedResource], bool], edit: Callable[[dict[str, Any]], None]
) -> RecordedStack:
    """A copy of the recorded stack with `edit` applied to the wire-form inputs of the matching resource."""
    copied = copy.deepcopy(recorded)
    targets = [r for r in copied.resources if match(r)]
    assert len(targets) == 1, f"expected one matching resource, found {[r.urn for r in targets]}"
    edit(targets[0].raw_inputs)
    return copied


def k8s_name(resource: RecordedResource) -> str:
    metadata = resource.inputs.get("metadata") or {}
    return str(metadata.get("name", ""))


def assert_names(result: CheckResult, output: str, policy: str, resource: RecordedResource) -> None:
    assert result.exit_code == EXIT_POLICY, output
    found = [d for d in result.select(policy, "mandatory") if d.urn == resource.urn]
    assert found, f"{policy} did not name {resource.urn}:\n{output}"
    assert f"[mandatory]  {policy}  ({resource.type}: {resource.name})" in output


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_packs_pass_on_the_program(stack: str, dev_stack: RecordedStack, prod_stack: RecordedStack) -> None:
    recorded = dev_stack if stack == "dev" else prod_stack
    result, output, _ = run(recorded, stack_file(stack), packs(stack))
    assert result.exit_code == EXIT_OK, output
    assert result.select(level="mandatory") == []
    assert {name for name, _, _ in result.packs} == {"hpcforge-gitops-drift", "hpcforge-security", "hpcforge-slurm-contract"}
    assert all(version == "0.1.0" for _, version, _ in result.packs)
    assert result.analyzed == len(recorded.resources) + 1


def root_app_on_a_branch(config: dict[str, Any]) -> None:
    """Turn on the app-of-apps root without `rootRevision`: it then follows the `main` branch.

    (Stack config validation refuses branches for `apps[]` in prod, but not for the root app.)"""
    config["hpcforge:gitops"]["rootRepoURL"] = "https://github.com/example-org/hpc-site-apps.git"
    config["hpcforge:gitops"].pop("rootRevision", None)


def test_gitops_variant_branch_revision_fails_prod(tmp_path: Path, preview: bool) -> None:
    path = write_variant(tmp_path, "prod", root_app_on_a_branch)
    recorded = run_stack_file(path, "prod", preview=preview)
    app = next(r for r in recorded.resources if r.type.endswith(":Application") and k8s_name(r) == "site-root")
    result, output, _ = run(recorded, stack_file("prod", path), packs("prod", names=("gitops-drift",)))
    assert_names(result, output, "git-revisions-pinned", app)
    assert "'main'" in output


def test_gitops_variant_is_only_advisory_with_the_dev_config(tmp_path: Path, preview: bool) -> None:
    path = write_variant(tmp_path, "prod", root_app_on_a_branch)
    result, output, _ = run(
        run_stack_file(path, "prod", preview=preview), stack_file("prod", path), packs("dev", names=("gitops-drift",))
    )
    assert result.exit_code == EXIT_OK, output
    assert result.select(level="mandatory") == [], output


def test_security_variant_plaintext_secret_fails_prod(prod_stack: RecordedStack) -> None:
    """The secret shim end to end: the same Secret passes with its secret markers and fails without."""

    def is_secret_object(r: RecordedResource) -> bool:
        return r.type == "kubernetes:core/v1:Secret" and any(p.startswith(("stringData", "data")) for p in r.secret_paths)

    target = next(r for r in prod_stack.resources if is_secret_object(r))
    field = "stringData" if "stringData" in target.raw_inputs else "data"

    def strip(inputs: dict[str, Any]) -> None:
        value = inputs[field]
        plain = value["value"] if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG else value
        if not isinstance(plain, dict):
            # In a preview the generated value is unknown, and so is the whole map (the SDK wraps
            # `stringData`/`data` in one secret Output): a literal written instead is known.
            assert plain == UNKNOWN, plain
            inputs[field] = {"password": "bG9vay1hLWxpdGVyYWw=" if field == "data" else "look-a-literal"}
            return
        inputs[field] = {k: (v["value"] if isinstance(v, dict) and v.get(SIG_KEY) == SECRET_SIG else v) for k, v in plain.items()}

    recorded = edited(prod_stack, lambda r: r.urn == target.urn, strip)
    result, output, _ = run(recorded, stack_file("prod"), packs("prod", names=("security",)))
    assert_names(result, output, "secrets-not-plaintext", target)
    assert all(d.policy == "secrets-not-plaintext" for d in result.select(level="mandatory")), output
    # The literal itself is never printed.
    for value in json.loads(json.dumps(recorded.find(target.type, target.name).raw_inputs[field])).values():
        assert str(value) not in output


def test_security_variant_allow_list_fails_prod(prod_stack: RecordedStack, tmp_path: Path) -> None:
    config = json.loads((REPO / "policies" / "config" / "prod.json").read_text())
    entries = config["privileged-allow-list"]["allowList"]
    config["privileged-allow-list"]["allowList"] = [e for e in entries if e["name"] != "kube-multus-ds"]
    path = tmp_path / "prod.json"
    path.write_text(json.dumps(config))
    multus = next(r for r in prod_stack.resources if r.type == "kubernetes:apps/v1:DaemonSet" and k8s_name(r) == "kube-multus-ds")
    result, output, _ = run(prod_stack, stack_file("prod"), packs("prod", path, names=("security",)))
    assert_names(result, output, "privileged-allow-list", multus)


def _first_nodeset(recorded: RecordedStack) -> RecordedResource:
    nodesets = [r for r in recorded.resources if r.type.endswith("slinky.slurm.net/v1beta1:NodeSet")]
    if not nodesets:
        pytest.skip("the program registers no Slinky NodeSet")
    return max(nodesets, key=lambda r: int((r.inputs.get("spec") or {}).get("replicas") or 0))


def test_slurm_variant_max_unavailable_fails_prod(prod_stack: RecordedStack, tmp_path: Path, preview: bool) -> None:
    target = _first_nodeset(prod_stack)
    replicas = int(target.inputs["spec"]["replicas"])

    def edit(config: dict[str, Any]) -> None:
        for nodeset in config["hpcforge:slurm"]["nodesets"]:
            if nodeset["name"] == k8s_name(target):
                nodeset["maxUnavailable"] = replicas

    path = write_variant(tmp_path, "prod", edit)
    recorded = run_stack_file(path, "prod", preview=preview)
    variant = recorded.find(target.type, target.name)
    result, output, _ = run(recorded, stack_file("prod", path), packs("prod", names=("slurm-contract",)))
    assert_names(result, output, "nodeset-rolling-update-bounded", variant)


def test_slurm_variant_gres_and_partitions_fail_prod(prod_stack: RecordedStack) -> None:
    """A stack policy too: a partition that names a NodeSet which does not exist (post-edited Controller)."""
    target = _first_nodeset(prod_stack)
    controllers = [r for r in prod_stack.resources if r.type.endswith("slinky.slurm.net/v1beta1:Controller")]
    assert controllers, "NodeSets without a Controller"

    def gres(inputs: dict[str, Any]) -> None:
        inputs["spec"]["extraConf"] = "Gres=gpu:a100:3"

    def partition(inputs: dict[str, Any]) -> None:
        inputs["spec"]["extraConf"] = inputs["spec"].get("extraConf", "") + "\nPartitionName=ghost Nodes=no-such-nodeset\n"

    recorded = edited(prod_stack, lambda r: r.urn == target.urn, gres)
    recorded = edited(recorded, lambda r: r.urn == controllers[0].urn, partition)
    result, output, _ = run(recorded, stack_file("prod"), packs("prod", names=("slurm-contract",)))
    assert_names(result, output, "nodeset-gres-matches-gpus", target)
    assert_names(result, output, "slurm-partitions-reference-nodesets", controllers[0])


def test_config_entry_without_level_is_refused_like_the_engine(prod_stack: RecordedStack, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"all": "mandatory", "some-other-pack-policy": {"threshold": 3}}))
    with pytest.raises(PolicyRunError, match='invalid enforcement level ""'):
        run(prod_stack, stack_file("prod"), packs("prod", path, names=("slurm-contract",)))


def test_invalid_knob_is_a_validation_error(prod_stack: RecordedStack, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"nodeset-rolling-update-bounded": {"enforcementLevel": "mandatory", "maxUnavailable": 3}}))
    result, _, err = run(prod_stack, stack_file("prod"), packs("prod", path, names=("slurm-contract",)))
    assert result.exit_code == EXIT_ERROR
    assert "validating policy config: hpcforge-slurm-contract 0.1.0  nodeset-rolling-update-bounded: maxUnavailable:" in err


def _cli(*args: str, preview: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offline", "check", *(["--preview"] if preview else []), *args],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_cli_prod_exits_0_and_a_variant_exits_1(tmp_path: Path, preview: bool) -> None:
    arguments: list[str] = []
    for name in PACKS:
        arguments += ["--policy-pack", f"policies/{name}", "--policy-pack-config", "policies/config/prod.json"]
    ok = _cli("--stack", "prod", *arguments, preview=preview)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "hpcforge-security@v0.1.0" in ok.stdout and "0 mandatory" in ok.stdout

    variant = write_variant(tmp_path, "prod", root_app_on_a_branch)
    bad = _cli("--stack", "prod", "--config", str(variant), *arguments, preview=preview)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "[mandatory]  git-revisions-pinned  (kubernetes:argoproj.io/v1alpha1:Application: argocd/site-root)" in bad.stdout


def test_cli_pairs_configs_by_position() -> None:
    mismatch = _cli(
        "--stack",
        "prod",
        "--policy-pack",
        "policies/security",
        "--policy-pack",
        "policies/slurm-contract",
        "--policy-pack-config",
        "policies/config/prod.json",
    )
    assert mismatch.returncode == 2
    assert "the number of --policy-pack-config paths must match the number of --policy-pack paths" in mismatch.stderr


def test_a_pack_that_cannot_start_is_an_error(prod_stack: RecordedStack, tmp_path: Path) -> None:
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (broken / "__main__.py").write_text("raise SystemExit('no policies here')\n")
    with pytest.raises(PolicyRunError, match="failed to start"):
        run(prod_stack, stack_file("prod"), [PackSpec(broken), *packs("prod", names=("security",))])


def test_a_rule_that_reads_an_unknown_cannot_run_during_preview(prod_preview_stack: RecordedStack) -> None:
    """A Namespace whose labels are unknown (built from another resource's output): the label rules
    cannot decide. As under the engine, where reading an unknown raises UnknownValueError, the policy
    is reported as "can't run ... during preview" (advisory), not as a violation and not as a pass."""
    target = next(r for r in prod_preview_stack.resources if r.type == "kubernetes:core/v1:Namespace" and k8s_name(r) == "slurm")

    def unknown_labels(inputs: dict[str, Any]) -> None:
        inputs["metadata"]["labels"] = UNKNOWN

    recorded = edited(prod_preview_stack, lambda r: r.urn == target.urn, unknown_labels)
    result, output, _ = run(recorded, stack_file("prod"), packs("prod", names=("security",)))
    assert result.exit_code == EXIT_OK, output
    assert result.select(level="mandatory") == [], output
    cant = [d for d in result.diagnostics if "during preview" in d.message]
    assert cant and all(d.level == "advisory" for d in cant), output
    assert "[advisory]  namespace-pod-security  (kubernetes:core/v1:Namespace: slurm)" in output
    assert "can't run policy 'namespace-pod-security' from policy pack 'hpcforge-security@" in output

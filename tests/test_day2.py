"""Day 2 as an operator lives it (issue 27, items 5 to 14): what the docs tell an operator to do holds.

Each test fails on the code before the fix it names; the items' numbers are the issue's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.layers.slurm.controller import TYPED_CONTROLLER_PARAMETERS
from components.layers.slurm.slurm_conf import controller_extra_conf, controller_parameters
from components.site.loader import ConfigError, load_config
from offline.policy.check import check_recorded_stack
from offline.policy.command import policy_config_for
from offline.policy.packs import PackSpec
from offline.program.engine import RecordedStack
from offline.program.stackfile import read_stack_file
from tests.helpers import REPO, config_values, inline_inventories, outline_inventories, raw_config, run_stack_file, write_variant

Edit = Callable[[dict[str, Any]], None]
PACKS = ("gitops-drift", "security", "slurm-contract")


def _messages(stack: str, edit: Edit, tmp_path: Path) -> list[str]:
    values = inline_inventories(config_values(stack))
    edit(values)
    outline_inventories(values, tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_config(raw_config(values))
    return caught.value.messages


def _load(stack: str, edit: Edit, tmp_path: Path) -> Any:
    values = inline_inventories(config_values(stack))
    edit(values)
    outline_inventories(values, tmp_path)
    return load_config(raw_config(values))


def _check(path: Path, stack: RecordedStack, config: Path | None = None) -> list[Any]:
    """The three packs over the Analyzer protocol with `config`, by default the policy config the stack file's
    environmentKind picks (`offline policy-config`, what `make check STACK_FILE=path` passes): the diagnostics."""
    config = config or REPO / policy_config_for(path)
    specs = [PackSpec(REPO / "policies" / pack, config) for pack in PACKS]
    result = check_recorded_stack(stack, specs, read_stack_file(path, name=stack.stack))
    assert not result.errors, result.errors
    return list(result.diagnostics)


def _is(obj: dict[str, Any], kind: str, name: str) -> bool:
    return obj.get("kind") == kind and obj.get("metadata", {}).get("name") == name


# --- item 7: partitions' AllowAccounts against the declared accounts; EnforcePartLimits -------------------------


def test_allow_accounts_must_name_declared_accounts(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        partition = next(p for p in values["hpcforge:slurm"]["partitions"] if p["name"] == "h100")
        partition["allowAccounts"] = ["llm", "admin"]  # prod's h100 partition before the fix

    [message] = [m for m in _messages("prod", edit, tmp_path) if "allowAccounts" in m]
    assert message.startswith("hpcforge:slurm.partitions[2].allowAccounts[1]: partition 'h100': account 'admin' is not")
    assert "(declared: climate, genomics, llm, ops, root, science)" in message


def test_prod_h100_partition_allows_the_accounts_of_its_groups() -> None:
    config = load_config(raw_config(config_values("prod")))
    h100 = next(p for p in config.slurm.partitions if p.name == "h100")
    assert h100.allow_accounts == ("llm", "ops")
    # every group allowed in the partition has an account allowed there (hpc-admins' account is ops)
    accounts = config.slurm.accounts
    assert accounts is not None
    for group in h100.allow_groups:
        assert any(group in a.groups and a.name in h100.allow_accounts for a in accounts.accounts), group


def test_enforce_part_limits_all_is_rendered_so_a_job_of_an_account_not_allowed_is_refused_at_submit() -> None:
    # slurm.conf(5) of 26.05, EnforcePartLimits: "ALL: Jobs which exceed ... any of its configured limits will be
    # rejected at submission time"; the limits considered include AllowAccounts and AllowGroups; NO is the default
    # ("A job that exceeds the limits on all requested partitions will remain queued").
    for stack in ("dev", "prod"):
        config = load_config(raw_config(config_values(stack)))
        text = controller_extra_conf(config.slurm, accounting=config.slurm.accounting.enabled)
        assert "\nEnforcePartLimits=ALL\n" in text, stack


# --- item 11: extraParameters may not repeat a typed setting -------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "setting"),
    [
        ("PreemptType", "slurm.controller.preemption.type"),
        ("preemptmode", "slurm.controller.preemption.mode"),  # slurm.conf names are case-insensitive
        ("EnforcePartLimits", "slurm.controller.enforcePartLimits"),
        ("ProctrackType", "hpcforge always writes proctrack/cgroup"),
    ],
)
def test_extra_parameters_refuse_a_typed_setting(key: str, setting: str, tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["controller"]["extraParameters"] = {key: "x", "MaxJobCount": "20000"}

    [message] = _messages("prod", edit, tmp_path)
    assert message.startswith(f"hpcforge:slurm.controller.extraParameters.{key}: ")
    assert "typed setting" in message and setting in message


def test_every_parameter_hpcforge_writes_is_known_as_typed() -> None:
    # The list the check uses covers every name controller_parameters() can write (RDMA and GPUs included: prod).
    config = load_config(raw_config(config_values("prod")))
    names = [name for name, _ in controller_parameters(config.slurm, accounting=True, rdma=True)]
    assert names and set(names) <= set(TYPED_CONTROLLER_PARAMETERS)
    assert len(names) == len(set(names))  # nothing written twice


# --- item 10: the GPU Operator may be off when only bare-metal hosts have GPUs --------------------------------------


def _services_only(values: dict[str, Any]) -> None:
    """Every GPU nodeset joined by bare-metal hosts only (replicas 0, GPUs autodetected), no GPU login pods."""
    slurm = values["hpcforge:slurm"]
    for nodeset in slurm["nodesets"]:
        if nodeset.get("gpus"):
            nodeset.update(replicas=0)
            nodeset.pop("pool", None)
            nodeset["gpus"] = {"type": nodeset["gpus"]["type"], "count": nodeset["gpus"]["count"], "autodetect": "nvidia"}
    for login in slurm.get("extraLogins", []):
        login.pop("gpus", None)
        login.pop("nodePool", None)
    gpu = values.setdefault("hpcforge:gpu", {})
    gpu.setdefault("operator", {})["enabled"] = False
    # A scheduled all-reduce needs the nodeset's node count (its replicas), dcgm-diag the GPU Operator's host engine,
    # and ib-link the RDMA devices of a pool, none of which bare-metal-only nodesets without the operator have
    # (site/checks/active_checks.py): such a site runs no scheduled check.
    gpu["activeChecks"] = []


def test_gpu_operator_can_be_off_when_every_gpu_nodeset_is_bare_metal(tmp_path: Path) -> None:
    config = _load("prod", _services_only, tmp_path)
    assert config.slurm.has_gpus and config.gpu.operator.enabled is False
    path = write_variant(tmp_path, "prod", _services_only, name="services")
    stack = run_stack_file(path, "services")
    assert not [r for r in stack.resources if "gpu-operator" in r.name], "the GPU Operator is deployed anyway"
    assert any(_is(o.inputs, "NodeSet", "gpu-h100") for o in stack.kubernetes_objects())


def test_gpu_operator_off_is_still_refused_for_gpu_pods(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        _services_only(values)
        next(n for n in values["hpcforge:slurm"]["nodesets"] if n["name"] == "gpu-a100")["replicas"] = 2

    [message] = [m for m in _messages("prod", edit, tmp_path) if "gpu.operator.enabled" in m]
    assert message.startswith("hpcforge:gpu.operator.enabled: nodesets request GPUs in pods (nodeset 'gpu-a100')")


# --- items 8 and 9: the policy config follows what hpcforge generates and the environment's kind --------------------


def _rename_gpu_nodeset(old: str, new: str) -> Edit:
    def edit(values: dict[str, Any]) -> None:
        slurm = values["hpcforge:slurm"]
        for nodeset in slurm["nodesets"]:
            if nodeset["name"] == old:
                nodeset["name"] = new
        for partition in slurm["partitions"]:
            partition["nodesets"] = [new if n == old else n for n in partition.get("nodesets", [])]
        for check in values.get("hpcforge:gpu", {}).get("activeChecks", []):
            check["nodesets"] = [new if n == old else n for n in check["nodesets"]]

    return edit


@pytest.mark.parametrize("policy_config", ["prod.json", "dev.json"])
def test_a_gpu_nodeset_named_dgx_passes_the_privilege_allow_list(policy_config: str, tmp_path: Path) -> None:
    # prod's GPU nodeset gpu-h100 (RDMA fabrics: IPC_LOCK; the GPU job mapping: hostPath) renamed; dev declares no GPU
    # nodeset, so dev's policy config is checked on the same stack.
    path = write_variant(tmp_path, "prod", _rename_gpu_nodeset("gpu-h100", "dgx"), name="prod")
    stack = run_stack_file(path, "prod")
    dgx = next(o.inputs for o in stack.kubernetes_objects() if _is(o.inputs, "NodeSet", "dgx"))
    template = dgx["spec"]["template"]["spec"]
    assert any("hostPath" in v for v in template.get("volumes", []))  # what the allowance is for is there
    assert dgx["spec"]["slurmd"]["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    found = [d for d in _check(path, stack, REPO / "policies/config" / policy_config) if d.policy == "privileged-allow-list"]
    assert found == [], [d.message for d in found]


def test_dev_and_prod_allow_the_same_privileges() -> None:
    import json

    dev = json.loads((REPO / "policies/config/dev.json").read_text())["privileged-allow-list"]["allowList"]
    prod = json.loads((REPO / "policies/config/prod.json").read_text())["privileged-allow-list"]["allowList"]
    assert dev == prod
    assert not [e for e in prod if e["kind"] == "NodeSet" and e["name"] != "*"], "NodeSets allowed by name"


def test_a_production_environment_not_named_prod_passes_the_prod_policies(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:environment"] = "pod1"

    path = write_variant(tmp_path, "prod", edit, name="pod1")
    assert policy_config_for(path) == "policies/config/prod.json"  # the kind picks it
    stack = run_stack_file(path, "pod1")
    mandatory = [d for d in _check(path, stack) if d.level == "mandatory"]
    assert mandatory == [], [f"{d.policy}: {d.message}" for d in mandatory[:5]]


# --- item 12: the migration hint for a stack file given with --config ------------------------------------------------


def test_migration_hint_with_config_names_the_file_and_migrates_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re
    import shlex

    import yaml

    from offline.cli import main

    directory = tmp_path / "site"
    directory.mkdir()
    stack_file = directory / "Pulumi.lab.yaml"
    stack_file.write_text(yaml.safe_dump({"config": inline_inventories(config_values("dev"))}, sort_keys=False))
    assert main(["preview", "--stack", "lab", "--config", str(stack_file)]) == 2
    errors = capsys.readouterr().err
    commands = set(re.findall(r"`(./hpcforge migrate-inventory [^`]*)`", errors))
    assert commands == {f"./hpcforge migrate-inventory --stack lab --config {stack_file}"}, errors
    assert f"it writes {directory}/inventory/lab/hosts.yaml" in errors
    # The command the hint names, run as written: it writes beside the stack file, and the stack then loads.
    argv = shlex.split(commands.pop())[1:]  # after ./hpcforge
    assert main(argv) == 0
    assert (directory / "inventory/lab/hosts.yaml").is_file() and (directory / "inventory/lab/users.yaml").is_file()
    assert not (REPO / "inventory" / "lab").exists()
    assert f"file: {directory}/inventory/lab/hosts.yaml" in stack_file.read_text()
    capsys.readouterr()
    assert main(["preview", "--stack", "lab", "--config", str(stack_file)]) == 0


def test_migration_hint_without_config_is_unchanged() -> None:
    from offline.inventory.command import stack_file_hints

    messages = ["x: move provisioning.hosts with `./hpcforge migrate-inventory --stack prod` (it writes ...)"]
    assert stack_file_hints(messages, "prod", None) == messages
    assert stack_file_hints(messages, "prod", REPO / "Pulumi.prod.yaml") == messages


# --- item 13: one owner per object ---------------------------------------------------------------------------------

NAD_CRD = "network-attachment-definitions.k8s.cni.cncf.io"


def _crd(name: str, version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"apiextensions.k8s.io/{version}", "kind": "CustomResourceDefinition", "metadata": {"name": name}}


def test_duplicate_owners_finds_an_object_applied_twice() -> None:
    from offline.policy.owners import duplicate_owners

    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "a"}}
    owned = [
        ("pulumi (CustomResourceDefinition x)", _crd(NAD_CRD)),
        ("Argo CD Application argocd/network-operator", _crd(NAD_CRD, "v1beta1")),  # same object at another version
        ("helm.v4.Chart a", service),
        ("helm.v4.Chart b", service),
        ("helm.v4.Chart c", {**service, "metadata": {"name": "web", "namespace": "b"}}),  # another namespace
        ("pulumi (ConfigMap y)", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "a"}}),
    ]
    assert duplicate_owners(owned) == [  # sorted by API group, kind, namespace, name
        "Service a/web is applied by 2 owners: helm.v4.Chart a; helm.v4.Chart b",
        f"CustomResourceDefinition.apiextensions.k8s.io {NAD_CRD} is applied by 2 owners: pulumi (CustomResourceDefinition"
        " x); Argo CD Application argocd/network-operator",
    ]
    assert duplicate_owners(owned[2:3] + owned[4:]) == []


def _prod(delivery: str, tmp_path: Path) -> RecordedStack:
    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:delivery"] = delivery

    return run_stack_file(write_variant(tmp_path, "prod", edit, name="prod"), "prod")


def _by_name(stack: RecordedStack, type_suffix: str, name: str) -> Any:
    return next(r for r in stack.resources if r.type.endswith(type_suffix) and r.name == name)


@pytest.mark.parametrize("delivery", ["argocd", "pulumi"])
def test_the_network_operator_chart_alone_owns_the_attachment_crd(delivery: str, tmp_path: Path) -> None:
    # network-operator 26.4.1 ships deployment/network-operator/crds/k8s.cni.cncf.io_networkattachmentdefinitions_crd.yaml:
    # with hpcforge:rdma (prod) the chart applies it, so hpcforge does not declare it too.
    stack = _prod(delivery, tmp_path)
    crds = [r for r in stack.kubernetes_objects() if _is(r.inputs, "CustomResourceDefinition", NAD_CRD)]
    assert crds == []
    chart = next(
        r
        for r in stack.resources
        if (r.is_chart and r.name == "network-operator")
        or (r.name == "argocd/network-operator" and r.inputs.get("kind") == "Application")
    )
    attachments = [r for r in stack.kubernetes_objects() if r.inputs.get("kind") == "NetworkAttachmentDefinition"]
    provisioning = [r for r in attachments if r.inputs["metadata"]["namespace"] == "provisioning"]
    assert provisioning, "prod has an IPVLAN attachment for Grendel"
    for attachment in provisioning:
        assert chart.urn in attachment.depends_on, attachment.name


def test_without_rdma_hpcforge_declares_the_attachment_crd(dev_stack: RecordedStack) -> None:
    assert [r for r in dev_stack.kubernetes_objects() if _is(r.inputs, "CustomResourceDefinition", NAD_CRD)]
    assert not [r for r in dev_stack.resources if "network-operator" in r.name]


# --- item 14: the Network Operator's NodeFeatureRule waits for NFD's CRD from the GPU Operator's chart ---------------


@pytest.mark.parametrize("delivery", ["argocd", "pulumi"])
def test_the_network_operator_chart_waits_for_the_gpu_operator_chart(delivery: str, tmp_path: Path) -> None:
    # network-operator 26.4.1 templates/nodefeaturerules.yaml renders a nfd.k8s-sigs.io NodeFeatureRule; with the GPU
    # Operator on, hpcforge switches the network operator's own NFD off and the gpu-operator chart's NFD subchart
    # installs the CRD (tests/offline/charts/test_day2_charts.py renders both). In argocd delivery each Application waits until Argo CD
    # has synced it and it is Healthy (pulumi.com/waitFor), so depending on it orders the syncs.
    stack = _prod(delivery, tmp_path)
    names = ("network-operator", "gpu-operator") if delivery == "pulumi" else ("argocd/network-operator", "argocd/gpu-operator")
    network, gpu = (
        next(r for r in stack.resources if r.name == n and (r.is_chart or r.inputs.get("kind") == "Application")) for n in names
    )
    assert gpu.urn in network.depends_on


# --- items 5 and 6: what an operator does by hand holds (docs/operations.md) ---------------------------------------

OPERATIONS = REPO / "docs" / "operations.md"
MUTATING = r"\b(scale|apply|delete|patch|edit|label|taint|annotate|cordon|drain|rollout restart)\b"
# What slurm-operator makes of the Controller, Accounting, LoginSet and RestApi: it copies their pod template and
# replicas back over the live object (internal/utils/objectutils/patch.go SyncObject at v1.2.1).
OPERATOR_MADE = ("deployment/login", "statefulset/slurm-controller", "slurm-accounting", "slurm-restapi")


def _doc_commands() -> list[tuple[int, str, bool]]:
    """(line, command, in a fenced block) of every `kubectl` command of docs/operations.md that changes an object."""
    import re

    found: list[tuple[int, str, bool]] = []
    fenced = listing = False
    for number, line in enumerate(OPERATIONS.read_text().splitlines(), 1):
        if line.startswith("## "):
            listing = line == "## What undoes a hand action"  # the list of them, not an action
        if listing:
            continue
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        candidates = [line] if fenced else re.findall(r"`([^`]*)`", line)
        for text in candidates:
            for command in re.findall(r"kubectl\b[^`|;&]*", text):
                if re.search(MUTATING, command) and " exec " not in command and " logs " not in command:
                    found.append((number, command.strip(), fenced))
    return found


def _objects(stack: RecordedStack, kind: str) -> list[dict[str, Any]]:
    return [r.inputs for r in stack.kubernetes_objects() if r.inputs.get("kind") == kind]


def _check_nodes(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    # hpcforge only patches Nodes (the topology annotation, server-side apply of its own fields): never the pool
    # labels or taints that the guide sets by hand, nor spec (cordon).
    for stack in stacks:
        for resource in stack.kubernetes_objects():
            if resource.inputs.get("kind") == "Node":
                assert resource.type == "kubernetes:core/v1:NodePatch"
                assert "spec" not in resource.inputs
                assert "hpcforge.io/pool" not in (resource.inputs["metadata"].get("labels") or {})


def _check_operator_scale(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    from components.layers.slurm.objects import OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE

    prod = next(s for s in stacks if s.stack == "prod")
    [app] = [a for a in _objects(prod, "Application") if a["metadata"]["name"] == "slurm-operator"]
    assert {
        "group": "apps",
        "kind": "Deployment",
        "name": OPERATOR_DEPLOYMENT,
        "namespace": OPERATOR_NAMESPACE,
        "jsonPointers": ["/spec/replicas"],
    } in app["spec"]["ignoreDifferences"]
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]
    assert app["spec"]["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    for _, command, _ in commands:
        assert f"-n {OPERATOR_NAMESPACE} scale deployment {OPERATOR_DEPLOYMENT} " in f"{command} "


def _check_accounting_scale(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    for stack in stacks:
        assert not [o for o in _objects(stack, "StatefulSet") if o["metadata"]["name"] == "slurm-accounting"]
    # the runbook stops the operator before it scales the StatefulSet down, and starts it after scaling it up
    operator = [n for n, command, fenced in _doc_commands() if fenced and "scale deployment slurm-operator" in command]
    accounting = [n for n, _, _ in commands]
    assert operator and min(operator) < min(accounting) and max(accounting) < max(operator)


def _check_restore_pod(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    import re

    for stack in stacks:
        assert not [r for r in stack.kubernetes_objects() if r.inputs.get("metadata", {}).get("name") == "hpcforge-restore"]
    manifests = re.findall(r"kind: Pod\n\s*metadata: (\{[^\n]*\})", OPERATIONS.read_text())
    assert len(manifests) == 3  # the three restores' pods
    assert manifests and all("hpcforge-restore" in m and "app.kubernetes.io/instance" not in m for m in manifests)


def _check_restored_secrets(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    for stack in stacks:
        for secret in _objects(stack, "Secret"):
            meta = secret["metadata"]
            assert (meta.get("namespace"), meta["name"]) != ("cert-manager", "hpcforge-ca")
            assert "sealedsecrets.bitnami.com/sealed-secrets-key" not in (meta.get("labels") or {})
        certificates = [c for c in _objects(stack, "Certificate") if c["spec"].get("secretName") == "hpcforge-ca"]
        assert certificates, "cert-manager makes the CA Secret from a Certificate"


def _check_restart(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    for _, command, _ in commands:
        assert not any(made in command for made in OPERATOR_MADE), command


def _check_operator_restart(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    lines = OPERATIONS.read_text().splitlines()
    for number, command, fenced in commands:
        assert not fenced, f"line {number}: {command}: the operator undoes it"
        assert "does not work" in lines[number - 1] or "do not" in lines[number - 1], f"line {number}: {command}"


def _check_pod_delete(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    for _, command, _ in commands:
        assert "hpcforge-restore" not in command


def _check_refresh(stacks: list[RecordedStack], commands: list[tuple[int, str, bool]]) -> None:
    import yaml

    assert yaml.safe_load((REPO / "Pulumi.yaml").read_text())["options"]["refresh"] == "always"
    workflow = yaml.safe_load((REPO / ".github/workflows/deploy.yml").read_text())
    ups = [
        step
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if str(step.get("uses", "")).startswith("pulumi/actions") and step.get("with", {}).get("command") == "up"
    ]
    assert ups and all(step["with"].get("refresh") is True for step in ups)


# (pattern of the command, check): every changing kubectl command of the page matches exactly one.
HAND_ACTIONS: list[tuple[str, Callable[[list[RecordedStack], list[tuple[int, str, bool]]], None]]] = [
    (r"kubectl (label|taint) node|kubectl (cordon|drain)\b", _check_nodes),
    (r"scale deployment slurm-operator", _check_operator_scale),
    (r"scale statefulset slurm-accounting", _check_accounting_scale),
    (r"kubectl -n \w+ apply -f - <<'EOF'|delete pod hpcforge-restore", _check_restore_pod),
    (r"^kubectl apply -f -$|kubectl apply` of the restored", _check_restored_secrets),
    (r"rollout restart (deployment sealed-secrets-controller|deploy,statefulset|statefulset/dirsrv)$", _check_restart),
    (r"rollout restart.*(" + "|".join(OPERATOR_MADE) + ")", _check_operator_restart),
    (r"delete pod( <pod>| <login pod>| slurm-controller-0)?$", _check_pod_delete),
    (r"kubectl edit$|delete \$\(kubectl -n slurm get jobs", _check_refresh),
]


def test_every_hand_action_of_the_operations_guide_is_listed_and_holds(
    dev_stack: RecordedStack, prod_stack: RecordedStack
) -> None:
    import re

    commands = _doc_commands()
    assert len(commands) >= 20
    matched: dict[int, list[tuple[int, str, bool]]] = {i: [] for i in range(len(HAND_ACTIONS))}
    for number, command, fenced in commands:
        rows = [i for i, (pattern, _) in enumerate(HAND_ACTIONS) if re.search(pattern, command)]
        assert len(rows) == 1, f"docs/operations.md line {number}: {command!r} matches rows {rows} of HAND_ACTIONS"
        matched[rows[0]].append((number, command, fenced))
    for index, (pattern, check) in enumerate(HAND_ACTIONS):
        assert matched[index], f"no command of the page matches {pattern!r}"
        check([dev_stack, prod_stack], matched[index])
    # the page says so, row by row
    section = OPERATIONS.read_text().split("## What undoes a hand action", 1)[1].split("\n## ", 1)[0]
    for needle in ("scale deployment slurm-operator", "rollout restart", "options.refresh: always", "RespectIgnoreDifferences"):
        assert needle in section


def test_the_rerun_job_block_deletes_the_accounts_job_and_updates_with_a_refresh(
    prod_stack: RecordedStack, tmp_path: Path
) -> None:
    import os
    import re
    import subprocess

    block = OPERATIONS.read_text().split("<!-- day2: rerun-job -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    [job] = [o for o in _objects(prod_stack, "Job") if o["metadata"]["name"].startswith("slurm-accounts-sync-")]
    assert "ttlSecondsAfterFinished" not in job["spec"]  # a refresh would otherwise re-create it on every update
    [resource] = [r for r in prod_stack.kubernetes_objects() if r.inputs is job]
    assert not resource.ignore_changes and not resource.retain_on_delete
    # The block's commands against stand-ins that record what they are asked.
    log = tmp_path / "log"
    names = ["job.batch/dirsrv-bootstrap-1", f"job.batch/{job['metadata']['name']}"]
    (tmp_path / "kubectl").write_text(
        '#!/bin/sh\necho "kubectl $*" >> "$LOG"\n'
        f"case \"$*\" in *'get jobs -o name'*) printf '%s\\n' {' '.join(names)};; esac\n"
    )
    (tmp_path / "pulumi").write_text('#!/bin/sh\necho "pulumi $*" >> "$LOG"\n')
    for tool in ("kubectl", "pulumi"):
        (tmp_path / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "LOG": str(log)}
    subprocess.run(["bash", "-euo", "pipefail", "-c", block], check=True, env=env)
    calls = log.read_text().splitlines()
    assert calls[-2:] == [f"kubectl -n slurm delete job.batch/{job['metadata']['name']}", "pulumi up --refresh"]
    assert re.search(r"pulumi up --refresh", block)
    _check_refresh([], [])


def test_check_with_rendered_charts_prints_and_fails_on_two_owners(prod_stack: RecordedStack) -> None:
    import io

    from components.versions import Charts
    from offline.charts.render import ChartRelease, RenderedChart, RenderReport
    from offline.policy.owners import print_owners

    declared = next(r.inputs for r in prod_stack.kubernetes_objects() if r.inputs.get("kind") == "ConfigMap")
    release = ChartRelease("network-operator", Charts.NETWORK_OPERATOR, "nvidia-network-operator", {}, "argocd", "urn:x")
    clean = RenderReport([RenderedChart(release, objects=[], crds=[_crd("x.example.org")])], [])
    out = io.StringIO()
    assert print_owners(prod_stack, clean, out) == 0
    assert "Owners summary: 0 object(s)" in out.getvalue()
    twice = RenderReport([RenderedChart(release, objects=[declared], crds=[])], [])
    out = io.StringIO()
    assert print_owners(prod_stack, twice, out) == 1
    assert "Argo CD Application argocd/network-operator" in out.getvalue() and "TWICE ConfigMap " in out.getvalue()

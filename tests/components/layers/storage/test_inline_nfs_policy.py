"""The ValidatingAdmissionPolicy that refuses NFS mounted inline (issue 39, item 8): its CEL evaluated by the CEL
runtime the schema tier uses (cel-expr-python, offline/schema/cel.py) on pods and workloads that mount NFS inline
(refused) and through claims, ConfigMaps and the like (admitted), and on every pod template of dev's and prod's
renders (admitted: hpcforge mounts NFS through claims only)."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from cel_expr_python import cel  # type: ignore[import-untyped,unused-ignore]
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings  # type: ignore[import-untyped,unused-ignore]

from components.layers.storage.objects import INLINE_NFS_POLICY, inline_nfs_binding_spec, inline_nfs_policy_spec
from offline.program.engine import RecordedStack

# A policy's variables are evaluated with `object` bound, each seeing the ones before it, and its validations with
# `object` and `variables` (k8s.io/apiserver v0.33.9 pkg/admission/plugin/policy/validating/validator.go; the optional
# types library is in the base environment from 1.28, pkg/cel/environment/base.go). Here each validation is compiled
# with the variables bound around it by `cel.bind`, in order.
_ENV = cel.NewEnv(
    variables={"object": cel.Type.DYN},
    extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_bindings.ExtBindings()],
)


def _with_variables(expression: str, variables: list[dict[str, str]]) -> str:
    for index in reversed(range(len(variables))):
        known = [f"'{v['name']}': variables.{v['name']}" for v in variables[:index]]
        fields = ", ".join([*known, f"'{variables[index]['name']}': ({variables[index]['expression']})"])
        expression = f"cel.bind(variables, {{{fields}}}, ({expression}))"
    return expression


def _matches(spec: Mapping[str, Any], obj: Mapping[str, Any], operation: str) -> bool:
    group = obj["apiVersion"].rpartition("/")[0]
    version = obj["apiVersion"].rpartition("/")[2]
    resource = f"{obj['kind'].lower()}s"
    return any(
        group in rule["apiGroups"]
        and version in rule["apiVersions"]
        and operation in rule["operations"]
        and resource in rule["resources"]
        for rule in spec["matchConstraints"]["resourceRules"]
    )


def refusals(obj: Mapping[str, Any], operation: str = "CREATE") -> list[str]:
    """The messages the policy denies `obj` with (empty: admitted, or not matched)."""
    spec = inline_nfs_policy_spec()
    if not _matches(spec, obj, operation):
        return []
    messages = []
    for validation in spec["validations"]:
        program = _ENV.compile(_with_variables(validation["expression"], spec["variables"]))
        result = program.eval(data={"object": obj})
        assert result.type() != cel.Type.ERROR, f"{validation['expression']}: {result.value()}"
        if result.value() is not True:
            messages.append(validation["message"])
    return messages


INLINE_NFS = {"name": "sw", "nfs": {"server": "nfs01.hpc.example.org", "path": "/export/software", "readOnly": False}}
INLINE_CSI = {
    "name": "sw",
    "csi": {"driver": "nfs.csi.k8s.io", "volumeAttributes": {"server": "nfs01", "share": "/export/software"}},
}
CLAIM = {"name": "sw", "persistentVolumeClaim": {"claimName": "software-rw"}}
CONFIG_MAP = {"name": "conf", "configMap": {"name": "conf"}}
OTHER_CSI = {"name": "secrets", "csi": {"driver": "secrets-store.csi.k8s.io"}}


def _pod_spec(*volumes: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if volumes:
        spec["volumes"] = list(volumes)
    return spec


def pod(*volumes: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "devops"}, "spec": _pod_spec(*volumes)}


def workload(kind: str, *volumes: dict[str, Any]) -> dict[str, Any]:
    template = {"metadata": {}, "spec": _pod_spec(*volumes)}
    group = {"Job": "batch/v1", "CronJob": "batch/v1", "ReplicationController": "v1"}.get(kind, "apps/v1")
    spec = {"jobTemplate": {"spec": {"template": template}}} if kind == "CronJob" else {"template": template}
    return {"apiVersion": group, "kind": kind, "metadata": {"name": "w", "namespace": "devops"}, "spec": spec}


@pytest.mark.parametrize("volume", [INLINE_NFS, INLINE_CSI], ids=["nfs", "csi-nfs"])
def test_a_pod_that_mounts_nfs_inline_is_refused(volume: dict[str, Any]) -> None:
    (message,) = refusals(pod(CONFIG_MAP, volume))
    assert "inline NFS volume" in message and "PersistentVolumeClaim" in message


@pytest.mark.parametrize(
    "volumes", [(CLAIM,), (CLAIM, CONFIG_MAP), (OTHER_CSI,), ()], ids=["claim", "claim+configmap", "other-csi", "none"]
)
def test_a_pod_without_inline_nfs_is_admitted(volumes: tuple[dict[str, Any], ...]) -> None:
    assert refusals(pod(*volumes)) == []


@pytest.mark.parametrize(
    "kind", ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob", "ReplicationController"]
)
def test_a_workload_whose_pod_template_mounts_nfs_inline_is_refused_on_create_and_update(kind: str) -> None:
    assert len(refusals(workload(kind, INLINE_NFS))) == 1
    assert len(refusals(workload(kind, INLINE_NFS), "UPDATE")) == 1
    assert refusals(workload(kind, CLAIM, CONFIG_MAP)) == [] and refusals(workload(kind)) == []


def test_a_replication_controller_without_a_template_and_a_cronjob_without_a_job_spec_are_admitted() -> None:
    assert refusals({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "r"}, "spec": {}}) == []
    bare = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": {}}}
    assert refusals(bare) == []


def test_pods_are_judged_on_create_only() -> None:
    """A pod's volumes cannot change after it is created: an update (labels, say) of a pod admitted before the policy
    existed is not refused."""
    assert refusals(pod(INLINE_NFS), "UPDATE") == []


def test_the_binding_denies_in_every_namespace() -> None:
    binding = inline_nfs_binding_spec()
    assert binding == {"policyName": INLINE_NFS_POLICY, "validationActions": ["Deny"]}
    assert inline_nfs_policy_spec()["failurePolicy"] == "Fail"


def _pod_specs(obj: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod spec inside a rendered object (pods, workloads' templates, custom resources' pod templates, Argo
    Workflows' `volumes`), by where it is."""
    if isinstance(obj, Mapping):
        if isinstance(obj.get("volumes"), list):
            yield path, dict(obj)
        for key, value in obj.items():
            yield from _pod_specs(value, f"{path}.{key}")
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            yield from _pod_specs(value, f"{path}[{index}]")


@pytest.mark.parametrize("stack_name", ["dev_stack", "prod_stack"])
def test_every_pod_of_the_render_is_admitted_and_the_policy_is_rendered(stack_name: str, request: pytest.FixtureRequest) -> None:
    stack: RecordedStack = request.getfixturevalue(stack_name)
    objects = [r.inputs for r in stack.kubernetes_objects()]
    policies = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"]
    bindings = [o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"]
    assert [p["metadata"]["name"] for p in policies] == [INLINE_NFS_POLICY] and policies[0]["spec"] == inline_nfs_policy_spec()
    assert [b["spec"] for b in bindings] == [inline_nfs_binding_spec()]
    judged = 0
    for obj in objects:
        for where, spec in _pod_specs(obj.get("spec", {})):
            candidate = pod()
            candidate["spec"] = copy.deepcopy(spec)
            assert refusals(candidate) == [], f"{obj['kind']} {obj['metadata']['name']} spec{where}"
            judged += 1
    # The render's pod templates include the devops lane's software volumes (claims), which must stay admitted.
    assert judged >= 5

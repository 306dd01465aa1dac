"""Tier 1: every policy rule called directly, with a passing and a failing case, on synthetic resources
in the engine's wire form (secrets marked); plus the shared helpers, the config knobs and the
policy config files."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
import yaml

from components.layers.network.multus import cluster_role_rules as multus_cluster_role_rules
from offline.policy.config import PolicyConfig, PolicyInfo, parse_policy_config, reconcile_policy_config
from policies.families import ALL_RULES, FAMILIES
from policies.framework import _deserialize_with_markers, install_secret_shim, to_policy
from policies.rules import gitops, security, slurm
from policies.rules.images import parse_image
from policies.rules.knobs import ObjectSelector
from policies.rules.rule import ResourceRule, StackRule
from policies.rules.view import ResourceView, StackView
from policies.rules.wire import SECRET_SIG, SIG_KEY, SecretInt, SecretStr, Unknown, from_wire, is_secret
from policies.rules.workloads import containers
from tests.helpers import REPO

STACK = "urn:pulumi:prod::hpcforge::pulumi:pulumi:Stack::hpcforge-prod"
PLATFORM = "hpcforge:platform:Platform"
UNKNOWN_STRING = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
LABELS = {"app.kubernetes.io/managed-by": "pulumi", "app.kubernetes.io/part-of": "hpcforge"}


def secret(value: Any) -> dict[str, Any]:
    return {SIG_KEY: SECRET_SIG, "value": value}


def k8s(
    kind: str,
    name: str,
    namespace: str | None = None,
    *,
    api: str = "v1",
    spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    type_: str | None = None,
    parent_types: tuple[str, ...] = (PLATFORM,),
    protect: bool = False,
    ignore_changes: tuple[str, ...] = (),
    **extra: Any,
) -> ResourceView:
    """A Kubernetes object as the engine sends it (wire form), e.g. k8s("Secret", "x", "ns", stringData=...)."""
    metadata: dict[str, Any] = {"name": name, "labels": dict(LABELS if labels is None else labels)}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    props: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": metadata, **extra}
    if spec is not None:
        props["spec"] = spec
    group_version = api if "/" in api else f"core/{api}"
    token = type_ or f"kubernetes:{group_version}:{kind}"
    resource_name = f"{namespace}/{name}" if namespace else name
    qualified = "$".join((*parent_types, token))
    return ResourceView.from_wire(
        token,
        resource_name,
        props,
        urn=f"urn:pulumi:prod::hpcforge::{qualified}::{resource_name}",
        protect=protect,
        ignore_changes=ignore_changes,
    )


def chart(chart_name: str, version: Any, values: dict[str, Any] | None = None, **extra: Any) -> ResourceView:
    props = {"chart": chart_name, "version": version, "namespace": "ns", "values": values or {}, **extra}
    return ResourceView.from_wire(
        "kubernetes:helm.sh/v4:Chart",
        chart_name,
        props,
        urn=f"urn:pulumi:prod::hpcforge::kubernetes:helm.sh/v4:Chart::{chart_name}",
    )


def application(source: dict[str, Any], sync: dict[str, Any] | None = None, **spec: Any) -> ResourceView:
    body = {
        "project": "p",
        "source": source,
        "destination": {"server": "https://kubernetes.default.svc", "namespace": "apps"},
        "syncPolicy": sync if sync is not None else {"automated": {"prune": True, "selfHeal": True}},
        **spec,
    }
    return k8s("Application", "app", "argocd", api="argoproj.io/v1alpha1", spec=body)


def deployment(
    container: dict[str, Any], pod: dict[str, Any] | None = None, name: str = "web", namespace: str = "apps"
) -> ResourceView:
    pod_spec = {"containers": [container], **(pod or {})}
    return k8s("Deployment", name, namespace, api="apps/v1", spec={"template": {"spec": pod_spec}})


GOOD_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}}
GOOD_CONTAINER = {"name": "web", "image": "registry.k8s.io/coredns/coredns:v1.12.1", "resources": GOOD_RESOURCES}


def nodeset(
    name: str = "gpu-a100",
    *,
    extra_conf: str | None = "Gres=gpu:a100:8",
    gpus: int | None = 8,
    replicas: int = 8,
    max_unavailable: Any = 1,
    protection: Any = True,
    controller: str = "slurm",
) -> ResourceView:
    limits: dict[str, Any] = {"memory": "960Gi"}
    if gpus is not None:
        limits["nvidia.com/gpu"] = gpus
    spec: dict[str, Any] = {
        "controllerRef": {"name": controller},
        "replicas": replicas,
        "slurmd": {
            "image": "ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04",
            "resources": {"requests": {"cpu": "120", "memory": "960Gi"}, "limits": limits},
        },
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}},
        "template": {"spec": {"nodeSelector": {"hpcforge.io/pool": name}}},
    }
    if extra_conf is not None:
        spec["extraConf"] = extra_conf
    if protection is not None:
        spec["workloadDisruptionProtection"] = protection
    return k8s("NodeSet", name, "slurm", api="slinky.slurm.net/v1beta1", spec=spec)


def controller(extra_conf: str, name: str = "slurm") -> ResourceView:
    spec = {
        "clusterName": "hpc",
        "slurmctld": {"image": "ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04", "resources": GOOD_RESOURCES},
        "extraConf": extra_conf,
    }
    return k8s(
        "Controller",
        name,
        "slurm",
        api="slinky.slurm.net/v1beta1",
        spec=spec,
        annotations={"hpcforge.io/protection": "protect"},
        protect=True,
    )


def loginset(replicas: int, strategy: dict[str, Any] | None) -> ResourceView:
    spec: dict[str, Any] = {"controllerRef": {"name": "slurm"}, "replicas": replicas, "login": {"image": "x:1"}}
    if strategy is not None:
        spec["strategy"] = strategy
    return k8s("LoginSet", "login", "slurm", api="slinky.slurm.net/v1beta1", spec=spec)


def namespace(name: str, labels: dict[str, str] | None = None) -> ResourceView:
    psa = {
        f"pod-security.kubernetes.io/{mode}{suffix}": value
        for mode in ("enforce", "audit", "warn")
        for suffix, value in (("", "restricted"), ("-version", "v1.33"))
    }
    return k8s("Namespace", name, labels={**LABELS, **psa} if labels is None else labels)


def network_policy(ns: str, name: str = "default-deny", spec: dict[str, Any] | None = None) -> ResourceView:
    body = spec if spec is not None else {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    return k8s("NetworkPolicy", name, ns, api="networking.k8s.io/v1", spec=body)


def stack(*resources: ResourceView) -> StackView:
    return StackView(tuple(resources))


def argocd_chart(cm: dict[str, Any]) -> ResourceView:
    return chart("argo-cd", "10.1.1", {"configs": {"cm": cm}})


NODESET_CUSTOMIZATION = "- field: spec.template.spec\n  type: core/v1/PodSpec\n"


# --- shared helpers ------------------------------------------------------------------------------


def test_from_wire_marks_secret_leaves_and_unknowns() -> None:
    raw = {
        "plain": "x",
        "number": 3.0,
        "one": secret("s3cr3t"),
        "map": secret({"a": "1", "b": [2.0, "c"]}),
        "computed": UNKNOWN_STRING,
        "computed-secret": secret(UNKNOWN_STRING),
    }
    value = from_wire(raw)
    assert value["plain"] == "x" and not is_secret(value["plain"])
    assert value["number"] == 3 and isinstance(value["number"], int)
    assert isinstance(value["one"], SecretStr) and value["one"] == "s3cr3t"
    assert is_secret(value["map"]["a"]) and isinstance(value["map"]["b"][0], SecretInt) and is_secret(value["map"]["b"][1])
    assert value["computed"] == Unknown(secret=False)
    assert value["computed-secret"] == Unknown(secret=True) and is_secret(value["computed-secret"])
    assert "s3cr3t" not in repr(value["one"])


def test_secret_shim_is_what_pulumi_policy_calls() -> None:
    import pulumi_policy.policy as policy_module
    from pulumi_policy.deserialize import deserialize_properties

    raw = {"stringData": secret({"auth": "pw"}), "data": {"k": "v"}}
    assert deserialize_properties(copy.deepcopy(raw)) == {"stringData": {"auth": "pw"}, "data": {"k": "v"}}
    marked = _deserialize_with_markers(copy.deepcopy(raw))
    assert is_secret(marked["stringData"]["auth"]) and not is_secret(marked["data"]["k"])
    original = policy_module.deserialize_properties
    try:
        install_secret_shim()
        assert policy_module.deserialize_properties is _deserialize_with_markers
        install_secret_shim()  # idempotent
    finally:
        policy_module.deserialize_properties = original


def test_every_rule_becomes_a_pulumi_policy_with_a_defaulted_schema() -> None:
    from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

    names = [rule.name for rule in ALL_RULES]
    assert len(names) == len(set(names)) == 36
    for rule in ALL_RULES:
        policy = to_policy(rule)
        expected = ResourceValidationPolicy if isinstance(rule, ResourceRule) else StackValidationPolicy
        assert isinstance(policy, expected), rule.name
        schema = rule.config.schema()
        assert all("default" in prop and "description" in prop for prop in schema.values()), rule.name
        jsonschema.Draft7Validator.check_schema({"type": "object", "properties": schema})
        defaults = {key: prop["default"] for key, prop in schema.items()}
        jsonschema.validate(defaults, {"type": "object", "properties": schema})
        # The engine's merged config (schema defaults, numbers as doubles) parses back to the defaults.
        doubles = json.loads(json.dumps(defaults), parse_int=float)
        assert rule.config.from_config(doubles) == rule.config(), rule.name


@pytest.mark.parametrize(
    ("reference", "registry", "repository", "tag", "digest"),
    [
        ("nginx", "docker.io", "nginx", None, None),
        ("ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04", "ghcr.io", "slinkyproject/slurmd", "26.05-ubuntu26.04", None),
        ("localhost:5000/app:1.0", "localhost:5000", "app", "1.0", None),
        ("quay.io/x/y@sha256:" + "a" * 64, "quay.io", "x/y", None, "sha256:" + "a" * 64),
        ("library/redis:7@sha256:" + "b" * 64, "docker.io", "library/redis", "7", "sha256:" + "b" * 64),
    ],
)
def test_parse_image(reference: str, registry: str, repository: str, tag: str | None, digest: str | None) -> None:
    image = parse_image(reference)
    assert (image.registry, image.repository, image.tag, image.digest) == (registry, repository, tag, digest)


def test_slinky_role_containers_merge_the_template_container() -> None:
    ns = nodeset()
    spec = dict(ns.spec)
    spec["template"] = {"spec": {"containers": [{"name": "slurmd", "securityContext": {"privileged": True}}]}}
    view = ResourceView(ns.type, ns.name, ns.urn, {**ns.props, "spec": spec})
    slurmd = [c for c in containers(view) if c.name == "slurmd"]
    assert len(slurmd) == 1 and slurmd[0].path == "spec.slurmd"
    assert slurmd[0].container["securityContext"] == {"privileged": True} and "resources" in slurmd[0].container


def test_workflow_templates_and_appwrappers_have_containers() -> None:
    workflow = k8s(
        "WorkflowTemplate",
        "build",
        "devops",
        api="argoproj.io/v1alpha1",
        spec={
            "hostNetwork": True,
            "templates": [
                {"name": "pipeline", "dag": {"tasks": []}},
                {"name": "build", "container": {"image": "docker.io/spack/ubuntu-jammy:0.23.1"}},
                {"name": "test", "script": {"image": "alpine"}, "sidecars": [{"name": "db", "image": "x:1"}]},
            ],
        },
    )
    paths = [c.path for c in containers(workflow)]
    assert paths == ["spec.templates[build].container", "spec.templates[test].script", "spec.templates[test].sidecars[db]"]
    assert "no tag" in gitops.IMAGES_PINNED(workflow)[0] and security.PRIVILEGED_ALLOW_LIST(workflow)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {"template": {"spec": {"containers": [{"name": "w", "image": "a:1"}]}}},
    }
    wrapper = k8s("AppWrapper", "pair", "team", api="workload.codeflare.dev/v1beta2", spec={"components": [{"template": job}]})
    assert [c.path for c in containers(wrapper)] == ["spec.components[0].template.spec.template.spec.containers[w]"]
    assert "limits.memory" in security.CONTAINER_RESOURCES(wrapper)[0]


def test_rendered_objects_and_patches_are_told_apart() -> None:
    own = deployment(GOOD_CONTAINER)
    rendered = k8s("ConfigMap", "x", "ns", parent_types=(PLATFORM, "kubernetes:helm.sh/v4:Chart"))
    patch = k8s("Deployment", "x", "ns", api="apps/v1", type_="kubernetes:apps/v1:DeploymentPatch", labels={})
    assert own.authored and not own.rendered_by_component
    assert rendered.rendered_by_component and not rendered.authored
    assert patch.is_patch and not patch.authored


# --- GitOps and drift ------------------------------------------------------------------------------


def test_helm_charts_pinned() -> None:
    rule = gitops.HELM_CHARTS_PINNED
    assert rule(chart("argo-cd", "10.1.1")) == []
    assert rule(chart("cert-manager", "v1.21.1")) == []
    assert rule(application({"repoURL": "https://x", "chart": "traefik", "targetRevision": "41.3.0"})) == []
    # Under the real engine a helm.v4.Chart component arrives without inputs: nothing to check.
    assert rule(ResourceView("kubernetes:helm.sh/v4:Chart", "argocd", props={})) == []
    for bad in ("^10.1", "10.x", "latest", "*", "", ">=1.0.0", "main"):
        problems = rule(chart("argo-cd", bad))
        assert len(problems) == 1 and "argo-cd" in problems[0], bad
    assert rule(chart("argo-cd", None)) and "no version" in rule(chart("argo-cd", None))[0]
    problems = rule(application({"repoURL": "https://x", "chart": "traefik", "targetRevision": "41.*"}))
    assert len(problems) == 1 and "targetRevision" in problems[0]


def test_git_revisions_pinned() -> None:
    rule = gitops.GIT_REVISIONS_PINNED
    tag = application({"repoURL": "https://git/x.git", "path": "apps", "targetRevision": "v2.3.1"})
    commit = application(
        {"repoURL": "https://git/x.git", "path": "apps", "targetRevision": "9f1c2e4b7a3d5e6f8091a2b3c4d5e6f708192a3b"}
    )
    branch = application({"repoURL": "https://git/x.git", "path": "apps", "targetRevision": "main"})
    head = application({"repoURL": "https://git/x.git", "path": "apps", "targetRevision": "HEAD"})
    empty = application({"repoURL": "https://git/x.git", "path": "apps"})
    assert rule(tag) == [] and rule(commit) == []
    assert len(rule(branch)) == 1 and "'main'" in rule(branch)[0]
    assert "HEAD" in rule(head)[0] and "empty" in rule(empty)[0]
    dev = gitops.GitRevisionsConfig(allow_branches=True)
    assert rule(branch, dev) == []
    assert rule(head, dev) and rule(empty, dev)
    assert rule(chart("argo-cd", "10.1.1")) == []  # Helm sources are the other rule's


def test_argocd_automated_sync() -> None:
    rule = gitops.ARGOCD_AUTOMATED_SYNC
    source = {"repoURL": "https://x", "path": "a", "targetRevision": "v1.0.0"}
    assert rule(application(source)) == []
    assert "not set" in rule(application(source, sync={"syncOptions": ["CreateNamespace=true"]}))[0]
    problems = rule(application(source, sync={"automated": {"prune": False, "selfHeal": False}}))
    assert len(problems) == 2 and "prune" in problems[0] and "selfHeal" in problems[1]
    assert rule(application(source, sync={"automated": {"enabled": False, "prune": True, "selfHeal": True}}))


def test_argocd_ignore_differences_scoped() -> None:
    rule = gitops.ARGOCD_IGNORE_DIFFERENCES_SCOPED
    source = {"repoURL": "https://x", "chart": "c", "targetRevision": "1.0.0"}
    scoped = [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}]
    respect = {"automated": {"prune": True, "selfHeal": True}, "syncOptions": ["RespectIgnoreDifferences=true"]}
    assert rule(application(source, respect, ignoreDifferences=scoped)) == []
    secret = [{"kind": "Secret", "jqPathExpressions": [".data.x"]}]
    assert rule(application(source, respect, ignoreDifferences=secret)) == []
    whole_kind = rule(application(source, respect, ignoreDifferences=[{"group": "apps", "kind": "Deployment"}]))
    assert len(whole_kind) == 1 and "apps/Deployment" in whole_kind[0]
    assert rule(application(source, respect, ignoreDifferences=[{"kind": "Secret", "jsonPointers": ["/"]}]))
    # Without RespectIgnoreDifferences=true the next sync applies the ignored fields again (issue 27 item 5).
    [unrespected] = rule(application(source, ignoreDifferences=scoped))
    assert "RespectIgnoreDifferences=true" in unrespected
    cm_key = "resource.customizations.ignoreDifferences.apps_Deployment"
    assert rule(argocd_chart({cm_key: "jsonPointers:\n- /spec/replicas\n"})) == []
    assert rule(argocd_chart({cm_key: "managedFieldsManagers:\n- kube-controller-manager\n"}))


def test_ignore_changes_allow_listed() -> None:
    rule = gitops.IGNORE_CHANGES_ALLOW_LISTED
    pvc = k8s("PersistentVolumeClaim", "data", "db", ignore_changes=("spec.resources",))
    assert rule(k8s("ConfigMap", "x", "ns")) == []
    assert len(rule(pvc)) == 1 and "spec.resources" in rule(pvc)[0]
    config = gitops.IgnoreChangesConfig.from_config(
        {
            "allowList": [
                {"type": "kubernetes:core/v1:PersistentVolumeClaim", "name": "db/*", "paths": ["spec.*"], "reason": "resize"}
            ]
        }
    )
    assert rule(pvc, config) == []


def test_stateful_resources_protected() -> None:
    rule = gitops.STATEFUL_RESOURCES_PROTECTED
    assert rule(k8s("PersistentVolumeClaim", "d", "db", protect=True, annotations={"hpcforge.io/protection": "protect"})) == []
    assert rule(k8s("PersistentVolumeClaim", "d", "db", annotations={"hpcforge.io/protection": "retain"})) == []
    assert rule(k8s("ConfigMap", "c", "db")) == []
    assert "neither protected" in rule(k8s("PersistentVolumeClaim", "d", "db"))[0]
    # The annotation claims protect but the option is missing: they disagree.
    assert "disagree" in rule(k8s("PersistentVolumeClaim", "d", "db", annotations={"hpcforge.io/protection": "protect"}))[0]
    sts = k8s(
        "StatefulSet", "dirsrv", "directory", api="apps/v1", spec={"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}
    )
    assert "volumeClaimTemplates" in rule(sts)[0]
    mariadb = k8s("MariaDB", "m", "db", api="k8s.mariadb.com/v1alpha1", spec={})
    assert rule(mariadb) and rule(controller("")) == []
    # chart-made Prometheus: its claims are the operator's StatefulSet's; the CR's claim retention keeps them
    storage = {"storage": {"volumeClaimTemplate": {"spec": {"resources": {"requests": {"storage": "50Gi"}}}}}}
    prometheus = k8s("Prometheus", "p", "monitoring", api="monitoring.coreos.com/v1", spec=storage)
    assert "persistentVolumeClaimRetentionPolicy.whenDeleted to Retain" in rule(prometheus)[0]
    retained = {**storage, "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}}
    assert rule(k8s("Prometheus", "p", "monitoring", api="monitoring.coreos.com/v1", spec=retained)) == []
    deleted = {**storage, "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}
    assert rule(k8s("Alertmanager", "a", "monitoring", api="monitoring.coreos.com/v1", spec=deleted))
    assert rule(k8s("Prometheus", "p", "monitoring", api="monitoring.coreos.com/v1", spec={})) == []
    # the same through the chart's values (Chart or Argo CD Application), where the CRs are not Pulumi's
    claim = {"volumeClaimTemplate": {"spec": {}}}
    keep = {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain"}}
    kept = {
        "prometheus": {"prometheusSpec": {"storageSpec": claim, **keep}},
        "alertmanager": {"alertmanagerSpec": {"storage": claim, **keep}},
    }
    assert rule(chart("kube-prometheus-stack", "88.5.3", kept)) == []
    lost = {
        "prometheus": {"prometheusSpec": {"storageSpec": claim}},
        "alertmanager": {"alertmanagerSpec": {"storage": claim, **keep}},
    }
    problems = rule(chart("kube-prometheus-stack", "88.5.3", lost))
    assert len(problems) == 1 and "prometheus.prometheusSpec.persistentVolumeClaimRetentionPolicy" in problems[0]
    assert rule(chart("kube-prometheus-stack", "88.5.3", {"prometheus": {"prometheusSpec": {}}})) == []
    assert rule(chart("other", "1.0.0", lost)) == []


def test_kubernetes_labels() -> None:
    rule = gitops.KUBERNETES_LABELS
    assert rule(k8s("ConfigMap", "c", "ns")) == []
    problems = rule(k8s("ConfigMap", "c", "ns", labels={"app.kubernetes.io/part-of": "other"}))
    assert len(problems) == 2 and "managed-by" in problems[0] and "'other'" in problems[1]
    # Objects rendered by a chart carry the chart's labels; patches are partial.
    assert rule(k8s("ConfigMap", "c", "ns", labels={}, parent_types=(PLATFORM, "kubernetes:helm.sh/v4:Chart"))) == []
    assert rule(k8s("Namespace", "n", labels={}, type_="kubernetes:core/v1:NamespacePatch")) == []


def test_images_pinned() -> None:
    rule = gitops.IMAGES_PINNED
    assert rule(deployment(GOOD_CONTAINER)) == []
    assert rule(deployment({**GOOD_CONTAINER, "image": "quay.io/x/y@sha256:" + "c" * 64})) == []
    assert "latest" in rule(deployment({**GOOD_CONTAINER, "image": "nginx:latest"}))[0]
    assert "no tag" in rule(deployment({**GOOD_CONTAINER, "image": "nginx"}))[0]
    assert rule(nodeset()) == []
    ns = nodeset()
    untagged = {**ns.spec, "slurmd": {**ns.spec["slurmd"], "image": "ghcr.io/slinkyproject/slurmd"}}
    problems = rule(ResourceView(ns.type, ns.name, ns.urn, {**ns.props, "spec": untagged}))
    assert len(problems) == 1 and problems[0].startswith("spec.slurmd")
    assert rule(chart("x", "1.0.0", {"image": {"repository": "ghcr.io/x/y", "tag": "1.2.3"}})) == []
    assert "latest" in rule(chart("x", "1.0.0", {"server": {"image": {"repository": "ghcr.io/x/y", "tag": "latest"}}}))[0]
    assert "without a tag" in rule(chart("x", "1.0.0", {"image": {"repository": "ghcr.io/x/y"}}))[0]
    # NVIDIA charts: repository + image + version
    nvidia = {"dcgm": {"repository": "nvcr.io/nvidia/cloud-native", "image": "dcgm", "version": "4.6.0-1-ubuntu24.04"}}
    assert rule(chart("gpu-operator", "v26.7.0", nvidia)) == []
    assert "moving tag 'latest'" in rule(chart("gpu-operator", "v26.7.0", {"dcgm": {**nvidia["dcgm"], "version": "latest"}}))[0]
    assert "no tag" in rule(chart("gpu-operator", "v26.7.0", {"operator": {"repository": "nvcr.io/nvidia", "image": "x"}}))[0]
    strict = gitops.ImagesConfig(require_digest=True)
    assert rule(deployment(GOOD_CONTAINER), strict)


# --- security ------------------------------------------------------------------------------------


def test_secrets_not_plaintext() -> None:
    rule = security.SECRETS_NOT_PLAINTEXT
    assert rule(k8s("Secret", "s", "ns", stringData=secret({"auth": "pw"}), type="Opaque")) == []
    assert rule(k8s("Secret", "s", "ns", data={"auth": secret("cHc=")})) == []
    assert rule(k8s("Secret", "s", "ns", stringData={"auth": secret(UNKNOWN_STRING)})) == []
    problems = rule(k8s("Secret", "s", "ns", stringData={"auth": "pw", "user": secret("u")}))
    assert len(problems) == 1 and "stringData.auth" in problems[0] and "pw" not in problems[0]
    assert rule(k8s("Secret", "s", "ns", stringData={"auth": UNKNOWN_STRING}))  # computed, not secret
    values_ok = {
        "configs": {"secret": {"argocdServerAdminPassword": secret("$2a$..."), "argocdServerAdminPasswordMtime": "2026"}}
    }
    assert rule(chart("argo-cd", "10.1.1", values_ok)) == []
    assert rule(chart("x", "1.0.0", {"auth": {"existingSecret": "db-creds", "password": ""}})) == []
    leaked = rule(chart("argo-cd", "10.1.1", {"configs": {"secret": {"argocdServerAdminPassword": "hunter2"}}}))
    assert len(leaked) == 1 and "argocdServerAdminPassword" in leaked[0] and "hunter2" not in leaked[0]
    app = application(
        {"repoURL": "https://x", "chart": "db", "targetRevision": "1.0.0", "helm": {"valuesObject": {"rootPassword": "x"}}}
    )
    assert rule(app)


def test_container_resources() -> None:
    rule = security.CONTAINER_RESOURCES
    assert rule(deployment(GOOD_CONTAINER)) == []
    assert rule(nodeset()) == []
    problems = rule(deployment({"name": "web", "image": "x:1", "resources": {"requests": {"cpu": "1"}}}))
    assert len(problems) == 1 and "requests.memory, limits.memory" in problems[0]
    init = deployment(GOOD_CONTAINER, {"initContainers": [{"name": "init", "image": "x:1"}]})
    assert "initContainers[init]" in rule(init)[0]
    assert rule(init, security.ResourcesConfig(include_init_containers=False)) == []
    bare = k8s("LoginSet", "login", "slurm", api="slinky.slurm.net/v1beta1", spec={"login": {"image": "x:1"}})
    assert "spec.login" in rule(bare)[0]


def test_privileged_allow_list() -> None:
    rule = security.PRIVILEGED_ALLOW_LIST
    multus = k8s(
        "DaemonSet",
        "kube-multus-ds",
        "kube-system",
        api="apps/v1",
        spec={
            "template": {
                "spec": {
                    "hostNetwork": True,
                    "hostPID": True,
                    "volumes": [{"name": "cni", "hostPath": {"path": "/etc/cni/net.d"}}],
                    "containers": [{**GOOD_CONTAINER, "securityContext": {"privileged": True}}],
                }
            }
        },
    )
    grendel = deployment(
        {**GOOD_CONTAINER, "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]}}},
        name="grendel",
        namespace="provisioning",
    )
    assert rule(deployment(GOOD_CONTAINER)) == []
    assert len(rule(multus)) == 4  # hostNetwork, hostPID, hostPath, privileged
    assert "NET_ADMIN" in rule(grendel)[0]
    config = security.PrivilegeConfig.from_config(
        {
            "allowList": [
                {
                    "namespace": "kube-system",
                    "kind": "DaemonSet",
                    "name": "kube-multus-ds",
                    "allow": ["privileged", "hostNetwork", "hostPID", "hostPath"],
                },
                {"namespace": "provisioning", "kind": "Deployment", "name": "grendel", "capabilities": ["CAP_NET_ADMIN"]},
            ]
        }
    )
    assert rule(multus, config) == [] and rule(grendel, config) == []
    sneaky = deployment(
        {**GOOD_CONTAINER, "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}, name="grendel", namespace="provisioning"
    )
    assert "SYS_ADMIN" in rule(sneaky, config)[0]
    slurmd = nodeset()
    privileged = ResourceView(
        slurmd.type,
        slurmd.name,
        slurmd.urn,
        {**slurmd.props, "spec": {**slurmd.spec, "slurmd": {**slurmd.spec["slurmd"], "securityContext": {"privileged": True}}}},
    )
    assert "spec.slurmd" in rule(privileged)[0]


def test_namespace_pod_security() -> None:
    rule = security.NAMESPACE_POD_SECURITY
    assert rule(namespace("apps")) == []
    assert rule(k8s("ConfigMap", "x", "ns")) == []
    problems = rule(namespace("apps", labels={**LABELS, "pod-security.kubernetes.io/enforce": "restricted"}))
    assert any("enforce-version" in p for p in problems) and any("/audit " in p for p in problems)
    assert rule(
        namespace("apps", labels={"pod-security.kubernetes.io/enforce": "strict"}),
        security.PodSecurityConfig(required_modes=("enforce",), require_versions=False),
    )


def test_namespace_default_deny() -> None:
    rule = security.NAMESPACE_DEFAULT_DENY
    assert rule(stack(namespace("apps"), network_policy("apps"))) == []
    patched_system = k8s("Namespace", "kube-system", type_="kubernetes:core/v1:NamespacePatch")
    assert rule(stack(patched_system)) == []  # not created by hpcforge
    missing = rule(stack(namespace("apps"), namespace("db"), network_policy("apps")))
    assert len(missing) == 1 and "db" in missing[0].message and missing[0].urn == namespace("db").urn
    leaky = network_policy("apps", spec={"podSelector": {}, "policyTypes": ["Ingress", "Egress"], "ingress": [{}]})
    assert rule(stack(namespace("apps"), leaky))
    only_ingress = network_policy("apps", spec={"podSelector": {}, "policyTypes": ["Ingress"]})
    assert rule(stack(namespace("apps"), only_ingress))
    assert rule(stack(namespace("apps"), network_policy("apps", name="deny-all"))) and (
        rule(stack(namespace("apps"), network_policy("apps", name="deny-all")), security.DefaultDenyConfig(policy_name="")) == []
    )


def _ingress(annotations: dict[str, str] | None, tls: list[dict[str, Any]]) -> ResourceView:
    spec = {"rules": [{"host": "a.example.org"}], "tls": tls}
    return k8s("Ingress", "web", "apps", api="networking.k8s.io/v1", spec=spec, annotations=annotations)


def test_ingress_tls_cert_manager() -> None:
    rule = security.INGRESS_TLS
    issuer = k8s("ClusterIssuer", "acme", api="cert-manager.io/v1", spec={"acme": {}})
    tls = [{"hosts": ["a.example.org"], "secretName": "web-tls"}]
    annotated = _ingress({"cert-manager.io/cluster-issuer": "acme"}, tls)
    certificate = k8s(
        "Certificate", "web-tls", "apps", api="cert-manager.io/v1", spec={"secretName": "web-tls", "dnsNames": ["a.example.org"]}
    )
    assert rule(stack(issuer, annotated)) == []
    assert rule(stack(issuer, certificate, _ingress(None, tls))) == []
    assert "without TLS" in rule(stack(issuer, _ingress({"cert-manager.io/cluster-issuer": "acme"}, [])))[0].message
    assert "not defined" in rule(stack(issuer, _ingress({"cert-manager.io/cluster-issuer": "nope"}, tls)))[0].message
    assert "no cert-manager" in rule(stack(issuer, _ingress(None, tls)))[0].message
    route = k8s(
        "IngressRouteTCP",
        "ldaps",
        "directory",
        api="traefik.io/v1alpha1",
        spec={"tls": {"passthrough": True}, "routes": [{"match": "HostSNI(`ldap.example.org`)"}]},
    )
    ldap_cert = k8s(
        "Certificate",
        "ldap",
        "directory",
        api="cert-manager.io/v1",
        spec={"secretName": "ldap", "dnsNames": ["ldap.example.org"]},
    )
    assert rule(stack(route, ldap_cert)) == []
    assert "passthrough" in rule(stack(route))[0].message
    plain_route = k8s("IngressRoute", "r", "apps", api="traefik.io/v1alpha1", spec={"routes": []})
    assert "without TLS" in rule(stack(plain_route))[0].message
    values = {"server": {"ingress": {"enabled": True, "tls": True, "annotations": {"cert-manager.io/cluster-issuer": "acme"}}}}
    assert rule(stack(issuer, chart("argo-cd", "10.1.1", values))) == []
    no_tls = {"server": {"ingress": {"enabled": True, "annotations": {"cert-manager.io/cluster-issuer": "acme"}}}}
    assert "without TLS" in rule(stack(issuer, chart("argo-cd", "10.1.1", no_tls)))[0].message


# --- Slurm/Kubernetes contract ---------------------------------------------------------------------


def test_slurm_conf_parsing() -> None:
    assert slurm.parse_conf("Gres=gpu:a100:8 Features=avx512") == {"gres": "gpu:a100:8", "features": "avx512"}
    assert slurm.gres_count("gpu:a100:4,gpu:h100:4", "gpu") == 8
    assert slurm.gres_count("gpu:8(S:0-1),mps:100", "gpu") == 8
    assert slurm.gres_count("gpu", "gpu") == 1 and slurm.gres_count("mps:100", "gpu") == 0


def test_nodeset_gres_matches_gpus() -> None:
    rule = slurm.NODESET_GRES
    assert rule(nodeset()) == []
    assert rule(nodeset("cpu", extra_conf="Features=avx512", gpus=None)) == []
    mismatch = rule(nodeset(extra_conf="Gres=gpu:a100:4", gpus=8))
    assert len(mismatch) == 1 and "declares 4 gpu" in mismatch[0] and "gets 8 nvidia.com/gpu" in mismatch[0]
    assert "no gpu GRES" in rule(nodeset(extra_conf="RealMemory=1", gpus=8))[0]
    assert rule(nodeset(extra_conf="Gres=gpu:a100:8", gpus=None))
    assert rule(deployment(GOOD_CONTAINER)) == []


def test_nodeset_extraconf_well_formed() -> None:
    rule = slurm.NODESET_EXTRA_CONF
    assert rule(nodeset()) == []
    # An empty Topology= swallows the next --conf item (slurm-operator#261); more in test_policy_slurm_workarounds.py.
    assert "slurm-operator#261" in rule(nodeset(extra_conf="Topology= Gres=gpu:a100:8"))[0]


def test_nodeset_slurm_sees_pod_resources() -> None:
    rule = slurm.NODESET_POD_RESOURCES
    assert "no CPU limit" in rule(nodeset())[0]  # more in test_policy_slurm_workarounds.py


def test_nodeset_rdma_complete() -> None:
    rule = slurm.NODESET_RDMA
    assert rule(nodeset()) == []  # more in test_policy_slurm_workarounds.py
    bare = nodeset()
    bare.spec["slurmd"]["resources"]["limits"]["rdma/ib_rail0"] = 1
    assert "attaches no network" in rule(bare)[0]


def test_slurm_partitions_reference_nodesets() -> None:
    rule = slurm.PARTITIONS_REFERENCE_NODESETS
    conf = "SchedulerType=sched/backfill\nPartitionName=gpu Nodes=gpu-a100,gpu-h100 Default=NO\nPartitionName=all Nodes=ALL\n"
    ok = stack(controller(conf), nodeset("gpu-a100"), nodeset("gpu-h100"))
    assert rule(ok) == []
    missing = rule(stack(controller(conf), nodeset("gpu-a100")))
    assert len(missing) == 1 and "'gpu-h100'" in missing[0].message and missing[0].urn == controller(conf).urn
    other = rule(stack(controller(conf), nodeset("gpu-a100"), nodeset("gpu-h100", controller="other")))
    assert len(other) == 1
    assert rule(stack(controller("PartitionName=empty State=UP")))


def test_partition_over_a_feature_nodeset_of_the_same_extra_conf_passes() -> None:
    rule = slurm.PARTITIONS_REFERENCE_NODESETS
    conf = "NodeSet=bigmem_bigmem Feature=bigmem\nPartitionName=bigmem Nodes=bigmem_bigmem,cpu\n"
    assert rule(stack(controller(conf), nodeset("cpu"))) == []
    undefined = rule(stack(controller("PartitionName=bigmem Nodes=bigmem_bigmem\n"), nodeset("cpu")))
    assert len(undefined) == 1 and "'bigmem_bigmem'" in undefined[0].message


def test_nodeset_rolling_update_bounded() -> None:
    rule = slurm.NODESET_ROLLING_UPDATE
    assert rule(nodeset(replicas=8, max_unavailable=1)) == []
    assert rule(nodeset(replicas=8, max_unavailable="25%")) == []
    assert rule(nodeset(replicas=0, max_unavailable=1)) == []
    too_many = rule(nodeset(replicas=8, max_unavailable=4))
    assert len(too_many) == 1 and "4 of 8" in too_many[0]
    assert "can never start" in rule(nodeset(max_unavailable=0))[0]
    counted = slurm.RollingUpdateConfig(max_unavailable="50%", max_unavailable_count=2)
    assert rule(nodeset(replicas=16, max_unavailable=3), counted)
    assert rule(nodeset(replicas=16, max_unavailable=2), counted) == []


def test_nodeset_disruption_protection() -> None:
    rule = slurm.NODESET_DISRUPTION
    assert rule(nodeset(protection=True)) == []
    assert rule(nodeset(protection=None)) == []  # the CRD default is true
    assert "False" in rule(nodeset(protection=False))[0]
    assert "not set" in rule(nodeset(protection=None), slurm.DisruptionConfig(require_explicit=True))[0]


def test_loginset_update_keeps_login_available() -> None:
    rule = slurm.LOGINSET_UPDATE
    assert rule(loginset(2, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}})) == []
    assert rule(loginset(1, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})) == []
    assert rule(loginset(1, None)) == []  # Kubernetes' defaults: 25% down rounds to 0, surge to 1
    all_down = rule(loginset(2, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}))
    assert len(all_down) == 1 and "2 of 2" in all_down[0]
    assert rule(loginset(1, {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}))
    assert "Recreate" in rule(loginset(3, {"type": "Recreate"}))[0]


def test_argocd_nodeset_customization() -> None:
    rule = slurm.ARGOCD_NODESET_CUSTOMIZATION
    key = slurm.NODESET_KEY
    assert rule(stack(argocd_chart({key: NODESET_CUSTOMIZATION}), nodeset())) == []
    assert rule(stack(argocd_chart({}))) == []  # no NodeSets
    assert rule(stack(nodeset())) == []  # no Argo CD in this stack
    missing = rule(stack(argocd_chart({"exec.enabled": False}), nodeset()))
    assert len(missing) == 1 and "is not set" in missing[0].message
    wrong = rule(stack(argocd_chart({key: "- field: spec\n  type: core/v1/PodSpec\n"}), nodeset()))
    assert "does not map" in wrong[0].message
    # Argo CD rendered by the real engine (argocd-cm ConfigMap) and NodeSets delivered as a chart.
    cm = k8s(
        "ConfigMap",
        "argocd-cm",
        "argocd",
        data={key: NODESET_CUSTOMIZATION},
        parent_types=(PLATFORM, "kubernetes:helm.sh/v4:Chart"),
    )
    slurm_app = application({"repoURL": "ghcr.io/slinkyproject/charts", "chart": "slurm", "targetRevision": "1.2.1"})
    assert rule(stack(cm, slurm_app)) == []
    bare_cm = k8s("ConfigMap", "argocd-cm", "argocd", data={}, parent_types=(PLATFORM, "kubernetes:helm.sh/v4:Chart"))
    assert rule(stack(bare_cm, slurm_app))


def test_every_rule_has_a_unit_test() -> None:
    tested = {name.removeprefix("test_").replace("_", "-") for name in globals() if name.startswith("test_")}
    for rule in ALL_RULES:
        assert rule.name in tested, f"no unit test named test_{rule.name.replace('-', '_')}"


# --- admission (policies/admission/rules.py, one rule per family; the checks: tests/policies/admission/) ---

from policies.admission import rules as admission_rules  # noqa: E402

ADMISSION = {rule.name: rule for rule in admission_rules.RULES}

UNKNOWN_SPEC: Any = UNKNOWN_STRING
"""A whole spec not known during a preview."""
RESTRICTED_NS = {
    **LABELS,
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "v1.33",
}


def _deployment(security: dict[str, Any] | None) -> ResourceView:
    container: dict[str, Any] = {"name": "manager", "image": "x:1"}
    if security is not None:
        container["securityContext"] = security
    template = {"metadata": {"labels": {"app": "op"}}, "spec": {"containers": [container]}}
    return k8s("Deployment", "op", "ops", api="apps/v1", spec={"template": template})


def test_pod_security_admission() -> None:
    rule = ADMISSION["pod-security-admission"]
    namespace = k8s("Namespace", "ops", labels=RESTRICTED_NS)
    bare = _deployment(None)
    [violation] = rule(stack(namespace, bare))
    assert violation.urn == bare.urn
    assert 'violates PodSecurity "restricted:v1.33": allowPrivilegeEscalation != false' in violation.message
    restricted = {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert rule(stack(namespace, _deployment(restricted))) == []
    assert rule(stack(k8s("Namespace", "ops"), bare)) == []  # no enforce label: privileged
    exempt = rule.config.from_config({"exempt": [{"namespace": "ops", "kind": "Deployment", "name": "op"}]})
    assert rule(stack(namespace, bare), exempt) == []
    # During a preview a securityContext that is not known yet is not judged.
    unknown = _deployment({"allowPrivilegeEscalation": UNKNOWN_STRING})
    assert rule(stack(namespace, unknown)) == []


def test_pod_security_admission_names_a_kubernetes_version_it_does_not_reproduce() -> None:
    """hpcforge:kubernetes.version sets the enforce-version labels: above 1.33 (what policies/admission/pss/
    reproduces) the rule reports the gap once, for the stack, naming the config key; at 1.33 it does not."""
    rule = ADMISSION["pod-security-admission"]
    restricted = {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    newer = k8s("Namespace", "ops", labels={**RESTRICTED_NS, "pod-security.kubernetes.io/enforce-version": "v1.34"})
    [gap] = rule(stack(newer, _deployment(restricted)))
    assert gap.urn is None
    assert gap.message.startswith("Pod Security of Kubernetes 1.34 is not reproduced: namespace ops enforces v1.34")
    assert "hostProbesAndHostLifecycle" in gap.message and "hpcforge:kubernetes.version" in gap.message
    # Its pods are still judged (as 1.33 judges them).
    assert len(rule(stack(newer, _deployment(None)))) == 2
    latest = k8s("Namespace", "ops", labels={k: v for k, v in RESTRICTED_NS.items() if not k.endswith("-version")})
    on_1_35 = rule.config.from_config({"kubernetesVersion": "1.35"})
    assert "Kubernetes 1.35 is not reproduced" in rule(stack(latest, _deployment(restricted)), on_1_35)[0].message
    namespace = k8s("Namespace", "ops", labels=RESTRICTED_NS)
    assert rule(stack(namespace, _deployment(restricted)), on_1_35) == []  # v1.33 evaluates as 1.33 anywhere


def test_argocd_appproject_admission() -> None:
    rule = ADMISSION["argocd-appproject-admission"]
    project = k8s(
        "AppProject",
        "p",
        "argocd",
        api="argoproj.io/v1alpha1",
        spec={
            "sourceRepos": ["https://charts.example"],
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "apps"}],
            "clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
        },
    )
    app = application({"repoURL": "https://charts.example", "chart": "c", "targetRevision": "1.0.0"})
    assert rule(stack(project, app)) == []
    child = k8s("Role", "r", "devops", api="rbac.authorization.k8s.io/v1")
    child = ResourceView(child.type, child.name, child.urn, child.props, parent=app.urn)
    [violation] = rule(stack(project, app, child))
    assert "namespace devops is not permitted in project 'p'" in violation.message and violation.urn == app.urn
    unknown_project = k8s("AppProject", "p", "argocd", api="argoproj.io/v1alpha1", spec=UNKNOWN_SPEC)
    assert rule(stack(unknown_project, app, child)) == []  # preview: the project is not known yet
    other = application({"repoURL": "https://elsewhere.example", "chart": "c", "targetRevision": "1.0.0"})
    assert "is not permitted in project 'p'" in rule(stack(project, other))[0].message


def test_apiserver_reachability() -> None:
    rule = ADMISSION["apiserver-reachability"]
    deny = k8s(
        "NetworkPolicy",
        "default-deny",
        "ops",
        api="networking.k8s.io/v1",
        spec={"podSelector": {}, "policyTypes": ["Ingress", "Egress"]},
    )
    workload = _deployment({})
    service = k8s("Service", "hook", "ops", spec={"selector": {"app": "op"}, "ports": [{"port": 443, "targetPort": 9443}]})
    hook = k8s(
        "ValidatingWebhookConfiguration",
        "hook",
        api="admissionregistration.k8s.io/v1",
        webhooks=[{"name": "v.example", "clientConfig": {"service": {"namespace": "ops", "name": "hook"}}}],
    )
    [violation] = rule(stack(deny, workload, service, hook))
    assert violation.urn == hook.urn and "9443" in violation.message
    allow = k8s(
        "NetworkPolicy",
        "allow-webhook",
        "ops",
        api="networking.k8s.io/v1",
        spec={"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 9443}]}]},
    )
    assert rule(stack(deny, allow, workload, service, hook)) == []
    # During a preview a NetworkPolicy not known yet leaves its namespace unjudged.
    unknown_policy = k8s("NetworkPolicy", "later", "ops", api="networking.k8s.io/v1", spec=UNKNOWN_SPEC)
    assert rule(stack(deny, unknown_policy, workload, service, hook)) == []
    assert rule(stack(deny, hook)) == []  # backends unknown: skipped unless requireKnownBackends
    strict = rule.config.from_config({"requireKnownBackends": True})
    assert rule(stack(deny, hook), strict)


def test_operator_webhook_admission() -> None:
    rule = ADMISSION["operator-webhook-admission"]
    issuer = {"name": "ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    good = {"secretName": "tls", "dnsNames": ["a.example"], "duration": "2160h", "renewBefore": "360h", "issuerRef": issuer}
    certificate = k8s("Certificate", "tls", "apps", api="cert-manager.io/v1", spec=good)
    assert rule(stack(certificate)) == []
    short = k8s("Certificate", "tls", "apps", api="cert-manager.io/v1", spec={**good, "renewBefore": "1m"})
    [violation] = rule(stack(short))
    assert violation.urn == short.urn
    assert 'webhook "webhook.cert-manager.io" denied the request: spec.renewBefore: Invalid value: 1m0s' in violation.message
    # The chart's namespaceSelector leaves a namespace labelled cert-manager.io/disable-validation out.
    unvalidated = k8s("Namespace", "apps", labels={"cert-manager.io/disable-validation": "true"})
    assert rule(stack(unvalidated, short)) == []

    def peer(name: str, asn: int, address: str) -> ResourceView:
        spec = {"myASN": asn, "peerASN": 65000, "peerAddress": address}
        return k8s("BGPPeer", name, "metallb-system", api="metallb.io/v1beta2", spec=spec)

    r1, r2 = peer("r1", 64512, "10.0.0.1"), peer("r2", 64513, "10.0.0.2")
    # frr-k8s (the chart's default backend) refuses two myASNs on one node; the native backend does not.
    assert {v.urn for v in rule(stack(r1, r2))} == {r1.urn, r2.urn}
    assert rule(stack(chart("metallb", "0.16.1", {"frrk8s": {"enabled": False}}), r1, r2)) == []
    assert rule(stack(r1, r2), rule.config.from_config({"metallbBgpType": "native"})) == []
    elsewhere = k8s("IPAddressPool", "p", "default", api="metallb.io/v1beta1", spec={"addresses": ["10.0.0.0/28"]})
    assert "resource must be created in metallb-system namespace" in rule(stack(elsewhere))[0].message
    assert rule(stack(elsewhere), rule.config.from_config({"metallbNamespace": "default"})) == []
    # During a preview a MetalLB object not known yet leaves the set unjudged.
    later = k8s("IPAddressPool", "q", "metallb-system", api="metallb.io/v1beta1", spec=UNKNOWN_SPEC)
    assert rule(stack(r1, r2, later)) == []
    exempt = rule.config.from_config({"exempt": [{"namespace": "apps", "kind": "Certificate", "name": "*"}]})
    assert rule(stack(short), exempt) == []


def test_slinky_webhook_admission() -> None:
    rule = ADMISSION["slinky-webhook-admission"]
    api = "slinky.slurm.net/v1beta1"

    def nodeset(name: str, max_unavailable: Any, namespace: str = "slurm") -> ResourceView:
        spec = {"controllerRef": {"name": "slurm"}, "updateStrategy": {"rollingUpdate": {"maxUnavailable": max_unavailable}}}
        return k8s("NodeSet", name, namespace, api=api, spec=spec)

    good, bad = nodeset("cpu", 1), nodeset("gpu", 0)
    assert rule(stack(good)) == []
    [violation] = rule(stack(good, bad))
    assert violation.urn == bad.urn
    assert 'admission webhook "nodeset-v1beta1.kb.io" denied the request: maxUnavailable must be > 0, got 0' in violation.message
    exempt = rule.config.from_config({"exempt": [{"namespace": "slurm", "kind": "NodeSet", "name": "gpu"}]})
    assert rule(stack(bad), exempt) == []
    assert rule(stack(nodeset("gpu", 0, "kube-system"))) == []  # the chart's namespaceSelector leaves kube-system out
    assert (
        rule(stack(chart("oci://ghcr.io/slinkyproject/charts/slurm-operator", "1.2.1", {"webhook": {"enabled": False}}), bad))
        == []
    )
    assert rule(stack(nodeset("gpu", UNKNOWN_STRING))) == []  # preview: not known yet
    # The CRD's CEL rules hold even where the webhook does not run.
    controller = k8s("Controller", "slurm", "kube-system", api=api, spec={"clusterName": "c"})
    assert "slurmKeyRef must be set when external is false" in rule(stack(controller))[0].message


def test_kueue_admission() -> None:
    rule = ADMISSION["kueue-admission"]
    quotas = [{"name": "cpu", "nominalQuota": "8", "borrowingLimit": "4"}]
    group = {"coveredResources": ["cpu"], "flavors": [{"name": "cpu", "resources": quotas}]}
    outside = k8s("ClusterQueue", "q", api="kueue.x-k8s.io/v1beta2", spec={"resourceGroups": [group]})
    [violation] = rule(stack(outside))
    assert violation.urn == outside.urn
    assert "its CRD's rules" in violation.message and "borrowingLimit must be nil when cohort is empty" in violation.message
    inside = k8s("ClusterQueue", "q", api="kueue.x-k8s.io/v1beta2", spec={"resourceGroups": [group], "cohortName": "site"})
    assert rule(stack(inside)) == []
    job = k8s("Job", "j", "team", api="batch/v1", labels={"kueue.x-k8s.io/queue-name": "Default"}, spec={"template": {}})
    [denied] = rule(stack(job))
    assert "Kueue's webhook denies it" in denied.message and "webhook vjob.kb.io" in denied.message
    system = k8s("Job", "j", "kueue-system", api="batch/v1", labels={"kueue.x-k8s.io/queue-name": "Default"}, spec={})
    assert rule(stack(system)) == []  # the webhooks' namespaceSelector leaves kueue-system out
    exempt = rule.config.from_config({"exempt": [{"namespace": "team", "kind": "Job", "name": "*"}]})
    assert rule(stack(job), exempt) == []
    # During a preview a value not known yet is not judged.
    unknown = k8s(
        "ClusterQueue", "q", api="kueue.x-k8s.io/v1beta2", spec={"resourceGroups": [group], "cohortName": UNKNOWN_STRING}
    )
    assert rule(stack(unknown)) == []


def test_mariadb_operator_admission() -> None:
    rule = ADMISSION["mariadb-operator-admission"]
    spec = {"mariaDbRef": {"name": "mariadb"}, "schedule": {"cron": "15 2 * * *"}, "storage": {"s3": {"bucket": "b"}}}
    backup = k8s("Backup", "b", "database", api="k8s.mariadb.com/v1alpha1", spec=spec)
    assert rule(stack(backup)) == []
    late = k8s("Backup", "b", "database", api="k8s.mariadb.com/v1alpha1", spec={**spec, "schedule": {"cron": "15 24 * * *"}})
    [violation] = rule(stack(late))
    assert violation.urn == late.urn
    assert "mariadb-operator's webhook refuses Backup database/b: spec: invalid Backup: invalid Schedule" in violation.message
    assert "end of range (24) above maximum (23)" in violation.message
    exempt = rule.config.from_config({"exempt": [{"namespace": "database", "kind": "Backup", "name": "b"}]})
    assert rule(stack(late), exempt) == []
    # During a preview a spec value that is not known yet is not judged.
    unknown = k8s("Backup", "b", "database", api="k8s.mariadb.com/v1alpha1", spec={**spec, "schedule": {"cron": UNKNOWN_STRING}})
    assert rule(stack(unknown)) == []


# --- policy config files -----------------------------------------------------------------------------


CONFIG_DIR = REPO / "policies" / "config"


@pytest.mark.parametrize("stack_name", ["dev", "prod"])
def test_policy_config_files_are_valid_for_every_pack(stack_name: str) -> None:
    path = CONFIG_DIR / f"{stack_name}.json"
    document = json.loads(path.read_text())
    known = {rule.name: rule for rule in ALL_RULES}
    for name, entry in document.items():
        if name == "all":
            assert entry == ("mandatory" if stack_name == "prod" else "advisory")
            continue
        assert name in known, f"{path.name}: unknown policy {name}"
        # The same file goes to every pack: the engine passes entries for other packs' policies on to
        # Configure, which rejects an entry without an enforcement level.
        assert isinstance(entry, dict) and entry.get("enforcementLevel") in ("advisory", "mandatory", "disabled"), name
        unknown = set(entry) - {"enforcementLevel"} - set(known[name].config.schema())
        assert not unknown, f"{path.name}: {name} has unknown knobs {unknown} (the engine would ignore them)"
    given = parse_policy_config(path.read_text())
    for pack, rules in FAMILIES.items():
        infos = [
            PolicyInfo(r.name, "mandatory", {**r.config.schema(), "enforcementLevel": {"type": "string"}}, ()) for r in rules
        ]
        merged, errors = reconcile_policy_config(infos, None, given)
        assert errors == [], (pack, errors)
        levels = {merged[r.name].level for r in rules}
        assert levels <= ({"mandatory"} if stack_name == "prod" else {"advisory", "disabled"}), (pack, levels)


def test_reconcile_policy_config_follows_the_engine() -> None:
    infos = [PolicyInfo("a", "mandatory", {"n": {"type": "integer", "default": 1}, "enforcementLevel": {"type": "string"}}, ())]
    merged, errors = reconcile_policy_config(infos, None, {"all": PolicyConfig("advisory"), "a": PolicyConfig("", {"n": 2})})
    assert errors == [] and merged["a"] == PolicyConfig("advisory", {"n": 2}) and merged["all"].level == "advisory"
    # Unknown policy names pass through (to Configure, which needs their level).
    merged, _ = reconcile_policy_config(infos, None, {"other-pack-policy": PolicyConfig("", {"x": 1})})
    assert merged["other-pack-policy"] == PolicyConfig("", {"x": 1})
    _, errors = reconcile_policy_config(infos, None, {"a": PolicyConfig("", {"n": "two"})})
    assert errors and errors[0].startswith("a: n: ")
    assert parse_policy_config('{"a": {}}') == {}
    assert parse_policy_config(" ") is None


def test_policy_packs_only_assemble_rules() -> None:
    for pack, rules in FAMILIES.items():
        directory = REPO / "policies" / pack
        main = (directory / "__main__.py").read_text()
        assert "serve(" in main and "def " not in main, pack
        project = yaml.safe_load((directory / "PulumiPolicy.yaml").read_text())
        assert project["runtime"]["name"] == "python" and project["runtime"]["options"]["virtualenv"] == "../../.venv"
        assert "pulumi-policy>=1.20,<2" in (directory / "requirements.txt").read_text()
        assert rules, pack


def test_rules_are_stdlib_and_pyyaml_only() -> None:
    import ast

    allowed = {
        "__future__",
        "collections",
        "contextlib",
        "contextvars",
        "dataclasses",
        "fnmatch",
        "functools",
        "importlib",
        "ipaddress",
        "math",
        "pkgutil",
        "re",
        "types",
        "typing",
        "yaml",
    }
    for path in [*(REPO / "policies" / "rules").glob("*.py"), *(REPO / "policies" / "admission").glob("*.py")]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_rules_are_exported_per_family() -> None:
    assert sum(len(rules) for rules in FAMILIES.values()) == len(ALL_RULES)
    assert all(isinstance(rule, ResourceRule | StackRule) for rule in ALL_RULES)


def test_docs_cover_every_policy_and_knob() -> None:
    docs = (REPO / "docs" / "policies.md").read_text()
    for rule in ALL_RULES:
        assert f"### {rule.name}" in docs, rule.name
        section = docs.split(f"### {rule.name}", 1)[1].split("\n### ", 1)[0]
        for key, prop in rule.config.schema().items():
            default = json.dumps(prop["default"]).replace("|", "\\|")
            assert f"| `{key}` | `{default}` |" in section, f"{rule.name}: knob {key} (default {default}) is not documented"


def test_pulumi_policy_servicer_sees_markers_through_the_shim() -> None:
    """pulumi_policy's own Analyze path (in process): secrets stay marked, unknowns do not abort a policy."""
    import pulumi_policy.policy as policy_module
    from google.protobuf import struct_pb2
    from pulumi.runtime import proto
    from pulumi_policy import EnforcementLevel

    def analyze(rule: ResourceRule[Any], props: dict[str, Any], type_: str) -> list[Any]:
        servicer = policy_module._PolicyAnalyzerServicer("test-pack", "0.0.1", [to_policy(rule)], EnforcementLevel.MANDATORY)
        struct = struct_pb2.Struct()
        struct.update(props)
        request = proto.AnalyzeRequest(type=type_, urn=f"urn:pulumi:s::p::{type_}::x", name="x", properties=struct)
        return list(servicer.Analyze(request, None).diagnostics)

    secret_props = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns"},
        "stringData": {"a": secret("pw"), "b": secret(UNKNOWN_STRING), "c": "literal"},
    }
    original = policy_module.deserialize_properties
    try:
        install_secret_shim()
        diagnostics = analyze(security.SECRETS_NOT_PLAINTEXT, secret_props, "kubernetes:core/v1:Secret")
        assert [d.policyName for d in diagnostics] == ["secrets-not-plaintext"]
        assert "stringData.c" in diagnostics[0].message and "stringData.a" not in diagnostics[0].message
        unknown_image = deployment({**GOOD_CONTAINER, "image": UNKNOWN_STRING})
        wire = json.loads(json.dumps(unknown_image.props, default=str))
        wire["spec"]["template"]["spec"]["containers"][0]["image"] = UNKNOWN_STRING
        assert analyze(gitops.IMAGES_PINNED, wire, unknown_image.type) == []
    finally:
        policy_module.deserialize_properties = original
    # Without the shim pulumi_policy unwraps secrets (the rule sees "pw" as a literal) and an unknown
    # anywhere makes the whole policy "can't run during preview".
    known = {**secret_props, "stringData": {"a": secret("pw")}}
    diagnostics = analyze(security.SECRETS_NOT_PLAINTEXT, known, "kubernetes:core/v1:Secret")
    assert len(diagnostics) == 1 and "stringData.a" in diagnostics[0].message
    diagnostics = analyze(security.SECRETS_NOT_PLAINTEXT, secret_props, "kubernetes:core/v1:Secret")
    assert len(diagnostics) == 1 and "can't run policy" in diagnostics[0].message


def test_accessors_note_the_unknowns_they_answer_for() -> None:
    from policies.rules.access import as_int, get, items, mapping, text, unknown_reads

    with unknown_reads() as reads:
        assert mapping({"a": 1}) == {"a": 1} and text("x") == "x" and items([1]) == [1] and as_int(3) == 3
        assert get({"a": {"b": 2}}, "a", "b") == 2 and mapping(None) == {} and text(5) is None
    assert reads == []
    with unknown_reads() as reads:
        assert mapping(Unknown()) == {} and items(Unknown()) == [] and text(Unknown(secret=True)) is None
        assert get({"a": Unknown()}, "a", "b") is None
    assert reads == ["a mapping", "a list", "a string", "a mapping"]
    assert mapping(Unknown()) == {}  # outside a rule run nothing is collected


# --- least privilege (policies/rules/security/privilege.py, issue 39): each rule against the pattern of the old render --


def _role(rules: list[dict[str, Any]], kind: str = "Role", name: str = "hpcforge-key-export") -> ResourceView:
    return k8s(kind, name, "kube-system" if kind == "Role" else None, api="rbac.authorization.k8s.io/v1", rules=rules)


def test_rbac_least_privilege() -> None:
    rule = security.RBAC_LEAST_PRIVILEGE
    # The key export's Role before issue 39: get/list on every Secret of kube-system.
    old = _role([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}])
    assert [p.split(" may ")[1].split(":")[0] for p in rule(old)] == ["list Secrets", "get Secrets without resourceNames"]
    named = _role([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["sealed-secrets-key"]}])
    assert rule(named) == []
    # Multus's ClusterRole as its upstream manifest has it, refused; as hpcforge renders it, passing without exemption.
    wild = _role([{"apiGroups": ["k8s.cni.cncf.io"], "resources": ["*"], "verbs": ["*"]}], kind="ClusterRole", name="multus")
    assert len(rule(wild)) == 2
    assert rule(wild, security.RbacConfig(allow_list=(ObjectSelector(kind="ClusterRole", name="multus"),))) == []
    assert rule(_role(multus_cluster_role_rules(), kind="ClusterRole", name="multus")) == []
    everything = _role([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["watch"]}])
    assert any("may watch Secrets" in p for p in rule(everything))


def _project(name: str, spec: dict[str, Any]) -> ResourceView:
    return k8s("AppProject", name, "argocd", api="argoproj.io/v1alpha1", spec=spec)


def test_appproject_scoped() -> None:
    rule = security.APPPROJECT_SCOPED
    old = _project(
        "site-apps",
        {
            "destinations": [
                {"server": "https://kubernetes.default.svc", "namespace": "argocd"},
                {"server": "https://kubernetes.default.svc", "namespace": "monitoring"},
            ],
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
        },
    )
    problems = rule(old)
    assert len(problems) == 3
    assert "reaches Argo CD's own namespace" in problems[0] and "clusterResourceWhitelist" in problems[1]
    assert "namespaceResourceWhitelist is empty" in problems[2]
    new = _project(
        "site-apps",
        {
            "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "portal"}],
            "clusterResourceWhitelist": [],
            "namespaceResourceWhitelist": [{"group": "apps", "kind": "Deployment"}],
        },
    )
    assert rule(new) == []
    rbac = _project("x", {"namespaceResourceWhitelist": [{"group": "rbac.authorization.k8s.io", "kind": "RoleBinding"}]})
    assert "RBAC and Argo CD kinds" in rule(rbac)[0]
    projects = _project("x", {"namespaceResourceWhitelist": [{"group": "argoproj.io", "kind": "AppProject"}]})
    assert "RBAC and Argo CD kinds" in rule(projects)[0]
    root = _project("site-root", {"namespaceResourceWhitelist": [{"group": "argoproj.io", "kind": "Application"}]})
    assert rule(root) == []
    assert rule(_project("hpcforge-platform", {"clusterResourceWhitelist": [{"group": "*", "kind": "*"}]})) == []


def test_loadbalancer_source_ranges() -> None:
    rule = security.LOADBALANCER_SOURCE_RANGES
    # The slurmctld and login services before issue 39: a LoadBalancer on MetalLB with no source ranges.
    old = k8s(
        "Controller", "slurm", "slurm", api="slinky.slurm.net/v1beta1", spec={"service": {"spec": {"type": "LoadBalancer"}}}
    )
    assert "without loadBalancerSourceRanges" in rule(old)[0]
    ranged = {"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.20.0.0/23"]}
    assert rule(k8s("LoginSet", "login", "slurm", api="slinky.slurm.net/v1beta1", spec={"service": {"spec": ranged}})) == []
    everyone = k8s("Service", "dns", "site-dns", spec={"type": "LoadBalancer", "loadBalancerSourceRanges": ["0.0.0.0/0"]})
    assert "say `hpcforge.io/exposure: public`" in rule(everyone)[0]
    public = k8s("Service", "dns", "site-dns", spec={"type": "LoadBalancer"}, annotations={"hpcforge.io/exposure": "public"})
    assert rule(public) == []
    assert rule(k8s("Service", "x", "y", spec={"type": "ClusterIP"})) == []
    traefik = chart("traefik", "41.3.0", {"service": {"spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local"}}})
    assert "values.service" in rule(traefik)[0]


def test_user_code_policies_select_pods() -> None:
    rule = security.USER_CODE_POLICIES
    slurm_ns = namespace("slurm", {**LABELS, "hpcforge.io/user-code": "beside-services"})
    deny = network_policy("slurm")
    dns = network_policy(
        "slurm",
        "allow-egress-dns",
        {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 53, "protocol": "UDP"}]}]},
    )
    # The Slurm namespace before issue 39: every pod reaches the database.
    old = network_policy(
        "slurm",
        "allow-egress-database",
        {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"ports": [{"port": 3306}]}]},
    )
    found = rule(stack(slurm_ns, deny, dns, old))
    assert [v.message.split(":")[0] for v in found] == [old.display]
    narrowed = network_policy(
        "slurm",
        "allow-egress-database",
        {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "slurmdbd"}}, "egress": [{"ports": [{"port": 3306}]}]},
    )
    assert rule(stack(slurm_ns, deny, dns, narrowed)) == []
    assert rule(stack(namespace("team-a"), network_policy("team-a", "x", {"podSelector": {}, "ingress": [{}]}))) == []
    # Every pod may reach a pod it names (slurmctld), not a namespace or an address range.
    to_ctld = {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "slurmctld"}}}
    named = network_policy("slurm", "allow-egress-slurmctld", {"podSelector": {}, "egress": [{"to": [to_ctld]}]})
    assert rule(stack(slurm_ns, named)) == []
    ranged = network_policy("slurm", "x", {"podSelector": {}, "egress": [{"to": [to_ctld, {"ipBlock": {"cidr": "10.0.0.0/8"}}]}]})
    assert rule(stack(slurm_ns, ranged))


def test_apiserver_peers_bounded() -> None:
    rule = security.APISERVER_PEERS_BOUNDED
    old = network_policy(
        "slurm",
        "allow-egress-apiserver",
        {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}, {"port": 6443}]}],
        },
    )
    assert "reaches port 6443 at every address" in rule(old)[0]
    bounded = network_policy(
        "slurm",
        "allow-egress-apiserver",
        {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.10.0.10/32"}}], "ports": [{"port": 6443}]}]},
    )
    assert rule(bounded) == []
    pulls = network_policy(
        "slurm",
        "allow-egress-image-pulls",
        {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 443}]}]},
    )
    assert rule(pulls) == []
    anything = network_policy(
        "monitoring", "scrape", {"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}]}
    )
    assert rule(anything)
    assert rule(anything, security.ApiServerPeersConfig(allow_list=(ObjectSelector(namespace="monitoring"),))) == []


def test_images_by_digest() -> None:
    rule = security.IMAGES_BY_DIGEST
    old = deployment({"name": "c", "image": "ghcr.io/squarefactory/grendel:0.2.5"})
    assert "is not pinned by digest" in rule(old)[0]
    pinned = deployment({"name": "c", "image": "ghcr.io/squarefactory/grendel:0.2.5@sha256:" + "a" * 64})
    assert rule(pinned) == []
    assert rule(old, security.DigestConfig(exempt_images=("ghcr.io/squarefactory/grendel:*",))) == []
    assert rule(old, security.DigestConfig(exempt_images=("ghcr.io/other/*",)))


def test_images_by_digest_judges_the_job_images_an_object_names() -> None:
    """A ConfigMap whose Slurm jobs run images through Pyxis (no container of any object names them) names them in
    `hpcforge.io/job-images`: each is judged like a container's image."""
    rule = security.IMAGES_BY_DIGEST
    digest = "@sha256:" + "b" * 64

    def checks_map(images: str) -> ResourceView:
        return k8s("ConfigMap", "gpu-active-checks", "slurm", annotations={"hpcforge.io/job-images": images})

    found = rule(checks_map("nvcr.io/nvidia/pytorch:25.08-py3,nvcr.io/nvidia/cloud-native/dcgm:4.6.0" + digest))
    assert found == ["metadata.annotations[hpcforge.io/job-images]: 'nvcr.io/nvidia/pytorch:25.08-py3' is not pinned by digest."]
    assert rule(checks_map("nvcr.io/nvidia/pytorch:25.08-py3" + digest)) == []
    assert rule(checks_map("nvcr.io/nvidia/pytorch:25.08-py3"), security.DigestConfig(exempt_images=("nvcr.io/nvidia/*",))) == []


def test_prod_digest_exemptions_are_pins_without_a_digest() -> None:
    """prod.json's images-by-digest exemptions are exactly hpcforge's pins that have no digest yet (and the site's own
    build image): an exemption cannot outlive the digest being set, nor hide an image hpcforge does not pin."""
    from components.versions import ImagePin, Images

    entries = json.loads((CONFIG_DIR / "prod.json").read_text())["images-by-digest"]["exemptImages"]
    assert all(entry["reason"] for entry in entries)
    exempt = {entry["image"] for entry in entries}
    pins = [pin for pin in vars(Images).values() if isinstance(pin, ImagePin)]
    undigested = {f"{pin.repository}:{pin.tag}" for pin in pins if pin.digest is None}
    site_images = {"docker.io/spack/ubuntu-jammy:0.23.1"}  # Pulumi.prod.yaml hpcforge:devops.pipeline
    assert exempt - site_images <= undigested
    assert not {f"{pin.repository}:{pin.tag}" for pin in pins if pin.digest} & exempt

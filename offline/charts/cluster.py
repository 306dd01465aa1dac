"""The cluster the charts are rendered for (offline/charts/render.py): its Kubernetes version and the API
versions it serves (what `.Capabilities` answers: the built-in group/versions of that release, plus
the CRDs the stack installs), and which kinds are namespaced (built-in, or by their CRD's scope).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..program.stackfile import StackFile

# Built-in kinds that are not namespaced (Kubernetes 1.33 API discovery, `namespaced: false`).
CLUSTER_SCOPED_BUILTINS = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("", "ComponentStatus"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("storage.k8s.io", "VolumeAttributesClass"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("networking.k8s.io", "IngressClass"),
        ("networking.k8s.io", "IPAddress"),
        ("networking.k8s.io", "ServiceCIDR"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
        ("certificates.k8s.io", "ClusterTrustBundle"),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
        ("resource.k8s.io", "DeviceClass"),
        ("resource.k8s.io", "ResourceSlice"),
    }
)


def crd_api_versions(crds: Iterable[Mapping[str, Any]]) -> set[str]:
    """`group/version` and `group/version/Kind` of every served version of `crds`."""
    found: set[str] = set()
    for crd in crds:
        spec = crd.get("spec") or {}
        group, kind = spec.get("group"), (spec.get("names") or {}).get("kind")
        for version in spec.get("versions") or []:
            if version.get("served", True):
                found.add(f"{group}/{version['name']}")
                found.add(f"{group}/{version['name']}/{kind}")
    return found


def builtin_api_versions(kubernetes_version: str) -> set[str]:
    """What API discovery of a default cluster of that release lists: its GA group/versions and kinds
    (from kubernetes-validate's OpenAPI data for that release)."""
    from ..schema.kube import kubernetes_schema_version, kv_definitions

    found: set[str] = set()
    for gvk, definition in kv_definitions(kubernetes_schema_version(kubernetes_version))[1].items():
        if definition.startswith("io.k8s.apimachinery."):
            continue  # DeleteOptions, WatchEvent: listed under every group ever served, not resources
        if "alpha" in gvk.version or "beta" in gvk.version:
            # Off unless a feature gate enables them: alpha APIs always, beta APIs since 1.24 (KEP-3136),
            # and every beta API older than that is removed by 1.33. The OpenAPI data lists them all.
            continue
        found.add(gvk.api_version)
        found.add(f"{gvk.api_version}/{gvk.kind}")
    return found


def _kubernetes_section(stack_file: StackFile) -> dict[str, Any]:
    raw = stack_file.config.get("hpcforge:kubernetes")
    try:
        section = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        section = None
    return section if isinstance(section, dict) else {}


def extra_api_versions(stack_file: StackFile) -> list[str]:
    """`hpcforge:kubernetes.extraApiVersions` of a stack file (the program has validated it)."""
    extra = _kubernetes_section(stack_file).get("extraApiVersions") or []
    return [str(entry) for entry in extra] if isinstance(extra, list) else []


def kubernetes_version(stack_file: StackFile) -> str:
    """`hpcforge:kubernetes.version` of a stack file (the config model's default when it is not set)."""
    version = _kubernetes_section(stack_file).get("version")
    if version:
        return str(version)
    from components.ground.platform_core import KubernetesConfig

    return KubernetesConfig().version


def helm_kube_version(kubernetes_version: str) -> str:
    """`1.33` -> `v1.33.0` (what `--kube-version` takes)."""
    bare = kubernetes_version.lstrip("v")
    return f"v{bare}.0" if bare.count(".") == 1 else f"v{bare}"


def is_crd(document: Mapping[str, Any]) -> bool:
    return document.get("kind") == "CustomResourceDefinition" and str(document.get("apiVersion", "")).startswith(
        "apiextensions.k8s.io/"
    )


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def crd_scopes(crds: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    return {
        ((crd.get("spec") or {}).get("group", ""), ((crd.get("spec") or {}).get("names") or {}).get("kind", "")): (
            crd.get("spec") or {}
        ).get("scope", "Namespaced")
        for crd in crds
    }


def is_namespaced(document: Mapping[str, Any], scopes: Mapping[tuple[str, str], str]) -> bool:
    key = (_group(str(document.get("apiVersion", ""))), str(document.get("kind", "")))
    if key in CLUSTER_SCOPED_BUILTINS:
        return False
    return scopes.get(key, "Namespaced") == "Namespaced"

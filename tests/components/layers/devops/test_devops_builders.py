"""The DevOps layer's pure builders (components/layers/devops/objects.py), on the dev and prod stacks' config."""

from __future__ import annotations

import pytest

from components.layers.devops.config import DevOpsConfig
from components.layers.devops.objects import (
    REGISTRY_NAMESPACE,
    REGISTRY_PORT,
    REGISTRY_SELECTOR,
    SOFTWARE_CLAIMS,
    WORKFLOW_ACCOUNT,
    lane_namespace_allows,
    registry_claim_spec,
    registry_deployment_spec,
    registry_dns_names,
    registry_route_spec,
    registry_service_spec,
    software_claim_spec,
    software_volume_spec,
    workflow_template_spec,
    workflows_namespace_allows,
    workflows_values,
)
from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config


def _devops(stack: str) -> DevOpsConfig:
    cfg: PlatformConfig = load_config(raw_config(config_values(stack)))
    assert cfg.devops is not None
    return cfg.devops


@pytest.fixture(scope="module")
def prod() -> DevOpsConfig:
    return _devops("prod")


@pytest.fixture(scope="module")
def dev() -> DevOpsConfig:
    return _devops("dev")


def test_the_ui_gets_traefik_ingress_and_an_ingress_only_with_its_hostname(prod: DevOpsConfig, dev: DevOpsConfig) -> None:
    assert "allow-ingress-from-traefik" in [a.name for a in workflows_namespace_allows(prod)]
    assert "allow-ingress-from-traefik" not in [a.name for a in workflows_namespace_allows(dev)]
    server = workflows_values(prod, ingress_class="traefik", issuer="ca")["server"]
    assert server["ingress"]["hosts"] == ["workflows.hpc.example.org"]
    assert server["ingress"]["annotations"] == {"cert-manager.io/cluster-issuer": "ca"}
    assert "ingress" not in workflows_values(dev, ingress_class="traefik", issuer="ca")["server"]
    # hpcforge makes the workflow RBAC in the lane itself (the AppProject would refuse the chart's).
    assert workflows_values(dev, ingress_class="traefik", issuer="ca")["workflow"] == {
        "serviceAccount": {"create": False},
        "rbac": {"create": False},
    }


def test_the_lane_reaches_the_registry_only_when_there_is_one(prod: DevOpsConfig) -> None:
    names = [a.name for a in lane_namespace_allows(prod)]
    assert "allow-egress-registry" in names
    off = prod.model_copy(update={"registry": prod.registry.model_copy(update={"enabled": False})})
    assert "allow-egress-registry" not in [a.name for a in lane_namespace_allows(off)]


def test_each_software_claim_binds_its_own_retained_volume(prod: DevOpsConfig) -> None:
    for claim, mode, read_only in SOFTWARE_CLAIMS:
        volume = software_volume_spec(prod.software, namespace="devops", claim=claim, mode=mode, read_only=read_only)
        assert volume["claimRef"] == {"namespace": "devops", "name": claim}
        assert volume["persistentVolumeReclaimPolicy"] == "Retain"
        assert volume["nfs"] == {"server": prod.software.server, "path": prod.software.path, "readOnly": read_only}
        pvc = software_claim_spec(prod.software, volume=f"devops-{claim}", mode=mode)
        assert pvc["volumeName"] == f"devops-{claim}"
        assert pvc["accessModes"] == volume["accessModes"] == [mode]
    assert {read_only for _, _, read_only in SOFTWARE_CLAIMS} == {True, False}


def test_the_tests_run_after_the_build_on_the_read_only_claim(prod: DevOpsConfig) -> None:
    spec = workflow_template_spec(prod)
    assert spec["serviceAccountName"] == WORKFLOW_ACCOUNT
    tasks = spec["templates"][0]["dag"]["tasks"]
    assert [t.get("dependencies") for t in tasks] == [None, *(["build"] for _ in prod.pipeline.tests)]
    mounts = {t["name"]: t["container"]["volumeMounts"][0] for t in spec["templates"][1:]}
    assert mounts["build"] == {"name": "software-rw", "mountPath": "/software", "readOnly": False}
    assert all(m["readOnly"] and m["name"] == "software-ro" for name, m in mounts.items() if name != "build")


def test_registry_certificate_names_and_route(prod: DevOpsConfig, dev: DevOpsConfig) -> None:
    service = f"registry.{REGISTRY_NAMESPACE}.svc.cluster.local"
    assert registry_dns_names(prod.registry) == [service, f"registry.{REGISTRY_NAMESPACE}.svc", "registry.hpc.example.org"]
    assert registry_dns_names(dev.registry) == [service, f"registry.{REGISTRY_NAMESPACE}.svc"]
    route = registry_route_spec("registry.hpc.example.org")
    assert route["routes"][0]["match"] == "HostSNI(`registry.hpc.example.org`)"
    assert route["tls"] == {"passthrough": True}


def test_registry_claim_names_a_storage_class_only_when_given(dev: DevOpsConfig) -> None:
    assert "storageClassName" not in registry_claim_spec(dev.registry, None)
    assert registry_claim_spec(dev.registry, "fast")["storageClassName"] == "fast"
    assert registry_claim_spec(dev.registry, None)["resources"] == {"requests": {"storage": dev.registry.storage.size}}


def test_registry_deployment_and_service_select_the_same_pods() -> None:
    labels = {**REGISTRY_SELECTOR, "extra": "x"}
    deployment = registry_deployment_spec(labels)
    assert deployment["selector"]["matchLabels"] == registry_service_spec()["selector"] == REGISTRY_SELECTOR
    assert deployment["template"]["metadata"]["labels"] == labels
    # One pod on a ReadWriteOnce volume: the old pod goes before the new one starts.
    assert deployment["strategy"] == {"type": "Recreate"}
    container = deployment["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"name": "https", "containerPort": REGISTRY_PORT}]
    assert registry_service_spec()["ports"][0]["targetPort"] == REGISTRY_PORT

"""The provisioning layer's pure builders: join scripts, the config checksum, Grendel's claim, Deployment and API."""

from __future__ import annotations

import json

import pytest

from components.k8s.chunks import Assembly
from components.layers.provisioning.grendel import join_script_name
from components.layers.provisioning.objects import (
    HTTP_SERVICE,
    SELECTOR,
    config_checksum,
    data_claim_spec,
    deployment_spec,
    http_service_spec,
    ingress_spec,
    join_base_url,
    join_scripts,
)
from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.helpers import config_values, raw_config

ASSEMBLY = Assembly(
    container={"name": "assemble"},
    mounts=[{"name": "inventory-assembled", "mountPath": "/config"}],
    volumes=[{"name": "inventory-assembled", "emptyDir": {}}],
)


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_without_a_controller_address_no_host_joins_slurm(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    assert join_scripts(prod.provisioning, prod.slurm, None) == {}
    assert join_base_url(prod.provisioning, None) is None


def test_one_join_script_per_nodeset_with_joining_hosts(prod: PlatformConfig) -> None:
    cfg = prod.provisioning
    assert cfg is not None
    scripts = join_scripts(cfg, prod.slurm, "10.0.0.5")
    joining = {h.nodeset for h in cfg.hosts if h.nodeset and cfg.joins_slurm(h)}
    assert joining
    assert set(scripts) == {join_script_name(nodeset) for nodeset in joining}
    assert all("10.0.0.5" in script for script in scripts.values())
    assert join_base_url(cfg, "10.0.0.5") == f"http://{cfg.grendel_ip}/repo/hpcforge"


def test_the_checksum_follows_everything_grendel_reads() -> None:
    base = config_checksum("[]", "[]", {"a.sh": "x"}, "toml")
    assert base == config_checksum("[]", "[]", {"a.sh": "x"}, "toml")
    assert len(base) == 16
    changed = [
        config_checksum('[{"name": "cn1"}]', "[]", {"a.sh": "x"}, "toml"),
        config_checksum("[]", '[{"name": "img"}]', {"a.sh": "x"}, "toml"),
        config_checksum("[]", "[]", {"a.sh": "y"}, "toml"),
        config_checksum("[]", "[]", {"a.sh": "x"}, "toml with another secret"),
    ]
    assert base not in changed
    assert len(set(changed)) == len(changed)


def test_the_data_claim_names_a_storage_class_only_when_one_is_given(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    assert "storageClassName" not in data_claim_spec(prod.provisioning, None)
    spec = data_claim_spec(prod.provisioning, "fast")
    assert spec["storageClassName"] == "fast"
    assert spec["resources"]["requests"]["storage"] == prod.provisioning.storage.size


def test_grendel_runs_on_the_provisioning_node_with_its_static_address(prod: PlatformConfig) -> None:
    cfg = prod.provisioning
    assert cfg is not None
    spec = deployment_spec(cfg, image="grendel:1", labels={"x": "y"}, checksum="abc", assemble=ASSEMBLY, with_join_scripts=False)
    assert spec["strategy"] == {"type": "Recreate"}
    template = spec["template"]
    (network,) = json.loads(template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    assert network == {"name": cfg.attachment, "namespace": cfg.namespace, "ips": [cfg.address], "interface": "prov0"}
    assert template["metadata"]["annotations"]["hpcforge.io/config-checksum"] == "abc"
    assert template["spec"]["nodeSelector"] == {"kubernetes.io/hostname": cfg.node}
    (container,) = template["spec"]["containers"]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["NET_ADMIN"]}
    assert template["spec"]["initContainers"] == [ASSEMBLY.container]
    assert ASSEMBLY.mounts[0] in container["volumeMounts"]


def test_the_join_scripts_are_mounted_only_when_there_are_some(prod: PlatformConfig) -> None:
    cfg = prod.provisioning
    assert cfg is not None

    def names(with_join_scripts: bool) -> tuple[set[str], set[str]]:
        spec = deployment_spec(cfg, image="g", labels={}, checksum="", assemble=ASSEMBLY, with_join_scripts=with_join_scripts)
        pod = spec["template"]["spec"]
        return {v["name"] for v in pod["volumes"]}, {m["name"] for m in pod["containers"][0]["volumeMounts"]}

    assert names(False) == ({"data", "config", "run", "inventory-assembled"},) * 2
    volumes, mounts = names(True)
    assert "join-scripts" in volumes and "join-scripts" in mounts


def test_the_api_ingress_routes_the_host_to_the_http_service() -> None:
    assert http_service_spec()["selector"] == SELECTOR
    spec = ingress_spec("grendel.example.org", "traefik")
    assert spec["ingressClassName"] == "traefik"
    assert spec["tls"] == [{"hosts": ["grendel.example.org"], "secretName": "grendel-tls"}]
    (rule,) = spec["rules"]
    assert rule["host"] == "grendel.example.org"
    assert rule["http"]["paths"][0]["backend"]["service"]["name"] == HTTP_SERVICE

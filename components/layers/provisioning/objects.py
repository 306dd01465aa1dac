"""The provisioning layer's objects as pure functions: its namespace's allows, the join scripts served to bare-metal
hosts, Grendel's data claim and Deployment (with the checksum that restarts it when its configuration changes), and
the HTTP Service and Ingress of its API."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...k8s.chunks import Assembly
from ...k8s.resources import Allow, Port, container_resources, ingress_from_namespaces
from ..slurm.config import SlurmConfig
from ..slurm.face import render_join_script
from ..storage.config import NfsExport
from ..storage.face import host_mount_commands
from .config import DATA_DIR, REPO_DIR, ProvisioningConfig
from .grendel import JOIN_DIR, join_script_name

APP = "grendel"
COMPONENT = "provisioning"
CONFIG_SECRET = "grendel-config"
DATA_CLAIM = "grendel-data"
JOIN_SCRIPTS_MAP = "grendel-join-scripts"
HTTP_SERVICE = f"{APP}-http"
TLS_SECRET = f"{APP}-tls"
SELECTOR = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": COMPONENT}
CHECKSUM_ANNOTATION = "hpcforge.io/config-checksum"


def grendel_namespace_allows(cfg: ProvisioningConfig) -> list[Allow]:
    """Grendel's namespace: its HTTP API from Traefik when the API is exposed (nothing else: DHCP, PXE and TFTP reach
    it on the provisioning network, outside the pod network)."""
    return [ingress_from_namespaces("allow-ingress-http", ["traefik"], Port(80))] if cfg.api.expose else []


def join_base_url(cfg: ProvisioningConfig, controller_address: str | None) -> str | None:
    """Where hosts fetch their join scripts (Grendel's HTTP repository); none without a Slurm controller address."""
    return f"http://{cfg.grendel_ip}/repo/{JOIN_DIR}" if controller_address else None


def join_scripts(
    cfg: ProvisioningConfig, slurm: SlurmConfig, controller_address: str | None, host_mounts: Sequence[NfsExport] = ()
) -> dict[str, str]:
    """One join script per nodeset that has hosts joining Slurm, by file name; none without a controller address."""
    if not controller_address:
        return {}
    joining = sorted({h.nodeset for h in cfg.joining_hosts() if h.nodeset})
    mounts = host_mount_commands(host_mounts)
    return {
        join_script_name(nodeset): render_join_script(slurm, nodeset, controller_address, hosts=cfg.hosts, mounts=mounts)
        for nodeset in joining
    }


def config_checksum(hosts_json: str, images_json: str, scripts: Mapping[str, str], grendel_toml: str) -> str:
    """Of everything Grendel reads at start (inventory, join scripts, grendel.toml with its secrets): a pod
    annotation, so that the pod restarts when any of it changes."""
    inventory = hashlib.sha256((hosts_json + images_json + json.dumps(scripts, sort_keys=True)).encode())
    return hashlib.sha256(inventory.digest() + grendel_toml.encode()).hexdigest()[:16]


def data_claim_spec(cfg: ProvisioningConfig, storage_class: str | None) -> dict[str, Any]:
    """The volume of Grendel's images and database."""
    return {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": cfg.storage.size}},
        **({"storageClassName": storage_class} if storage_class else {}),
    }


def _mounts_and_volumes(assemble: Assembly, *, with_join_scripts: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    mounts: list[dict[str, Any]] = [
        {"name": "data", "mountPath": DATA_DIR},
        {"name": "config", "mountPath": "/secret", "readOnly": True},
        {"name": "run", "mountPath": "/var/run/grendel"},
        *assemble.mounts,
    ]
    volumes: list[dict[str, Any]] = [
        {"name": "data", "persistentVolumeClaim": {"claimName": DATA_CLAIM}},
        {"name": "config", "secret": {"secretName": CONFIG_SECRET}},
        {"name": "run", "emptyDir": {}},
        *assemble.volumes,
    ]
    if with_join_scripts:
        mounts.append({"name": "join-scripts", "mountPath": f"{REPO_DIR}/{JOIN_DIR}", "readOnly": True})
        volumes.append({"name": "join-scripts", "configMap": {"name": JOIN_SCRIPTS_MAP}})
    return mounts, volumes


def _grendel_container(image: str, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": APP,
        "image": image,
        "args": [
            "--verbose",
            "serve",
            "-c",
            "/secret/grendel.toml",
            "--hosts",
            "/config/hosts.json",
            "--images",
            "/config/images.json",
        ],
        "ports": [
            {"name": "dhcp", "containerPort": 67, "protocol": "UDP"},
            {"name": "dns", "containerPort": 53, "protocol": "UDP"},
            {"name": "tftp", "containerPort": 69, "protocol": "UDP"},
            {"name": "http", "containerPort": 80, "protocol": "TCP"},
            {"name": "pxe", "containerPort": 4011, "protocol": "UDP"},
        ],
        "resources": container_resources("100m", "256Mi", "1Gi"),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": ["NET_ADMIN"]},
        },
        "volumeMounts": mounts,
    }


def deployment_spec(
    cfg: ProvisioningConfig,
    *,
    image: str,
    labels: Mapping[str, str],
    checksum: Any,
    assemble: Assembly,
    with_join_scripts: bool,
) -> dict[str, Any]:
    """Grendel on the node with the provisioning NIC, with an IPVLAN interface `prov0` at the configured address
    (Multus attachment `cfg.attachment`) and NET_ADMIN as its only capability. `checksum`: `config_checksum`."""
    networks = [{"name": cfg.attachment, "namespace": cfg.namespace, "ips": [cfg.address], "interface": "prov0"}]
    mounts, volumes = _mounts_and_volumes(assemble, with_join_scripts=with_join_scripts)
    return {
        "replicas": 1,
        # One Grendel per provisioning network: the old pod must release the address first.
        "strategy": {"type": "Recreate"},
        "selector": {"matchLabels": SELECTOR},
        "template": {
            "metadata": {
                "labels": labels,
                "annotations": {"k8s.v1.cni.cncf.io/networks": json.dumps(networks), CHECKSUM_ANNOTATION: checksum},
            },
            "spec": {
                "nodeSelector": {"kubernetes.io/hostname": cfg.node},
                "automountServiceAccountToken": False,
                "securityContext": {
                    "seccompProfile": {"type": "RuntimeDefault"},
                    # Bind DHCP/DNS/TFTP/HTTP ports without NET_BIND_SERVICE (a namespaced, safe sysctl).
                    "sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "0"}],
                },
                "initContainers": [assemble.container],
                "containers": [_grendel_container(image, mounts)],
                "volumes": volumes,
            },
        },
    }


def http_service_spec() -> dict[str, Any]:
    return {"selector": SELECTOR, "ports": [{"name": "http", "port": 80, "targetPort": 80}]}


def ingress_spec(hostname: str, ingress_class: str) -> dict[str, Any]:
    """Grendel's HTTP API at `hostname`, TLS ending at the ingress with the certificate in `grendel-tls`."""
    return {
        "ingressClassName": ingress_class,
        "tls": [{"hosts": [hostname], "secretName": TLS_SECRET}],
        "rules": [
            {
                "host": hostname,
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": HTTP_SERVICE, "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    }


__all__ = [
    "APP",
    "SELECTOR",
    "config_checksum",
    "data_claim_spec",
    "deployment_spec",
    "http_service_spec",
    "ingress_spec",
    "join_base_url",
    "join_scripts",
]

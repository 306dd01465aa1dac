"""The directory layer's objects as pure functions: its namespace's allows, 389ds' Service and StatefulSet, the
bootstrap Job that loads the site's users and groups (scripts/directory/ldap_sync.py), and the Traefik route that
publishes LDAPS."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from ...chart_security import RESTRICTED_CONTAINER_SECURITY
from ...k8s.chunks import Assembly
from ...k8s.resources import Allow, Port, container_resources, ingress_from_namespaces
from .config import DirectoryConfig

NAMESPACE = "directory"
APP = "dirsrv"
COMPONENT = "directory"
LDAP_PORT = 3389
LDAPS_PORT = 3636
TLS_SECRET = "dirsrv-tls"
DM_SECRET = "dirsrv-dm-password"
BIND_SECRET = "dirsrv-sssd-bind"
BOOTSTRAP_MAP = "dirsrv-bootstrap"
LDAPS_ENTRYPOINT = "ldaps"
SERVICE_HOST = f"{APP}.{NAMESPACE}.svc.cluster.local"
LDAPS_URI = f"ldaps://{SERVICE_HOST}:{LDAPS_PORT}"
SELECTOR = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": COMPONENT}
BIND_CHECKSUM_ANNOTATION = "hpcforge.io/bind-password-checksum"


def directory_namespace_allows(clients: Sequence[str]) -> list[Allow]:
    """The directory's namespace: LDAP and LDAPS from the clients' namespaces (and Traefik's when LDAPS is published)."""
    return [ingress_from_namespaces("allow-ingress-ldap", clients, Port(LDAP_PORT), Port(LDAPS_PORT))]


def _password_env(name: str, secret: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": "password"}}}


def dns_names(expose_hostname: str | None) -> list[str]:
    """The server certificate's names: the Service's, and the published host name when LDAPS is exposed."""
    return [SERVICE_HOST, f"{APP}.{NAMESPACE}.svc", APP, *([expose_hostname] if expose_hostname else [])]


def service_spec() -> dict[str, Any]:
    return {
        "selector": SELECTOR,
        "ports": [
            {"name": "ldap", "port": LDAP_PORT, "targetPort": LDAP_PORT},
            {"name": "ldaps", "port": LDAPS_PORT, "targetPort": LDAPS_PORT},
        ],
    }


def _server_container(cfg: DirectoryConfig, image: str) -> dict[str, Any]:
    return {
        "name": "dirsrv",
        "image": image,
        "env": [
            _password_env("DS_DM_PASSWORD", DM_SECRET),
            {"name": "DS_SUFFIX_NAME", "value": cfg.suffix},
            {"name": "DS_STARTUP_TIMEOUT", "value": "120"},
        ],
        "ports": [
            {"name": "ldap", "containerPort": LDAP_PORT},
            {"name": "ldaps", "containerPort": LDAPS_PORT},
        ],
        "readinessProbe": {
            "exec": {"command": ["/usr/lib/dirsrv/dscontainer", "-H"]},
            "periodSeconds": 15,
            "timeoutSeconds": 10,
        },
        "livenessProbe": {"tcpSocket": {"port": LDAP_PORT}, "initialDelaySeconds": 60, "periodSeconds": 30},
        "resources": container_resources("250m", "512Mi", "2Gi"),
        # The 389ds image starts as root to fix up /data before dropping to the dirsrv user.
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": ["CHOWN", "SETUID", "SETGID", "FOWNER", "DAC_OVERRIDE"]},
        },
        "volumeMounts": [
            {"name": "data", "mountPath": "/data"},
            # dscontainer imports these at start: server.crt/key and ca/*.crt.
            {"name": "tls", "mountPath": "/data/tls", "readOnly": True},
        ],
    }


def server_spec(
    cfg: DirectoryConfig,
    *,
    image: str,
    labels: Mapping[str, str],
    storage_class: str | None,
    volume_annotations: Mapping[str, str],
) -> dict[str, Any]:
    """389ds as a one-replica StatefulSet whose data claim is kept when the set is deleted or scaled down."""
    tls_items = [
        {"key": "tls.crt", "path": "server.crt"},
        {"key": "tls.key", "path": "server.key"},
        {"key": "ca.crt", "path": "ca/ca.crt"},
    ]
    return {
        "serviceName": APP,
        "replicas": 1,
        "selector": {"matchLabels": SELECTOR},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "automountServiceAccountToken": False,
                "securityContext": {"fsGroup": 389, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [_server_container(cfg, image)],
                "volumes": [{"name": "tls", "secret": {"secretName": TLS_SECRET, "items": tls_items}}],
            },
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data", "labels": labels, "annotations": volume_annotations},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": cfg.storage.size}},
                    **({"storageClassName": storage_class} if storage_class else {}),
                },
            }
        ],
    }


def bootstrap_job_name(ldif: str, script: str) -> str:
    """A Job's pod template is immutable: the Job is named after its content, so a changed LDIF or script runs a
    new Job (replacing the old one), and an unchanged one is left alone."""
    return f"{BOOTSTRAP_MAP}-{hashlib.sha256((ldif + script).encode()).hexdigest()[:10]}"


def bind_checksum(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()[:16]


def _bootstrap_container(image: str, assemble: Assembly) -> dict[str, Any]:
    return {
        "name": "bootstrap",
        "image": image,
        "command": [
            "python3",
            "/bootstrap/ldap_sync.py",
            "--uri",
            LDAPS_URI,
            "--ca-file",
            "/tls/ca.crt",
            "--ldif",
            "/ldif/bootstrap.ldif",
        ],
        "env": [
            _password_env("LDAP_BIND_PASSWORD", DM_SECRET),
            _password_env("SSSD_BIND_PASSWORD", BIND_SECRET),
        ],
        "resources": container_resources("50m", "64Mi", "256Mi"),
        "securityContext": {**RESTRICTED_CONTAINER_SECURITY, "readOnlyRootFilesystem": True},
        "volumeMounts": [
            {"name": "bootstrap", "mountPath": "/bootstrap", "readOnly": True},
            {"name": "tls", "mountPath": "/tls", "readOnly": True},
            *assemble.mounts,
        ],
    }


def bootstrap_job_spec(*, image: str, labels: Mapping[str, str], bind_checksum: Any, assemble: Assembly) -> dict[str, Any]:
    """The Job that loads the LDIF (assembled from its chunks into /ldif) as the Directory Manager and sets
    the SSSD bind password. `bind_checksum` (of that password) is a pod annotation: rotating the password
    changes the pod template, so the Job is replaced and runs again."""
    return {
        "backoffLimit": 10,
        # No ttlSecondsAfterFinished: a Job that deleted itself would show as drift on every
        # `pulumi preview --refresh --expect-no-changes` a day later.
        "template": {
            "metadata": {"labels": labels, "annotations": {BIND_CHECKSUM_ANNOTATION: bind_checksum}},
            "spec": {
                "restartPolicy": "OnFailure",
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 389,
                    "runAsGroup": 389,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "initContainers": [assemble.container],
                "containers": [_bootstrap_container(image, assemble)],
                "volumes": [
                    {"name": "bootstrap", "configMap": {"name": BOOTSTRAP_MAP}},
                    {"name": "tls", "secret": {"secretName": TLS_SECRET, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    *assemble.volumes,
                ],
            },
        },
    }


def ldaps_route_spec(hostname: str) -> dict[str, Any]:
    """A Traefik IngressRouteTCP on the `ldaps` entry point: TLS passes through to 389ds, which ends it with
    its cert-manager certificate."""
    return {
        "entryPoints": [LDAPS_ENTRYPOINT],
        "routes": [{"match": f"HostSNI(`{hostname}`)", "services": [{"name": APP, "port": LDAPS_PORT}]}],
        "tls": {"passthrough": True},
    }


__all__ = [
    "APP",
    "LDAPS_PORT",
    "LDAPS_URI",
    "LDAP_PORT",
    "NAMESPACE",
    "SELECTOR",
    "TLS_SECRET",
    "bind_checksum",
    "bootstrap_job_name",
    "bootstrap_job_spec",
    "dns_names",
    "ldaps_route_spec",
    "server_spec",
    "service_spec",
]

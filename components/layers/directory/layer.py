"""Directory layer: 389 Directory Server with LDAPS from the internal CA, the site's POSIX users
and groups loaded by an idempotent bootstrap Job, and a read-only bind account for SSSD."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from ...config.inventory_ref import digest_annotations
from ...context import DeployContext, Stateful
from ...k8s.certificates import certificate
from ...k8s.chunks import chunked_file
from ...k8s.generated import generated_secret
from ...k8s.resources import Namespace, Port, config_map, container_resources, ingress_from_namespaces
from ...versions import Images
from .config import DirectoryConfig
from .ldif import render_directory_ldif, sssd_bind_dn

NAMESPACE = "directory"
APP = "dirsrv"
LDAP_PORT = 3389
LDAPS_PORT = 3636
TLS_SECRET = "dirsrv-tls"
SYNC_SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "directory" / "ldap_sync.py"
LDAPS_ENTRYPOINT = "ldaps"


@dataclass(frozen=True)
class DirectoryArgs:
    ctx: DeployContext
    config: DirectoryConfig
    issuer: str
    certificate_duration: str
    renew_before: str
    client_namespaces: Sequence[str]
    """Namespaces whose pods may query the directory (login and compute nodes)."""
    expose_hostname: str | None = None
    """When set, LDAPS is published through Traefik's `ldaps` entry point for this name."""
    depends_on: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class DirectoryEndpoint:
    """What the Slurm layer (SSSD on login nodes) needs."""

    ldap_uri: str
    base_dn: str
    bind_dn: str
    bind_password: pulumi.Output[str]
    bind_password_secret: str
    """Secret (in the directory namespace) holding the bind password under key `password`."""
    ca_issuer: str
    """ClusterIssuer whose CA signs the server certificate: issue any certificate from it to get ca.crt."""


class Directory(pulumi.ComponentResource):
    endpoint: DirectoryEndpoint
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: DirectoryArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:directory:Directory", name, None, opts)
        ctx, cfg = args.ctx, args.config
        clients = [*args.client_namespaces, *(["traefik"] if args.expose_hostname else [])]
        namespace = Namespace(
            ctx,
            NAMESPACE,
            component="directory",
            parent=self,
            # The 389ds image starts as root to fix up /data before dropping to the dirsrv user.
            pod_security="baseline",
            allows=[ingress_from_namespaces("allow-ingress-ldap", clients, Port(LDAP_PORT), Port(LDAPS_PORT))],
            depends_on=args.depends_on,
        )
        dm = generated_secret(
            ctx,
            "dirsrv-dm",
            "dirsrv-dm-password",
            NAMESPACE,
            "password",
            length=32,
            component="directory",
            parent=self,
            app=APP,
            depends_on=namespace.ready,
        )
        bind = generated_secret(
            ctx,
            "dirsrv-sssd-bind",
            "dirsrv-sssd-bind",
            NAMESPACE,
            "password",
            length=32,
            component="directory",
            parent=self,
            app=APP,
            depends_on=namespace.ready,
        )
        dm_secret, bind_secret = dm.secret, bind.secret
        service_host = f"{APP}.{NAMESPACE}.svc.cluster.local"
        dns_names = [service_host, f"{APP}.{NAMESPACE}.svc", APP, *([args.expose_hostname] if args.expose_hostname else [])]
        tls = certificate(
            ctx,
            self,
            name=TLS_SECRET,
            namespace=NAMESPACE,
            dns_names=dns_names,
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
            component="directory",
            app=APP,
            depends_on=namespace.ready,
        )
        labels = ctx.labels(APP, "directory")
        selector = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "directory"}
        service = k8s.core.v1.Service(
            f"{NAMESPACE}/{APP}",
            metadata=ctx.meta(APP, "directory", NAMESPACE),
            spec={
                "selector": selector,
                "ports": [
                    {"name": "ldap", "port": LDAP_PORT, "targetPort": LDAP_PORT},
                    {"name": "ldaps", "port": LDAPS_PORT, "targetPort": LDAPS_PORT},
                ],
            },
            opts=ctx.opts(self, depends_on=namespace.ready),
        )
        storage_class = ctx.storage_class_for(cfg.storage.storage_class)
        server = k8s.apps.v1.StatefulSet(
            f"{NAMESPACE}/{APP}",
            metadata=ctx.meta(APP, "directory", NAMESPACE, stateful=Stateful.DIRECTORY),
            spec={
                "serviceName": APP,
                "replicas": 1,
                "selector": {"matchLabels": selector},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "automountServiceAccountToken": False,
                        "securityContext": {"fsGroup": 389, "seccompProfile": {"type": "RuntimeDefault"}},
                        "containers": [
                            {
                                "name": "dirsrv",
                                "image": Images.DIRSRV.ref,
                                "env": [
                                    {
                                        "name": "DS_DM_PASSWORD",
                                        "valueFrom": {"secretKeyRef": {"name": "dirsrv-dm-password", "key": "password"}},
                                    },
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
                                "livenessProbe": {
                                    "tcpSocket": {"port": LDAP_PORT},
                                    "initialDelaySeconds": 60,
                                    "periodSeconds": 30,
                                },
                                "resources": container_resources("250m", "512Mi", "2Gi"),
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {
                                        "drop": ["ALL"],
                                        "add": ["CHOWN", "SETUID", "SETGID", "FOWNER", "DAC_OVERRIDE"],
                                    },
                                },
                                "volumeMounts": [
                                    {"name": "data", "mountPath": "/data"},
                                    # dscontainer imports these at start: server.crt/key and ca/*.crt.
                                    {"name": "tls", "mountPath": "/data/tls", "readOnly": True},
                                ],
                            }
                        ],
                        "volumes": [
                            {
                                "name": "tls",
                                "secret": {
                                    "secretName": TLS_SECRET,
                                    "items": [
                                        {"key": "tls.crt", "path": "server.crt"},
                                        {"key": "tls.key", "path": "server.key"},
                                        {"key": "ca.crt", "path": "ca/ca.crt"},
                                    ],
                                },
                            }
                        ],
                    },
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {
                            "name": "data",
                            "labels": labels,
                            "annotations": ctx.protection_annotations(Stateful.VOLUME),
                        },
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": cfg.storage.size}},
                            **({"storageClassName": storage_class} if storage_class else {}),
                        },
                    }
                ],
            },
            opts=ctx.opts(self, depends_on=[dm_secret, tls, service], stateful=Stateful.DIRECTORY),
        )

        bind_checksum: pulumi.Output[str] = bind.value.apply(lambda value: hashlib.sha256(value.encode()).hexdigest()[:16])
        ldif = render_directory_ldif(cfg)
        script = SYNC_SCRIPT.read_text()
        sync_script = config_map(
            ctx,
            "dirsrv-bootstrap",
            NAMESPACE,
            {"ldap_sync.py": script},
            component="directory",
            parent=self,
            app=APP,
            depends_on=namespace.ready,
        )
        # The LDIF grows with the users (10,000 users is ~4 MB): gzip-chunked under the 1 MiB limit.
        ldif_maps, assemble = chunked_file(
            ctx,
            self,
            NAMESPACE,
            "dirsrv-ldif",
            {"bootstrap.ldif": ldif},
            component="directory",
            app=APP,
            target_dir="/ldif",
            depends_on=namespace.ready,
            annotations=digest_annotations(cfg.inventory),
        )
        # A Job's pod template is immutable: name it after its content, so a changed LDIF or script
        # runs a new Job (replacing the old one), and an unchanged one is left alone.
        digest = hashlib.sha256((ldif + script).encode()).hexdigest()[:10]
        job = k8s.batch.v1.Job(
            f"{NAMESPACE}/dirsrv-bootstrap",
            metadata=ctx.meta(f"dirsrv-bootstrap-{digest}", "directory", NAMESPACE, app=APP),
            spec={
                "backoffLimit": 10,
                # No ttlSecondsAfterFinished: a Job that deleted itself would show as drift on every
                # `pulumi preview --refresh --expect-no-changes` a day later.
                "template": {
                    "metadata": {
                        "labels": ctx.labels(APP, "directory-bootstrap"),
                        # Rotating the bind password must re-run the bootstrap (which sets it in the
                        # directory): the pod template changes, so the Job is replaced.
                        "annotations": {"hpcforge.io/bind-password-checksum": bind_checksum},
                    },
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
                        "containers": [
                            {
                                "name": "bootstrap",
                                "image": Images.DIRSRV.ref,
                                "command": [
                                    "python3",
                                    "/bootstrap/ldap_sync.py",
                                    "--uri",
                                    f"ldaps://{service_host}:{LDAPS_PORT}",
                                    "--ca-file",
                                    "/tls/ca.crt",
                                    "--ldif",
                                    "/ldif/bootstrap.ldif",
                                ],
                                "env": [
                                    {
                                        "name": "LDAP_BIND_PASSWORD",
                                        "valueFrom": {"secretKeyRef": {"name": "dirsrv-dm-password", "key": "password"}},
                                    },
                                    {
                                        "name": "SSSD_BIND_PASSWORD",
                                        "valueFrom": {"secretKeyRef": {"name": "dirsrv-sssd-bind", "key": "password"}},
                                    },
                                ],
                                "resources": container_resources("50m", "64Mi", "256Mi"),
                                "securityContext": {
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]},
                                    "readOnlyRootFilesystem": True,
                                },
                                "volumeMounts": [
                                    {"name": "bootstrap", "mountPath": "/bootstrap", "readOnly": True},
                                    {"name": "tls", "mountPath": "/tls", "readOnly": True},
                                    *assemble.mounts,
                                ],
                            }
                        ],
                        "volumes": [
                            {"name": "bootstrap", "configMap": {"name": "dirsrv-bootstrap"}},
                            {"name": "tls", "secret": {"secretName": TLS_SECRET, "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                            *assemble.volumes,
                        ],
                    },
                },
            },
            opts=ctx.opts(self, depends_on=[server, sync_script, *ldif_maps, bind_secret], delete_before_replace=True),
        )
        objects: list[pulumi.Resource] = [server, service, job]
        if args.expose_hostname:
            objects.append(
                k8s.apiextensions.CustomResource(
                    f"{NAMESPACE}/dirsrv-ldaps",
                    api_version="traefik.io/v1alpha1",
                    kind="IngressRouteTCP",
                    metadata=ctx.meta("dirsrv-ldaps", "directory", NAMESPACE, app=APP),
                    spec={
                        "entryPoints": [LDAPS_ENTRYPOINT],
                        "routes": [
                            {"match": f"HostSNI(`{args.expose_hostname}`)", "services": [{"name": APP, "port": LDAPS_PORT}]}
                        ],
                        # TLS ends at 389ds itself, with the cert-manager certificate `dirsrv-tls`.
                        "tls": {"passthrough": True},
                    },
                    opts=ctx.opts(self, depends_on=[service, tls]),
                )
            )
        self.endpoint = DirectoryEndpoint(
            ldap_uri=f"ldaps://{service_host}:{LDAPS_PORT}",
            base_dn=cfg.suffix,
            bind_dn=sssd_bind_dn(cfg.suffix),
            bind_password=bind.value,
            bind_password_secret="dirsrv-sssd-bind",
            ca_issuer=args.issuer,
        )
        self.ready = objects
        self.register_outputs({"ldapUri": self.endpoint.ldap_uri, "baseDn": cfg.suffix, "bindDn": self.endpoint.bind_dn})

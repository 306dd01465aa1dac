"""Provisioning layer: Grendel (DHCP, PXE, TFTP, DNS, HTTP) on the provisioning network.

Grendel runs on the Kubernetes node that has the provisioning NIC, with an IPVLAN interface and
a static address on that network (Multus), `NET_ADMIN` as its only capability, and a volume for
its images and database. grendel.toml (with its API secret and the root password hash) is a
Secret; the host inventory and boot images are gzip-chunked ConfigMaps, so a 10,000-host site
never produces an object over the API server's 1 MiB limit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ...config.inventory_ref import digest_annotations
from ...context import DeployContext, Stateful
from ...k8s.certificates import certificate
from ...k8s.chunks import chunked_file
from ...k8s.generated import generated_password
from ...k8s.resources import Namespace, Port, config_map, container_resources, ingress_from_namespaces, secret
from ...versions import Images
from ..slurm.config import SlurmConfig
from ..storage.config import NfsExport
from ..storage.objects import host_mount_commands
from .config import ProvisioningConfig
from .grendel import (
    JOIN_DIR,
    REPO_DIR,
    GrendelSecrets,
    join_script_name,
    render_grendel_toml,
    render_inventory,
    render_join_script,
)

APP = "grendel"


@dataclass(frozen=True)
class ProvisioningArgs:
    ctx: DeployContext
    config: ProvisioningConfig
    slurm: SlurmConfig
    domain: str
    controller_address: str | None
    """slurmctld's LoadBalancer address, for bare-metal hosts joining Slurm."""
    ingress_class: str
    issuer: str
    certificate_duration: str
    renew_before: str
    host_mounts: Sequence[NfsExport] = ()
    """NFS exports the joining hosts mount before slurmd starts (the same trees as the pods)."""
    depends_on: Sequence[pulumi.Resource] = ()
    issuer_ready: Sequence[pulumi.Resource] = ()
    """cert-manager and the ClusterIssuer `issuer` (Certificates.ready): the API certificate waits for them."""


class Provisioning(pulumi.ComponentResource):
    address: str
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ProvisioningArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:provisioning:Provisioning", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = cfg.namespace
        namespace = Namespace(
            ctx,
            ns,
            component="provisioning",
            parent=self,
            # NET_ADMIN is outside `baseline`'s capability set; the pod adds nothing else.
            pod_security="privileged",
            allows=[ingress_from_namespaces("allow-ingress-http", ["traefik"], Port(80))] if cfg.api.expose else [],
            depends_on=args.depends_on,
        )
        api_secret = generated_password(ctx, "grendel-api", length=48, parent=self)
        root_password = generated_password(ctx, "grendel-root", length=24, parent=self)
        toml = pulumi.Output.all(api_secret.result, root_password.bcrypt_hash).apply(
            lambda values: render_grendel_toml(
                cfg, args.domain, GrendelSecrets(api_secret=values[0], root_password_hash=values[1])
            )
        )
        config_secret = secret(
            ctx,
            "grendel-config",
            ns,
            {"grendel.toml": toml},
            component="provisioning",
            parent=self,
            app=APP,
            depends_on=namespace.ready,
        )
        ip = cfg.grendel_ip
        join_base = f"http://{ip}/repo/{JOIN_DIR}" if args.controller_address else None
        hosts_json, images_json = render_inventory(cfg, args.domain, join_base)
        inventory_maps, assemble = chunked_file(
            ctx,
            self,
            ns,
            "grendel-inventory",
            {"hosts.json": hosts_json, "images.json": images_json},
            component="provisioning",
            app=APP,
            target_dir="/config",
            depends_on=namespace.ready,
            annotations=digest_annotations(cfg.inventory),
        )
        joining = sorted({h.nodeset for h in cfg.hosts if h.nodeset and cfg.joins_slurm(h)})
        join_scripts: dict[str, str] = {}
        if args.controller_address:
            join_scripts = {
                join_script_name(ns_name): render_join_script(
                    args.slurm, ns_name, args.controller_address, hosts=cfg.hosts, mounts=host_mount_commands(args.host_mounts)
                )
                for ns_name in joining
            }
        join_map = (
            config_map(
                ctx,
                "grendel-join-scripts",
                ns,
                join_scripts,
                component="provisioning",
                parent=self,
                app=APP,
                depends_on=namespace.ready,
            )
            if join_scripts
            else None
        )
        storage_class = ctx.storage_class_for(cfg.storage.storage_class)
        volume = k8s.core.v1.PersistentVolumeClaim(
            f"{ns}/grendel-data",
            metadata=ctx.meta("grendel-data", "provisioning", ns, app=APP, stateful=Stateful.VOLUME),
            spec={
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": cfg.storage.size}},
                **({"storageClassName": storage_class} if storage_class else {}),
            },
            opts=ctx.opts(self, depends_on=namespace.ready, stateful=Stateful.VOLUME),
        )
        networks = [{"name": cfg.attachment, "namespace": ns, "ips": [cfg.address], "interface": "prov0"}]
        inventory_digest = hashlib.sha256((hosts_json + images_json + json.dumps(join_scripts, sort_keys=True)).encode())
        # The pod restarts when the inventory, the join scripts or grendel.toml (secrets included) change.
        checksum = toml.apply(lambda text: hashlib.sha256(inventory_digest.digest() + text.encode()).hexdigest()[:16])
        labels = ctx.labels(APP, "provisioning")
        selector = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "provisioning"}
        mounts = [
            {"name": "data", "mountPath": REPO_DIR},
            {"name": "config", "mountPath": "/secret", "readOnly": True},
            {"name": "run", "mountPath": "/var/run/grendel"},
            *assemble.mounts,
        ]
        volumes = [
            {"name": "data", "persistentVolumeClaim": {"claimName": "grendel-data"}},
            {"name": "config", "secret": {"secretName": "grendel-config"}},
            {"name": "run", "emptyDir": {}},
            *assemble.volumes,
        ]
        if join_map is not None:
            mounts.append({"name": "join-scripts", "mountPath": f"{REPO_DIR}/{JOIN_DIR}", "readOnly": True})
            volumes.append({"name": "join-scripts", "configMap": {"name": "grendel-join-scripts"}})
        deployment = k8s.apps.v1.Deployment(
            f"{ns}/{APP}",
            metadata=ctx.meta(APP, "provisioning", ns),
            spec={
                "replicas": 1,
                # One Grendel per provisioning network: the old pod must release the address first.
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {
                        "labels": labels,
                        "annotations": {
                            "k8s.v1.cni.cncf.io/networks": json.dumps(networks),
                            "hpcforge.io/config-checksum": checksum,
                        },
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
                        "containers": [
                            {
                                "name": APP,
                                "image": Images.GRENDEL.ref,
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
                        ],
                        "volumes": volumes,
                    },
                },
            },
            opts=ctx.opts(self, depends_on=[config_secret, volume, *inventory_maps, *([join_map] if join_map else [])]),
        )
        self.address = ip
        objects: list[pulumi.Resource] = [deployment, volume, config_secret]
        if cfg.api.expose and cfg.api.hostname:
            objects += self._expose(ctx, args, ns, selector, deployment, namespace.ready)
        self.ready = objects
        self.register_outputs({"address": ip, "hosts": len(cfg.hosts), "joinScripts": sorted(join_scripts)})

    def _expose(
        self,
        ctx: DeployContext,
        args: ProvisioningArgs,
        ns: str,
        selector: dict[str, str],
        deployment: pulumi.Resource,
        namespace_ready: Sequence[pulumi.Resource],
    ) -> list[pulumi.Resource]:
        hostname = args.config.api.hostname
        assert hostname is not None
        service = k8s.core.v1.Service(
            f"{ns}/{APP}-http",
            metadata=ctx.meta(f"{APP}-http", "provisioning", ns, app=APP),
            spec={"selector": selector, "ports": [{"name": "http", "port": 80, "targetPort": 80}]},
            opts=ctx.opts(self, depends_on=[deployment]),
        )
        tls = certificate(
            ctx,
            self,
            name=f"{APP}-tls",
            namespace=ns,
            dns_names=[hostname],
            issuer=args.issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
            component="provisioning",
            app=APP,
            # The issuer must exist (cert-manager and its ClusterIssuer) and so must the namespace.
            depends_on=[*namespace_ready, *args.issuer_ready],
        )
        ingress = k8s.networking.v1.Ingress(
            f"{ns}/{APP}",
            metadata=ctx.meta(
                APP,
                "provisioning",
                ns,
                annotations={"traefik.ingress.kubernetes.io/router.entrypoints": "websecure"},
            ),
            spec={
                "ingressClassName": args.ingress_class,
                "tls": [{"hosts": [hostname], "secretName": f"{APP}-tls"}],
                "rules": [
                    {
                        "host": hostname,
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "pathType": "Prefix",
                                    "backend": {"service": {"name": f"{APP}-http", "port": {"number": 80}}},
                                }
                            ]
                        },
                    }
                ],
            },
            opts=ctx.opts(self, depends_on=[service, tls]),
        )
        return [service, tls, ingress]

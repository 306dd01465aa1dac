"""Slurm layer on SchedMD's Slinky slurm-operator: the operator charts, and the Controller,
Accounting, LoginSet, NodeSet and RestApi custom resources from typed config.

The operator owns pods and slurm.conf; hpcforge declares the CRs, the keys, the config files and
the scripts. Updates are job-safe: NodeSets roll with a bounded `maxUnavailable` and the operator
drains a Slurm node before deleting its pod; login pods are replaced one at a time at most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..charts import ChartDeployer, ChartUse
from ..config.active_checks import ActiveCheck
from ..config.base import quantity_value
from ..config.provisioning import Host
from ..config.rdma import RdmaConfig
from ..config.slurm import LoginConfig, NodeSetConfig, Script, SlurmConfig
from ..config.storage import NfsExport, StorageConfig
from ..context import DeployContext, Stateful
from ..generated import generated_secret
from ..k8s import (
    Allow,
    Namespace,
    Port,
    config_map,
    container_resources,
    egress_to_apiserver,
    egress_to_namespaces,
    ingress_from_anywhere,
    secret,
)
from ..renderers.enroot import ENROOT_DROPIN, ENROOT_DROPIN_DIR, PYXIS_PLUGSTACK, enroot_conf
from ..renderers.grendel import PORT_RANGE_SYSCTL
from ..renderers.nccl import ENROOT_ENVIRON, NCCL_CONF_PATH, nccl_conf, nccl_settings
from ..renderers.script_include import inline_includes
from ..renderers.script_settings import apply_settings
from ..renderers.slurm_conf import (
    SLURMCTLD_PORT,
    cgroup_conf,
    controller_extra_conf,
    gres_conf,
    mebibytes,
    nodeset_extra_conf,
)
from ..renderers.sssd import SSSD_CA_DIR, SssdSettings, render_sssd_conf
from ..renderers.storage import container_mounts, pod_volumes
from ..versions import Charts, Images
from .certificates import certificate
from .database import DatabaseEndpoint
from .directory import DirectoryEndpoint
from .gpu_active_checks import deploy_active_checks
from .network import metallb_service_annotations
from .network_operator import NETWORKS_ANNOTATION, RESOURCE_ANNOTATION, attachment_config, rdma_resource
from .slurm_accounts import deploy_accounts
from .slurm_site import shared_tree_claims, site_objects, topology_files
from .slurm_traffic import slurm_bare_metal_allows

OPERATOR_NAMESPACE = "slinky"
CONTROLLER = "slurm"
SLURM_KEY_SECRET = "slurm-auth-slurm"
JWT_KEY_SECRET = "slurm-auth-jwt"
SSSD_SECRET = "slurm-sssd-conf"
DB_PASSWORD_SECRET = "slurm-db-password"
CA_TRUST_SECRET = "slurm-ldap-ca"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
NODESET_KIND = "NodeSet"
SLINKY_API = "slinky.slurm.net/v1beta1"

CHARTS = (
    ChartUse("slurm-operator-crds", Charts.SLURM_OPERATOR_CRDS, OPERATOR_NAMESPACE),
    ChartUse("slurm-operator", Charts.SLURM_OPERATOR, OPERATOR_NAMESPACE),
)


def script_text(script: Script, root: Path = PROJECT_ROOT) -> str:
    if script.inline is not None:
        return script.inline
    assert script.file is not None
    path = (root / script.file).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"script {script.name!r}: {script.file} does not exist in the project")
    # The operator mounts each script alone: shared code it sources from the repository goes into its text.
    return inline_includes(path.read_text(), path, root)


ENROOT_CONFIG_MAP = "slurm-enroot-conf"
JOB_MAPPING_VOLUME = "gpu-job-mapping"
SHM_VOLUME = "dev-shm"
NCCL_VOLUME = "nccl-conf"


def nodeset_spec(
    nodeset: NodeSetConfig,
    *,
    node_selector: dict[str, str],
    pool_taints: Sequence[str] = (),
    controller: str = CONTROLLER,
    fabrics: Mapping[str, str] | None = None,
    namespace: str = "slurm",
    exports: Sequence[NfsExport] = (),
    job_ports: tuple[int, int] | None = None,
    pyxis: bool = False,
    job_mapping_dir: str | None = None,
    nccl_config_map: str | None = None,
) -> dict[str, Any]:
    """The NodeSet spec of one configured nodeset (pure: tested directly).

    `nccl_config_map`: the ConfigMap with the NCCL settings of the nodeset's RDMA pool (components/renderers/nccl.py),
    mounted at /etc/nccl.conf and, with `pyxis`, into enroot's environ.d.

    `job_ports`: the pods' ephemeral port range (controller.jobPortRange), so that what the jobs' ranks listen on
    is in the range the NetworkPolicies open towards bare-metal hosts. The operator strategic-merges
    `template.spec` into the pod it builds (v1.2.1 internal/builder/workerbuilder/worker_app.go `Merge:
    template.PodSpec`, common/pod_template.go), so the pod-level sysctl reaches the pod; it is one of Kubernetes'
    safe sysctls (allowed by every Pod Security level and by the kubelet without --allowed-unsafe-sysctls).
    `pyxis`: a GPU nodeset runs the slurmd image with Pyxis and enroot (`srun --container-image`).

    `job_mapping_dir`: host directory where the GPU prolog records each job's GPUs for dcgm-exporter
    (config/gpu.py `gpu_job_mapping_dir`); a GPU nodeset's slurmd mounts it from the host (hostPath,
    DirectoryOrCreate, as the GPU Operator mounts it into dcgm-exporter), where the prolog writes it.

    `pool_taints`: taint keys of the nodeset's node pool; the pods tolerate them (NoSchedule).
    `fabrics`: RDMA fabrics the pool's nodes reach (name -> device-plugin resource): the pods request the resource,
    attach the fabric's NetworkAttachmentDefinition (in `namespace`) and get IPC_LOCK to pin memory for RDMA.
    """
    # CPU and memory limits: the slurmd image turns them into CoreSpecCount/MemSpecLimit (host minus pod), so Slurm
    # schedules what the pod has. Reservations for slurmd itself lower what the image is told the pod has (POD_CPUS,
    # POD_MEMORY: the operator's env, overridden by name through the container merge).
    cpu_limit = nodeset.cpu_limit or nodeset.cpu
    memory_limit = nodeset.memory_limit or nodeset.memory
    limits: dict[str, Any] = {"cpu": cpu_limit, "memory": memory_limit}
    requests: dict[str, Any] = {"cpu": nodeset.cpu, "memory": nodeset.memory}
    if nodeset.gpus is not None:
        limits[nodeset.gpus.resource] = nodeset.gpus.count
        requests[nodeset.gpus.resource] = nodeset.gpus.count
    fabrics = dict(fabrics or {})
    for resource in fabrics.values():
        limits[resource] = 1
        requests[resource] = 1
    env: list[dict[str, str]] = []
    if nodeset.reserved_cpus:
        cpus = math.ceil(quantity_value(cpu_limit)) - nodeset.reserved_cpus
        env.append({"name": "POD_CPUS", "value": str(cpus)})
    if nodeset.reserved_memory is not None:
        env.append({"name": "POD_MEMORY", "value": str(mebibytes(memory_limit) - mebibytes(nodeset.reserved_memory))})
    pod_spec: dict[str, Any] = {}
    if node_selector:
        pod_spec["nodeSelector"] = dict(node_selector)
    tolerations = [t.model_dump(exclude_none=True) for t in nodeset.tolerations]
    tolerated = {t["key"] for t in tolerations}
    tolerations += [{"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in pool_taints if key not in tolerated]
    if tolerations:
        pod_spec["tolerations"] = tolerations
    if exports:
        pod_spec["volumes"] = pod_volumes(exports)
    if job_ports is not None:
        pod_spec["securityContext"] = {"sysctls": [{"name": PORT_RANGE_SYSCTL, "value": f"{job_ports[0]} {job_ports[1]}"}]}
    mounts = container_mounts(exports)
    if pyxis and nodeset.gpus is not None:
        pod_spec.setdefault("volumes", []).append({"name": "enroot-conf", "configMap": {"name": ENROOT_CONFIG_MAP}})
        mounts.append(
            {
                "name": "enroot-conf",
                "mountPath": f"{ENROOT_DROPIN_DIR}/{ENROOT_DROPIN}",
                "subPath": ENROOT_DROPIN,
                "readOnly": True,
            }
        )
    if nccl_config_map is not None and nodeset.gpus is not None:
        pod_spec.setdefault("volumes", []).append({"name": NCCL_VOLUME, "configMap": {"name": nccl_config_map}})
        mounts.append({"name": NCCL_VOLUME, "mountPath": NCCL_CONF_PATH, "subPath": "nccl.conf", "readOnly": True})
        if pyxis:
            mounts.append({"name": NCCL_VOLUME, "mountPath": ENROOT_ENVIRON, "subPath": "nccl.env", "readOnly": True})
    shm = nodeset.effective_shm_size
    if shm is not None:
        # slurm-operator v1.2.1 mounts nothing at /dev/shm (internal/builder/workerbuilder/worker_app.go
        # nodesetVolumes), so the pod would keep the runtime's 64 MiB; the template's volumes and the slurmd
        # container's mounts are merged into the pod it builds.
        pod_spec.setdefault("volumes", []).append({"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm}})
        mounts.append({"name": SHM_VOLUME, "mountPath": "/dev/shm"})
    if job_mapping_dir is not None and nodeset.gpus is not None:
        pod_spec.setdefault("volumes", []).append(
            {"name": JOB_MAPPING_VOLUME, "hostPath": {"path": job_mapping_dir, "type": "DirectoryOrCreate"}}
        )
        mounts.append({"name": JOB_MAPPING_VOLUME, "mountPath": job_mapping_dir})
    spec: dict[str, Any] = {
        "controllerRef": {"name": controller},
        "replicas": nodeset.replicas,
        "scalingMode": nodeset.scaling_mode,
        "slurmd": {
            "image": (Images.SLURMD_PYXIS if pyxis and nodeset.gpus is not None else Images.SLURMD).ref,
            "resources": {"requests": requests, "limits": limits},
            **({"env": env} if env else {}),
            # RDMA registers (pins) memory: IPC_LOCK, on top of what the operator gives slurmd.
            **({"securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}} if fabrics else {}),
            **({"volumeMounts": mounts} if mounts else {}),
        },
        "logfile": {"image": Images.ALPINE.ref, "resources": container_resources("10m", "16Mi", "64Mi")},
        # Partitions are declared on the Controller (they may span several NodeSets).
        "partition": {"enabled": False},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": nodeset.max_unavailable}},
        "workloadDisruptionProtection": nodeset.workload_disruption_protection,
        "template": {"spec": pod_spec},
    }
    if fabrics:
        networks = ",".join(f"{namespace}/{fabric}" for fabric in fabrics)
        spec["template"]["metadata"] = {"annotations": {NETWORKS_ANNOTATION: networks}}
    extra = nodeset_extra_conf(nodeset)
    if extra:
        spec["extraConf"] = extra
    return spec


def login_spec(
    login: LoginConfig,
    *,
    node_selector: dict[str, str] | None = None,
    pool_taints: Sequence[str] = (),
    exports: Sequence[NfsExport] = (),
    pyxis: bool = False,
) -> dict[str, Any]:
    """The LoginSet spec of one login pool (pure: tested directly). `pyxis`: the login image with Pyxis, whose SPANK
    plugin gives srun its `--container-image` options (srun refuses options no loaded plugin registered)."""
    resources = container_resources(login.cpu, login.memory, login.memory_limit)
    if login.gpus is not None:
        resources["limits"][login.gpus.resource] = login.gpus.count
        resources["requests"][login.gpus.resource] = login.gpus.count
    pod_spec: dict[str, Any] = {
        "volumes": [
            {
                "name": "hpcforge-ca",
                "secret": {"secretName": CA_TRUST_SECRET, "items": [{"key": "ca.crt", "path": "ca.crt"}]},
            },
            *pod_volumes(exports),
        ]
    }
    if node_selector:
        pod_spec["nodeSelector"] = dict(node_selector)
    if pool_taints:
        pod_spec["tolerations"] = [{"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in pool_taints]
    spec: dict[str, Any] = {
        "controllerRef": {"name": CONTROLLER},
        "replicas": login.replicas,
        "sssdConfRef": {"name": SSSD_SECRET, "key": "sssd.conf"},
        "login": {
            "image": (Images.LOGIN_PYXIS if pyxis else Images.LOGIN).ref,
            "resources": resources,
            "volumeMounts": [
                {"name": "hpcforge-ca", "mountPath": SSSD_CA_DIR, "readOnly": True},
                *container_mounts(exports),
            ],
        },
        "initconf": {"image": Images.ALPINE.ref, "resources": container_resources("10m", "16Mi", "64Mi")},
        # Login pods hold users' sessions: surge a new pod before an old one goes.
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": login.max_unavailable, "maxSurge": 1}},
        "extraSshdConfig": "AuthorizedKeysCommand /usr/bin/sss_ssh_authorizedkeys\nAuthorizedKeysCommandUser nobody\n",
        "service": {
            "metadata": {"annotations": metallb_service_annotations(login.pool, login.address)},
            "spec": {"type": "LoadBalancer"},
        },
        "template": {"spec": pod_spec},
    }
    if login.root_ssh_authorized_keys:
        spec["rootSshAuthorizedKeys"] = "\n".join(login.root_ssh_authorized_keys) + "\n"
    return spec


@dataclass(frozen=True)
class SlurmArgs:
    ctx: DeployContext
    config: SlurmConfig
    charts: ChartDeployer
    database: DatabaseEndpoint | None
    """The accounting database (None when accounting is off: nothing is deployed for it)."""
    directory: DirectoryEndpoint
    node_selectors: dict[str, dict[str, str]]
    """Node selector per nodeset (from its node pool's labels, or its own nodeSelector)."""
    ca_issuer: str
    certificate_duration: str
    renew_before: str
    pool_taints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Taint keys of each nodeset's node pool, which its pods tolerate."""
    bare_metal_subnets: Sequence[str] = ()
    """Networks of bare-metal dynamic nodes (slurmctld must reach their slurmd)."""
    rdma: RdmaConfig | None = None
    """RDMA fabrics: one NetworkAttachmentDefinition each in the Slurm namespace; GPU nodesets on their pools attach them."""
    nodeset_pools: dict[str, str] = field(default_factory=dict)
    """Node pool of each nodeset (to find the RDMA fabrics its nodes reach)."""
    script_settings: Mapping[str, str] = field(default_factory=dict)
    """Values for the settings blocks of prolog/epilog scripts (e.g. the GPU health thresholds)."""
    gpu_job_mapping_dir: str | None = None
    """Host directory of dcgm-exporter's HPC job mapping, mounted into GPU slurmd pods (None: not written)."""
    hosts: Sequence[Host] = ()
    """The bare-metal inventory (its topology tags go into topology.yaml)."""
    login_node_selectors: dict[str, dict[str, str]] = field(default_factory=dict)
    """Node selector per login pool that names a node pool (its labels)."""
    login_pool_taints: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Taint keys of each login pool's node pool, which its pods tolerate."""
    storage: StorageConfig | None = None
    """Shared NFS trees mounted on login and compute pods (claims bound to the storage layer's volumes)."""
    depends_on: Sequence[pulumi.Resource] = ()
    metrics: bool = False
    """Turn on slurmctld's OpenMetrics endpoints and the operator's ServiceMonitor (observability layer on)."""
    active_checks: Sequence[ActiveCheck] = ()
    """Scheduled active GPU checks (a ConfigMap and a CronJob each, components/layers/gpu_active_checks.py)."""
    accounts_state: str | None = None
    """Desired slurmdbd state (`render_desired_state`), reconciled by a Job; None: no accounting as code."""


class Slurm(pulumi.ComponentResource):
    namespace: str
    controller_host: str
    controller_address: str | None
    login_address: str | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: SlurmArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:slurm:Slurm", name, None, opts)
        ctx, cfg = args.ctx, args.config
        ns = cfg.namespace
        self.namespace = ns
        operator_ns = Namespace(
            ctx,
            OPERATOR_NAMESPACE,
            component="slurm-operator",
            parent=self,
            allows=[
                egress_to_apiserver(),
                ingress_from_anywhere("allow-ingress-webhook", Port(9443)),
                # The operator talks to slurmctld/slurmrestd to drain nodes before deleting pods.
                egress_to_namespaces("allow-egress-slurm", [ns]),
            ],
            depends_on=args.depends_on,
        )
        bare_metal = tuple(args.bare_metal_subnets)
        slurm_ns = Namespace(
            ctx,
            ns,
            component="slurm",
            parent=self,
            # slurmd manages cgroups and devices for jobs: its pods run privileged.
            pod_security="privileged",
            allows=[
                ingress_from_anywhere("allow-ingress-ssh", Port(22)),
                ingress_from_anywhere("allow-ingress-slurmctld", Port(SLURMCTLD_PORT)),
                Allow("allow-ingress-from-operator", "ingress", namespaces=(OPERATOR_NAMESPACE,)),
                *([egress_to_namespaces("allow-egress-database", ["database"], Port(3306))] if cfg.accounting.enabled else []),
                egress_to_namespaces("allow-egress-directory", ["directory"], Port(3636)),
                egress_to_apiserver(),
                *slurm_bare_metal_allows(bare_metal, cfg.controller.srun_port_range, cfg.controller.job_port_range),
            ],
            depends_on=args.depends_on,
        )
        crds = args.charts.deploy(
            "slurm-operator-crds", Charts.SLURM_OPERATOR_CRDS, OPERATOR_NAMESPACE, {}, parent=self, depends_on=operator_ns.ready
        )
        operator = args.charts.deploy(
            "slurm-operator",
            Charts.SLURM_OPERATOR,
            OPERATOR_NAMESPACE,
            {
                "crds": {"enabled": False},
                # Security contexts for `restricted` come from components/chart_security.py (ChartDeployer).
                "operator": {"resources": container_resources("100m", "128Mi", "512Mi")},
                # The webhook's serving certificate comes from cert-manager.
                "webhook": {"resources": container_resources("50m", "64Mi", "256Mi")},
            },
            parent=self,
            depends_on=[crds],
        )
        ready_ns = slurm_ns.ready

        # --- keys and secrets -------------------------------------------------------------------
        key_secret = generated_secret(
            ctx,
            "slurm-key",
            SLURM_KEY_SECRET,
            ns,
            "slurm.key",
            length=1024,
            kind="bytes",
            component="slurm",
            parent=self,
            app=CONTROLLER,
            depends_on=ready_ns,
        ).secret
        jwt_secret = generated_secret(
            ctx,
            "slurm-jwt-key",
            JWT_KEY_SECRET,
            ns,
            "jwt.key",
            length=1024,
            kind="bytes",
            component="slurm",
            parent=self,
            app=CONTROLLER,
            depends_on=ready_ns,
        ).secret
        keys = {
            "slurmKeyRef": {"name": SLURM_KEY_SECRET, "key": "slurm.key"},
            "jwtKeyRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"},
        }

        # --- config files and scripts -----------------------------------------------------------
        files = {"cgroup.conf": cgroup_conf(cfg)}
        gres = gres_conf(cfg)
        if gres is not None:
            files["gres.conf"] = gres
        files.update(topology_files(cfg, args.hosts))
        if cfg.pyxis_enabled:
            files["plugstack.conf"] = PYXIS_PLUGSTACK
        extra_files = config_map(
            ctx,
            "slurm-config-extra",
            ns,
            files,
            component="slurm",
            parent=self,
            app=CONTROLLER,
            depends_on=ready_ns,
            # topology.yaml may come from the Slurm inventory file
            annotations=cfg.inventory_annotations() if cfg.topology is not None else None,
        )
        enroot: list[pulumi.Resource] = []
        if cfg.pyxis_enabled and cfg.has_gpus:
            enroot.append(
                config_map(
                    ctx,
                    ENROOT_CONFIG_MAP,
                    ns,
                    {ENROOT_DROPIN: enroot_conf()},
                    component="slurm",
                    parent=self,
                    app=CONTROLLER,
                    depends_on=ready_ns,
                )
            )
        script_maps: dict[str, pulumi.Resource] = {}
        for kind, scripts in (("prolog", cfg.prolog), ("epilog", cfg.epilog)):
            if scripts:
                script_maps[kind] = config_map(
                    ctx,
                    f"slurm-{kind}-scripts",
                    ns,
                    {s.name: apply_settings(script_text(s), args.script_settings) for s in scripts},
                    component="slurm",
                    parent=self,
                    app=CONTROLLER,
                    depends_on=ready_ns,
                )

        # --- controller --------------------------------------------------------------------------
        accounting = cfg.accounting.enabled
        storage_class = ctx.storage_class_for(cfg.controller.storage.storage_class)
        controller_spec: dict[str, Any] = {
            "clusterName": cfg.cluster_name,
            **keys,
            "extraConf": controller_extra_conf(cfg, accounting=accounting, rdma=args.rdma is not None),
            "configFileRefs": [{"name": "slurm-config-extra"}],
            "slurmctld": {
                "image": Images.SLURMCTLD.ref,
                "resources": container_resources(cfg.controller.cpu, cfg.controller.memory),
            },
            "reconfigure": {"image": Images.SLURMCTLD.ref, "resources": container_resources("10m", "32Mi", "128Mi")},
            "logfile": {"image": Images.ALPINE.ref, "resources": container_resources("10m", "16Mi", "64Mi")},
            "persistence": {
                "enabled": True,
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": cfg.controller.storage.size}},
                **({"storageClassName": storage_class} if storage_class else {}),
            },
        }
        if args.metrics:
            # The operator sets MetricsType=metrics/openmetrics and makes a ServiceMonitor for
            # /metrics/{jobs,nodes,partitions,scheduler} on the controller service.
            controller_spec["metrics"] = {"enabled": True, "serviceMonitor": {"enabled": True}}
        if "prolog" in script_maps:
            controller_spec["prologScriptRefs"] = [{"name": "slurm-prolog-scripts"}]
        if "epilog" in script_maps:
            controller_spec["epilogScriptRefs"] = [{"name": "slurm-epilog-scripts"}]
        if accounting:
            controller_spec["accountingRef"] = {"name": CONTROLLER}
        self.controller_address = None
        if cfg.controller.service is not None:
            self.controller_address = cfg.controller.service.address
            controller_spec["service"] = {
                "metadata": {
                    "annotations": metallb_service_annotations(cfg.controller.service.pool, cfg.controller.service.address)
                },
                "spec": {"type": "LoadBalancer"},
            }
        pre_controller: list[pulumi.Resource] = [operator, key_secret, jwt_secret, extra_files, *script_maps.values()]

        def cr(
            kind: str, name: str, spec: dict[str, Any], depends: list[pulumi.Resource], stateful: Stateful | None = None
        ) -> k8s.apiextensions.CustomResource:
            return k8s.apiextensions.CustomResource(
                f"{ns}/{kind.lower()}-{name}",
                api_version=SLINKY_API,
                kind=kind,
                metadata=ctx.meta(name, f"slurm-{kind.lower()}", ns, app=CONTROLLER, stateful=stateful),
                spec=spec,
                opts=ctx.opts(self, depends_on=depends, stateful=stateful),
            )

        objects: list[pulumi.Resource] = []
        if accounting:
            db = args.database
            if db is None:
                raise ValueError("slurm.accounting.enabled needs the database layer's endpoint")
            db_secret = secret(
                ctx,
                DB_PASSWORD_SECRET,
                ns,
                {"password": db.password},
                component="slurm",
                parent=self,
                app=CONTROLLER,
                depends_on=ready_ns,
                stateful=Stateful.KEY_MATERIAL,
            )
            accounting = cr(
                "Accounting",
                CONTROLLER,
                {
                    **keys,
                    "slurmdbd": {
                        "image": Images.SLURMDBD.ref,
                        "resources": container_resources(cfg.accounting.cpu, cfg.accounting.memory),
                    },
                    "storageConfig": {
                        "host": db.host,
                        "port": db.port,
                        "database": db.database,
                        "username": db.user,
                        "passwordKeyRef": {"name": DB_PASSWORD_SECRET, "key": "password"},
                    },
                },
                [operator, key_secret, jwt_secret, db_secret],
            )
            objects.append(accounting)
            pre_controller.append(accounting)
        controller = cr("Controller", CONTROLLER, controller_spec, pre_controller, Stateful.SLURM_STATE)
        objects.insert(0, controller)
        if args.accounts_state is not None:
            objects += deploy_accounts(
                ctx,
                self,
                namespace=ns,
                controller=CONTROLLER,
                slurm_key_secret=SLURM_KEY_SECRET,
                desired=args.accounts_state,
                depends_on=list(objects),
                annotations=cfg.inventory_annotations(),
            )
        objects += deploy_active_checks(
            ctx,
            self,
            checks=args.active_checks,
            slurm=cfg,
            namespace=ns,
            controller=CONTROLLER,
            slurm_key_secret=SLURM_KEY_SECRET,
            depends_on=[controller],
        )
        self.controller_host = f"{CONTROLLER}-controller.{ns}.svc.cluster.local"

        # --- login -------------------------------------------------------------------------------
        login = cfg.login
        directory = args.directory
        ca_trust = certificate(
            ctx,
            self,
            name=CA_TRUST_SECRET,
            namespace=ns,
            dns_names=[f"sssd.{ns}.svc"],
            issuer=args.ca_issuer,
            duration=args.certificate_duration,
            renew_before=args.renew_before,
            component="slurm-login",
            app=CONTROLLER,
            usages=("client auth",),
            depends_on=ready_ns,
        )
        settings = SssdSettings(
            domain=cfg.cluster_name, ldap_uri=directory.ldap_uri, suffix=directory.base_dn, bind_dn=directory.bind_dn
        )
        sssd_conf = directory.bind_password.apply(lambda password: render_sssd_conf(settings, password))
        sssd_secret = secret(
            ctx,
            SSSD_SECRET,
            ns,
            {"sssd.conf": sssd_conf},
            component="slurm-login",
            parent=self,
            app=CONTROLLER,
            depends_on=ready_ns,
        )
        self.login_address = login.address
        storage = args.storage
        login_exports = storage.mounted_on("login") if storage else ()
        compute_exports = storage.mounted_on("compute") if storage else ()
        claims = shared_tree_claims(ctx, self, storage, namespace=ns, app=CONTROLLER, depends_on=ready_ns)
        for login_set in cfg.login_sets():
            spec = login_spec(
                login_set,
                node_selector=args.login_node_selectors.get(login_set.name, {}),
                pool_taints=args.login_pool_taints.get(login_set.name, ()),
                exports=login_exports,
                pyxis=cfg.pyxis_enabled,
            )
            objects.append(cr("LoginSet", login_set.name, spec, [controller, sssd_secret, ca_trust, *claims]))

        objects += site_objects(ctx, self, cfg, controller=CONTROLLER, key_secret=SLURM_KEY_SECRET, depends_on=[controller])

        # --- RDMA attachments --------------------------------------------------------------------
        attachments: list[pulumi.Resource] = []
        rdma = args.rdma
        # Shared-mode fabrics get their attachment here; the SR-IOV operator makes those of SR-IOV fabrics.
        for fabric in (f for f in (rdma.fabrics if rdma else ()) if f.mode == "shared"):
            assert rdma is not None
            attachments.append(
                k8s.apiextensions.CustomResource(
                    f"{ns}/attachment-{fabric.name}",
                    api_version="k8s.cni.cncf.io/v1",
                    kind="NetworkAttachmentDefinition",
                    metadata=ctx.meta(
                        fabric.name,
                        "rdma-attachment",
                        ns,
                        app=CONTROLLER,
                        annotations={RESOURCE_ANNOTATION: fabric.resource},
                    ),
                    spec={"config": attachment_config(fabric, rdma.master_interface(fabric.name))},
                    opts=ctx.opts(self, depends_on=ready_ns),
                )
            )

        # --- compute -----------------------------------------------------------------------------
        for nodeset in cfg.nodesets:
            pool = args.nodeset_pools.get(nodeset.name)
            fabrics = (
                {name: rdma_resource(rdma, name) for name in rdma.fabrics_of(pool)}
                if rdma is not None and nodeset.gpus is not None
                else {}
            )
            nccl = nccl_settings(rdma, pool) if nodeset.gpus is not None else {}
            nccl_map: list[pulumi.Resource] = []
            if nccl:
                nccl_map.append(
                    config_map(
                        ctx,
                        f"slurm-nccl-{nodeset.name}",
                        ns,
                        {"nccl.conf": nccl_conf(nccl), "nccl.env": nccl_conf(nccl)},
                        component="slurm-nccl",
                        parent=self,
                        app=CONTROLLER,
                        depends_on=ready_ns,
                    )
                )
            spec = nodeset_spec(
                nodeset,
                node_selector=args.node_selectors.get(nodeset.name, {}),
                pool_taints=args.pool_taints.get(nodeset.name, ()),
                fabrics=fabrics,
                namespace=ns,
                exports=compute_exports,
                job_ports=cfg.controller.job_port_range,
                pyxis=cfg.pyxis_enabled,
                job_mapping_dir=args.gpu_job_mapping_dir,
                nccl_config_map=f"slurm-nccl-{nodeset.name}" if nccl else None,
            )
            objects += nccl_map
            objects.append(cr(NODESET_KIND, nodeset.name, spec, [controller, *attachments, *claims, *enroot, *nccl_map]))

        if cfg.restapi.enabled:
            objects.append(
                cr(
                    "RestApi",
                    CONTROLLER,
                    {
                        "controllerRef": {"name": CONTROLLER},
                        "replicas": cfg.restapi.replicas,
                        "slurmrestd": {
                            "image": Images.SLURMRESTD.ref,
                            "resources": container_resources("100m", "128Mi", "512Mi"),
                        },
                    },
                    [controller],
                )
            )
        self.ready = objects
        self.register_outputs(
            {
                "clusterName": cfg.cluster_name,
                "controller": self.controller_host,
                "loginAddress": login.address,
                "nodesets": [n.name for n in cfg.nodesets],
                "partitions": [p.name for p in cfg.partitions],
            }
        )


__all__ = ["CHARTS", "NODESET_KIND", "Slurm", "SlurmArgs", "login_spec", "nodeset_spec", "script_text"]

"""The Slurm layer's objects as plain data (pure: tested directly, no Pulumi): the operator chart's values, the specs
of the Controller, Accounting, LoginSet, NodeSet and RestApi custom resources, the config files and the scripts they
reference, the RDMA attachments and NCCL settings of the nodesets, and the NetworkPolicy allows of the operator's and
the Slurm namespace (whose pods talk to the database, the directory and bare-metal Slurm hosts). layer.py registers
them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...ground.base import quantity_value
from ...ground.exposure import PRIVATE_RANGES
from ...ground.hosts import Host
from ...k8s.addresses import PORT_RANGE_SYSCTL, load_balancer_exposure, metallb_service_annotations
from ...k8s.resources import (
    ANYWHERE,
    Allow,
    PodPeer,
    Port,
    container_resources,
    egress_to_apiserver,
    ingress_from_apiserver,
)
from ...paths import PROJECT_ROOT
from ...versions import Images
from ..gpu.face import DCGM_HOSTENGINE_PORT, GPU_OPERATOR_NAMESPACE
from ..rdma.face import NETWORKS_ANNOTATION
from ..storage.config import NfsExport
from ..storage.face import container_mounts, pod_volumes
from .config import LoginConfig, NodeSetConfig, Script, SlurmConfig
from .enroot import ENROOT_DROPIN, ENROOT_DROPIN_DIR, PYXIS_PLUGSTACK
from .face import CONTROLLER
from .nccl import ENROOT_ENVIRON, NCCL_CONF_PATH
from .passwd import PasswdEntry, passwd_overlay
from .script_include import inline_includes
from .script_settings import apply_settings
from .site import topology_files
from .slurm_conf import (
    SLURMCTLD_PORT,
    SLURMD_PORT,
    cgroup_conf,
    controller_extra_conf,
    gres_conf,
    job_container_conf,
    mebibytes,
    nodeset_extra_conf,
)
from .sssd import SSSD_CA_DIR

OPERATOR_NAMESPACE = "slinky"
OPERATOR_DEPLOYMENT = "slurm-operator"  # the chart's operator Deployment (release name slurm-operator)
OPERATOR_REPLICAS_IGNORED = {
    "group": "apps",
    "kind": "Deployment",
    "name": OPERATOR_DEPLOYMENT,
    "namespace": OPERATOR_NAMESPACE,
    "jsonPointers": ["/spec/replicas"],
}
"""The slurm-operator Application's `ignoreDifferences`: the operator's replicas, which the restore runbook sets to 0
while slurmdbd's database is replaced (with `RespectIgnoreDifferences=true`, components/charts.py)."""
SLURM_KEY_SECRET = "slurm-auth-slurm"
JWT_KEY_SECRET = "slurm-auth-jwt"
SSSD_SECRET = "slurm-sssd-conf"
DB_PASSWORD_SECRET = "slurm-db-password"
CA_TRUST_SECRET = "slurm-ldap-ca"
NODESET_KIND = "NodeSet"
SLINKY_API = "slinky.slurm.net/v1beta1"


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

    `nccl_config_map`: the ConfigMap with the NCCL settings of the nodeset's RDMA pool (layers/slurm/nccl.py),
    mounted at /etc/nccl.conf and, with `pyxis`, into enroot's environ.d.

    `job_ports`: the pods' ephemeral port range (controller.jobPortRange), so that what the jobs' ranks listen on
    is in the range the NetworkPolicies open towards bare-metal hosts. The operator strategic-merges
    `template.spec` into the pod it builds (v1.2.1 internal/builder/workerbuilder/worker_app.go `Merge:
    template.PodSpec`, common/pod_template.go), so the pod-level sysctl reaches the pod; it is one of Kubernetes'
    safe sysctls (allowed by every Pod Security level and by the kubelet without --allowed-unsafe-sysctls).
    `pyxis`: a GPU nodeset runs the slurmd image with Pyxis and enroot (`srun --container-image`).

    `job_mapping_dir`: host directory where the GPU prolog records each job's GPUs for dcgm-exporter
    (components/layers/gpu/config.py `job_mapping_dir`); a GPU nodeset's slurmd mounts it from the host (hostPath,
    DirectoryOrCreate, as the GPU Operator mounts it into dcgm-exporter), where the prolog writes it.

    `pool_taints`: taint keys of the nodeset's node pool; the pods tolerate them (NoSchedule).
    `fabrics`: RDMA fabrics the pool's nodes reach (name -> device-plugin resource): the pods request the resource,
    attach the fabric's NetworkAttachmentDefinition (in `namespace`) and get IPC_LOCK to pin memory for RDMA.
    """
    fabrics = dict(fabrics or {})
    env = _slurmd_env(nodeset)
    pod_spec = _nodeset_pod_spec(
        nodeset, node_selector=node_selector, pool_taints=pool_taints, exports=exports, job_ports=job_ports
    )
    mounts = container_mounts(exports)
    volumes, gpu_mounts = node_volumes(nodeset, pyxis=pyxis, nccl_config_map=nccl_config_map, job_mapping_dir=job_mapping_dir)
    if volumes:
        pod_spec.setdefault("volumes", []).extend(volumes)
    mounts += gpu_mounts
    spec: dict[str, Any] = {
        "controllerRef": {"name": controller},
        "replicas": nodeset.replicas,
        "scalingMode": nodeset.scaling_mode,
        "slurmd": {
            "image": (Images.SLURMD_PYXIS if pyxis and nodeset.gpus is not None else Images.SLURMD).ref,
            "resources": _slurmd_resources(nodeset, fabrics),
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


def _slurmd_resources(nodeset: NodeSetConfig, fabrics: Mapping[str, str]) -> dict[str, Any]:
    """slurmd's requests and limits: CPU and memory, the GPUs, one device of each RDMA fabric's resource.

    The slurmd image turns the CPU and memory limits into CoreSpecCount/MemSpecLimit (host minus pod), so Slurm
    schedules what the pod has."""
    limits: dict[str, Any] = {"cpu": nodeset.cpu_limit or nodeset.cpu, "memory": nodeset.memory_limit or nodeset.memory}
    requests: dict[str, Any] = {"cpu": nodeset.cpu, "memory": nodeset.memory}
    if nodeset.gpus is not None:
        limits[nodeset.gpus.resource] = nodeset.gpus.count
        requests[nodeset.gpus.resource] = nodeset.gpus.count
    for resource in fabrics.values():
        limits[resource] = 1
        requests[resource] = 1
    return {"requests": requests, "limits": limits}


def _slurmd_env(nodeset: NodeSetConfig) -> list[dict[str, str]]:
    """Reservations for slurmd itself lower what the image is told the pod has (POD_CPUS, POD_MEMORY: the operator's
    env, overridden by name through the container merge)."""
    cpu_limit = nodeset.cpu_limit or nodeset.cpu
    memory_limit = nodeset.memory_limit or nodeset.memory
    env: list[dict[str, str]] = []
    if nodeset.reserved_cpus:
        cpus = math.ceil(quantity_value(cpu_limit)) - nodeset.reserved_cpus
        env.append({"name": "POD_CPUS", "value": str(cpus)})
    if nodeset.reserved_memory is not None:
        env.append({"name": "POD_MEMORY", "value": str(mebibytes(memory_limit) - mebibytes(nodeset.reserved_memory))})
    return env


def _nodeset_pod_spec(
    nodeset: NodeSetConfig,
    *,
    node_selector: dict[str, str],
    pool_taints: Sequence[str],
    exports: Sequence[NfsExport],
    job_ports: tuple[int, int] | None,
) -> dict[str, Any]:
    """The pod template's placement (node selector, tolerations of the nodeset's and its pool's taints), the shared
    trees' volumes and the jobs' port range (see `nodeset_spec`)."""
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
    return pod_spec


def node_volumes(
    nodeset: NodeSetConfig, *, pyxis: bool, nccl_config_map: str | None, job_mapping_dir: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The volumes a nodeset's pods add for their jobs and the slurmd container's mounts of them, in this order: enroot's
    drop-in (Pyxis), the NCCL settings, a memory-backed /dev/shm, dcgm-exporter's job mapping (see `nodeset_spec`)."""
    pod_spec: dict[str, Any] = {}
    mounts: list[dict[str, Any]] = []
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
    return pod_spec.get("volumes", []), mounts


def login_spec(
    login: LoginConfig,
    *,
    node_selector: dict[str, str] | None = None,
    pool_taints: Sequence[str] = (),
    exports: Sequence[NfsExport] = (),
    pyxis: bool = False,
    site_ranges: Sequence[str] = PRIVATE_RANGES,
) -> dict[str, Any]:
    """The LoginSet spec of one login pool (pure: tested directly). `pyxis`: the login image with Pyxis, whose SPANK
    plugin gives srun its `--container-image` options (srun refuses options no loaded plugin registered).
    `site_ranges`: the ssh clients when the login's exposure names none."""
    exposed, exposure = load_balancer_exposure(login.exposure.ranges(site_ranges))
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
            "metadata": {"annotations": {**metallb_service_annotations(login.pool, login.address), **exposed}},
            "spec": {"type": "LoadBalancer", **exposure},
        },
        "template": {"spec": pod_spec},
    }
    if login.root_ssh_authorized_keys:
        spec["rootSshAuthorizedKeys"] = "\n".join(login.root_ssh_authorized_keys) + "\n"
    return spec


def key_refs() -> dict[str, Any]:
    """The references to the auth/slurm and JWT keys that the Controller and the Accounting share."""
    return {
        "slurmKeyRef": {"name": SLURM_KEY_SECRET, "key": "slurm.key"},
        "jwtKeyRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"},
    }


def config_files(cfg: SlurmConfig, hosts: Sequence[Host] = ()) -> dict[str, str]:
    """The files of the `slurm-config-extra` ConfigMap, which the Controller lists in `configFileRefs`: cgroup.conf,
    job_container.conf (each job its own /dev/shm), gres.conf where nodesets have GRES, topology files, plugstack.conf
    with Pyxis."""
    files = {"cgroup.conf": cgroup_conf(cfg), "job_container.conf": job_container_conf()}
    gres = gres_conf(cfg)
    if gres is not None:
        files["gres.conf"] = gres
    files.update(topology_files(cfg, hosts))
    if cfg.pyxis_enabled:
        files["plugstack.conf"] = PYXIS_PLUGSTACK
    return files


def script_files(scripts: Sequence[Script], settings: Mapping[str, str]) -> dict[str, str]:
    """The data of a prolog or epilog scripts ConfigMap: each script's text with its settings block filled in."""
    return {s.name: apply_settings(script_text(s), settings) for s in scripts}


def controller_spec(
    cfg: SlurmConfig,
    *,
    storage_class: str | None,
    rdma: bool = False,
    metrics: bool = False,
    prolog: bool = False,
    epilog: bool = False,
    outside: Sequence[str] | None = PRIVATE_RANGES,
    passwd: Sequence[PasswdEntry] = (),
) -> dict[str, Any]:
    """The Controller spec (pure: tested directly). `storage_class`: of the state volume (None: the cluster
    default); `rdma`: fabrics exist (controller_extra_conf); `metrics`: slurmctld's OpenMetrics endpoints and the
    operator's ServiceMonitor; `prolog`/`epilog`: the scripts ConfigMaps exist; `outside`: who may reach its
    LoadBalancer (controller_ranges; None: public); `passwd`: users slurmctld must find by name
    (components/layers/slurm/passwd.py)."""
    accounting = cfg.accounting.enabled
    spec: dict[str, Any] = {
        "clusterName": cfg.cluster_name,
        **key_refs(),
        "extraConf": controller_extra_conf(cfg, accounting=accounting, rdma=rdma, metrics=metrics),
        "configFileRefs": [{"name": "slurm-config-extra"}],
        "slurmctld": {
            "image": Images.SLURMCTLD.ref,
            "resources": container_resources(cfg.controller.cpu, cfg.controller.memory),
        },
        # A Slurm configuration change becomes `scontrol reconfigure` by the operator's sidecar (it watches every file
        # under /etc/slurm, the referenced ConfigMaps too) instead of a new slurmctld pod that only a slurm.conf change
        # makes (slurm-operator controller_app.go@v1.2.1:106-119,164-168,
        # internal/builder/controllerbuilder/scripts/reconfigure.sh@v1.2.1:13-25); what 26.05.3 then does with each
        # change: offline/diff/slurm_outcomes.json. The sidecar (tini, bash, find, sha256sum,
        # scontrol) runs in the slurmctld image, as the operator's chart has it (helm/slurm/values.yaml@v1.2.1:195-201),
        # which installs tini and slurm-smd-client (SlinkyProject/containers schedmd/slurm/26.05/ubuntu26.04/Dockerfile
        # @05efda0:107-108,143).
        "inplaceReconfigure": True,
        "reconfigure": {"image": Images.SLURMCTLD.ref, "resources": container_resources("10m", "32Mi", "128Mi")},
        "logfile": {"image": Images.ALPINE.ref, "resources": container_resources("10m", "16Mi", "64Mi")},
        "persistence": {
            "enabled": True,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": cfg.controller.storage.size}},
            **({"storageClassName": storage_class} if storage_class else {}),
        },
    }
    if metrics:
        # The operator sets MetricsType=metrics/openmetrics and makes a ServiceMonitor for
        # /metrics/{jobs,nodes,partitions,scheduler} on the controller service.
        spec["metrics"] = {"enabled": True, "serviceMonitor": {"enabled": True}}
    if prolog:
        spec["prologScriptRefs"] = [{"name": "slurm-prolog-scripts"}]
    if epilog:
        spec["epilogScriptRefs"] = [{"name": "slurm-epilog-scripts"}]
    if accounting:
        spec["accountingRef"] = {"name": CONTROLLER}
    if passwd:
        spec["template"], mount = passwd_overlay(passwd, Images.SLURMCTLD.ref)
        spec["slurmctld"]["volumeMounts"] = [mount]
    if cfg.controller.service is not None:
        exposed, exposure = load_balancer_exposure(outside)
        annotations = metallb_service_annotations(cfg.controller.service.pool, cfg.controller.service.address)
        spec["service"] = {"metadata": {"annotations": {**annotations, **exposed}}, "spec": {"type": "LoadBalancer", **exposure}}
    return spec


def accounting_spec(
    cfg: SlurmConfig, *, host: str, port: int, database: str, user: str, passwd: Sequence[PasswdEntry] = ()
) -> dict[str, Any]:
    """The Accounting spec: slurmdbd on the database layer's endpoint (its password in DB_PASSWORD_SECRET);
    `passwd`: users slurmdbd must find by name (components/layers/slurm/passwd.py)."""
    spec: dict[str, Any] = {
        **key_refs(),
        "slurmdbd": {
            "image": Images.SLURMDBD.ref,
            "resources": container_resources(cfg.accounting.cpu, cfg.accounting.memory),
        },
        "storageConfig": {
            "host": host,
            "port": port,
            "database": database,
            "username": user,
            "passwordKeyRef": {"name": DB_PASSWORD_SECRET, "key": "password"},
        },
    }
    if passwd:
        spec["template"], mount = passwd_overlay(passwd, Images.SLURMDBD.ref)
        spec["slurmdbd"]["volumeMounts"] = [mount]
    return spec


def restapi_spec(cfg: SlurmConfig) -> dict[str, Any]:
    """The RestApi spec: slurmrestd in front of the Controller."""
    return {
        "controllerRef": {"name": CONTROLLER},
        "replicas": cfg.restapi.replicas,
        "slurmrestd": {
            "image": Images.SLURMRESTD.ref,
            "resources": container_resources("100m", "128Mi", "512Mi"),
        },
    }


def operator_values() -> dict[str, Any]:
    """The slurm-operator chart's values (its CRDs come from the slurm-operator-crds chart)."""
    return {
        "crds": {"enabled": False},
        # Security contexts for `restricted` come from components/chart_security.py (ChartDeployer).
        "operator": {"resources": container_resources("100m", "128Mi", "512Mi")},
        # The webhook's serving certificate comes from cert-manager.
        "webhook": {"resources": container_resources("50m", "64Mi", "256Mi")},
    }


def controller_host(namespace: str) -> str:
    """slurmctld's address inside the cluster (the operator's controller Service)."""
    return f"{CONTROLLER}-controller.{namespace}.svc.cluster.local"


# --- NetworkPolicy allows ----------------------------------------------------------------------------------------
# Users' code runs in the Slurm namespace (login and compute pods) beside the daemons that hold the keys and the
# database password: no same-namespace allow; each rule names its component and its peers. The flows are Slurm's
# own (Slurm 26.05.3 doc/html/network.shtml); the operator reaches slurmrestd (slurm-operator v1.2.1
# internal/controller/slurmclient/slurmclient_sync.go). Labels and ports: slurm-operator v1.2.1
# internal/builder/labels/labels.go (AppLabel), internal/builder/common/const.go, restapibuilder/restapi_app.go.

SLURMD_POD = {"app.kubernetes.io/name": "slurmd"}
SLURMCTLD_POD = {"app.kubernetes.io/name": "slurmctld"}
SLURMDBD_POD = {"app.kubernetes.io/name": "slurmdbd"}
SLURMRESTD_POD = {"app.kubernetes.io/name": "slurmrestd"}
LOGIN_POD = {"app.kubernetes.io/name": "login"}
DIRSRV_POD = {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "directory"}
SLURMDBD_PORT, SLURMRESTD_PORT = 6819, 6820
USER_CODE = ("login", "slurmd")
"""The pods where users' code runs."""
SLURM_CLIENTS = ("slurmctld", "login", "slurmd")
"""The pods that reach slurmd: slurmctld, and srun on the login and compute pods."""


def slurm_bare_metal_allows(
    bare_metal: Sequence[str], srun_ports: tuple[int, int], job_ports: tuple[int, int] | None = None
) -> list[Allow]:
    """Slurm traffic between the Slurm namespace's pods and bare-metal Slurm hosts, and nothing else: slurmd on either
    side reaching slurmd on the other (6818, the launch fan-out), slurmstepd reaching the srun that started the step
    (SrunPortRange, on login pods or hosts), and the ranks' own traffic (`job_ports`, controller.jobPortRange, the
    compute pods' and hosts' ephemeral ports) both ways. slurmctld takes the hosts in its own rule."""
    if not bare_metal:
        return []
    cidrs = tuple(bare_metal)
    srun = Port(srun_ports[0], end_port=srun_ports[1])
    allows = [
        Allow("allow-ingress-bare-metal-slurmd", "ingress", (Port(SLURMD_PORT),), cidrs=cidrs, pod_labels=SLURMD_POD),
        Allow("allow-ingress-bare-metal-srun", "ingress", (srun,), cidrs=cidrs, pod_apps=USER_CODE),
        Allow("allow-egress-bare-metal-slurmd", "egress", (Port(SLURMD_PORT),), cidrs=cidrs, pod_apps=SLURM_CLIENTS),
        Allow("allow-egress-bare-metal-srun", "egress", (srun,), cidrs=cidrs, pod_labels=SLURMD_POD),
    ]
    if job_ports is not None:
        ranks = Port(job_ports[0], end_port=job_ports[1])
        allows += [
            Allow("allow-ingress-bare-metal-job-ranks", "ingress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
            Allow("allow-egress-bare-metal-job-ranks", "egress", (ranks,), cidrs=cidrs, pod_labels=SLURMD_POD),
        ]
    return allows


def operator_namespace_allows(slurm_namespace: str) -> list[Allow]:
    """The operator's namespace: the API server, its webhook (called by the API server), and slurmrestd and slurmctld
    of the Slurm namespace (it drains nodes through slurmrestd before deleting pods)."""
    peers = (PodPeer(slurm_namespace, SLURMRESTD_POD), PodPeer(slurm_namespace, SLURMCTLD_POD))
    return [
        egress_to_apiserver(),
        ingress_from_apiserver("allow-ingress-webhook", Port(9443)),
        Allow("allow-egress-slurm", "egress", (Port(SLURMCTLD_PORT), Port(SLURMRESTD_PORT)), pod_peers=peers),
    ]


def controller_ranges(cfg: SlurmConfig, bare_metal: Sequence[str], site_ranges: Sequence[str]) -> tuple[str, ...] | None:
    """Who may reach slurmctld from outside the cluster: its service's exposure (default: the bare-metal hosts' subnets
    when hosts join Slurm, else the site's ranges); None: public; () without a service."""
    service = cfg.controller.service
    return () if service is None else service.exposure.ranges(bare_metal or site_ranges)


def slurm_namespace_allows(
    cfg: SlurmConfig, bare_metal: Sequence[str], *, site_ranges: Sequence[str], monitored: bool = False, dcgm: bool = False
) -> list[Allow]:
    """The Slurm namespace, component by component: ssh to each login set from its exposure; slurmctld from the
    namespace, the operator, monitoring and its service's ranges; slurmdbd from the namespace; slurmrestd from the
    operator; slurmd from slurmctld and srun; srun's ports from the compute pods; the compute pods among themselves;
    the database from slurmdbd only; LDAPS from the login pods only (only the login image has SSSD, slurm-operator
    #129); with Pyxis, HTTPS but the API server from the login and compute pods (image pulls); with `dcgm` (an active
    check runs `dcgmi diag` in the slurmd pods), the DCGM host engine from the compute pods; bare-metal hosts. No API
    server: no pod here holds a token."""
    ns, ctl = cfg.namespace, cfg.controller
    srun = Port(ctl.srun_port_range[0], end_port=ctl.srun_port_range[1])
    outside = controller_ranges(cfg, bare_metal, site_ranges)
    allows = []
    for index, login in enumerate(cfg.login_sets()):
        ranges = login.exposure.ranges(site_ranges)
        name = "allow-ingress-ssh" if index == 0 else f"allow-ingress-ssh-{login.name}"
        labels = {**LOGIN_POD, "app.kubernetes.io/instance": login.name}
        allows.append(Allow(name, "ingress", (Port(22),), cidrs=(ANYWHERE,) if ranges is None else ranges, pod_labels=labels))
    sources = (ns, OPERATOR_NAMESPACE, *(["monitoring"] if monitored else []))
    ctld = (Port(SLURMCTLD_PORT),)
    allows += [
        Allow(
            "allow-ingress-slurmctld",
            "ingress",
            ctld,
            namespaces=sources,
            cidrs=(ANYWHERE,) if outside is None else outside,
            pod_labels=SLURMCTLD_POD,
        ),
        Allow(
            "allow-ingress-slurmrestd",
            "ingress",
            (Port(SLURMRESTD_PORT),),
            namespaces=(OPERATOR_NAMESPACE,),
            pod_labels=SLURMRESTD_POD,
        ),
        Allow(
            "allow-ingress-slurmd",
            "ingress",
            (Port(SLURMD_PORT),),
            pod_peers=(PodPeer(ns, apps=SLURM_CLIENTS),),
            pod_labels=SLURMD_POD,
        ),
        Allow("allow-ingress-srun", "ingress", (srun,), pod_peers=(PodPeer(ns, SLURMD_POD),), pod_apps=USER_CODE),
        Allow("allow-ingress-between-compute-pods", "ingress", pod_peers=(PodPeer(ns, SLURMD_POD),), pod_labels=SLURMD_POD),
        Allow("allow-egress-slurmctld", "egress", ctld, pod_peers=(PodPeer(ns, SLURMCTLD_POD),)),
        Allow(
            "allow-egress-slurmd", "egress", (Port(SLURMD_PORT),), pod_peers=(PodPeer(ns, SLURMD_POD),), pod_apps=SLURM_CLIENTS
        ),
        Allow("allow-egress-srun", "egress", (srun,), pod_peers=(PodPeer(ns, apps=USER_CODE),), pod_labels=SLURMD_POD),
        Allow("allow-egress-between-compute-pods", "egress", pod_peers=(PodPeer(ns, SLURMD_POD),), pod_labels=SLURMD_POD),
        Allow(
            "allow-egress-directory", "egress", (Port(3636),), pod_peers=(PodPeer("directory", DIRSRV_POD),), pod_labels=LOGIN_POD
        ),
        *slurm_bare_metal_allows(bare_metal, ctl.srun_port_range, ctl.job_port_range),
    ]
    if cfg.accounting.enabled:
        mariadb = (PodPeer("database", {"app.kubernetes.io/name": "mariadb"}),)
        allows += [
            Allow("allow-ingress-slurmdbd", "ingress", (Port(SLURMDBD_PORT),), namespaces=(ns,), pod_labels=SLURMDBD_POD),
            Allow("allow-egress-slurmdbd", "egress", (Port(SLURMDBD_PORT),), pod_peers=(PodPeer(ns, SLURMDBD_POD),)),
            Allow("allow-egress-database", "egress", (Port(3306),), pod_peers=mariadb, pod_labels=SLURMDBD_POD),
        ]
    if dcgm:
        allows.append(
            Allow(
                "allow-egress-dcgm-hostengine",
                "egress",
                (Port(DCGM_HOSTENGINE_PORT),),
                namespaces=(GPU_OPERATOR_NAMESPACE,),
                pod_labels=SLURMD_POD,
            )
        )
    if cfg.pyxis_enabled:
        allows.append(
            Allow(
                "allow-egress-image-pulls", "egress", (Port(443),), cidrs=(ANYWHERE,), except_api_server=True, pod_apps=USER_CODE
            )
        )
    return allows

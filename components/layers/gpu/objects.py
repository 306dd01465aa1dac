"""GPU layer builders (pure): the operator's namespace allows, the gpu-operator chart's values, one function per part
of its ClusterPolicy (driver, dcgm-exporter, MIG manager), and the device plugin's and MIG manager's configuration
files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from ...k8s.resources import Allow, Port, container_resources, egress_to_apiserver, ingress_from_anywhere
from ...versions import ImagePin, Images
from .config import GpuOperatorConfig
from .dcgm_metrics import METRICS_CONFIG_MAP, dcgm_metrics_csv

NAMESPACE = "gpu-operator"
DCGM_EXPORTER_PORT = 9400
DCGM_SERVICE = "nvidia-dcgm"
DCGM_PORT = 5555
DCGM_POD_LABELS = {"app": "nvidia-dcgm"}
"""GPU Operator v26.7.0's DCGM host engine: DaemonSet nvidia-dcgm, pods labelled app=nvidia-dcgm, containerPort 5555,
no hostNetwork (assets/state-dcgm/0400_dcgm.yml), behind Service nvidia-dcgm with `internalTrafficPolicy: Local`
(assets/state-dcgm/0500_service.yaml)."""
MIG_CONFIG_MAP = "hpcforge-mig-parted-config"
DEVICE_PLUGIN_CONFIG_MAP = "hpcforge-device-plugin-config"


def operator_namespace_allows(dcgm_clients: Sequence[str] = ()) -> list[Allow]:
    """The operator's namespace: the API server, dcgm-exporter's metrics (scraped from the host network) and, from the
    namespaces in `dcgm_clients` (the Slurm namespace where an active check runs `dcgmi diag`), the DCGM host engine."""
    return [
        egress_to_apiserver(),
        ingress_from_anywhere("allow-ingress-dcgm-exporter", Port(DCGM_EXPORTER_PORT)),
        *(
            [
                Allow(
                    "allow-ingress-dcgm-hostengine",
                    "ingress",
                    (Port(DCGM_PORT),),
                    namespaces=tuple(dcgm_clients),
                    pod_labels=DCGM_POD_LABELS,
                )
            ]
            if dcgm_clients
            else []
        ),
    ]


def _image(pin: ImagePin) -> dict[str, str]:
    """The chart's `repository` / `image` / `version` triple of a pinned image."""
    repository, _, image = pin.repository.rpartition("/")
    return {"repository": repository, "image": image, "version": pin.tag}


def _operator_image() -> dict[str, str]:
    # operator/validator/nodeStatusExporter `version` is only a comment in the chart's values.yaml (default: the chart's
    # appVersion); it is set explicitly so that the pin is visible to the images-pinned policy
    # (offline/schema/values.py COMMENTED_VALUES lets the schema tier accept it).
    return _image(Images.GPU_OPERATOR)


def mig_config_name(pool: str) -> str:
    """The MIG manager configuration of a pool: nodes labelled `nvidia.com/mig.config=<this>` get its layout."""
    return f"hpcforge-{pool}"


def mig_parted_config(config: GpuOperatorConfig) -> str:
    """The MIG manager's `config.yaml` (mig-parted format): `all-disabled` plus one layout per configured pool."""
    configs: dict[str, Any] = {"all-disabled": [{"devices": "all", "mig-enabled": False}]}
    for pool, layout in sorted(config.mig_profiles.items()):
        configs[mig_config_name(pool)] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(layout)}]
    return yaml.safe_dump({"version": "v1", "mig-configs": configs}, sort_keys=False)


def device_plugin_config(config: GpuOperatorConfig) -> str:
    """The device plugin's configuration: the MIG strategy and, when asked for, time-slicing of every GPU."""
    document: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": config.mig_strategy}}
    if config.time_slicing_replicas > 1:
        document["sharing"] = {
            "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": config.time_slicing_replicas}]}
        }
    return yaml.safe_dump(document, sort_keys=False)


# The chart's default tolerations (values.yaml `daemonsets.tolerations`, `node-feature-discovery.worker.tolerations`):
# a list set in values replaces them, so hpcforge's lists start from these.
_OPERAND_TOLERATIONS: tuple[dict[str, str], ...] = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
_NFD_WORKER_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


def _tolerating(defaults: Sequence[dict[str, str]], taints: Sequence[str]) -> list[dict[str, str]]:
    """`defaults` plus a NoSchedule toleration of each taint key they do not cover."""
    covered = {t["key"] for t in defaults if t.get("operator") == "Exists"}
    extra = [{"key": key, "operator": "Exists", "effect": "NoSchedule"} for key in sorted(set(taints) - covered)]
    return [dict(t) for t in defaults] + extra


# Where the container toolkit finds containerd when hpcforge bootstraps the cluster itself (cluster.bootstrap): k0s and
# RKE2 run their own containerd, with their own socket and configuration. The operator reads CONTAINERD_CONFIG,
# RUNTIME_DROP_IN_CONFIG and CONTAINERD_SOCKET from the toolkit's env and mounts their directories into the toolkit;
# it ALWAYS gives the toolkit a drop-in file, /etc/containerd/conf.d/99-nvidia.toml unless RUNTIME_DROP_IN_CONFIG names
# another (gpu-operator v26.7.0 controllers/object_controls.go getRuntimeConfigFiles, transformRuntimeConfigAndSocketMounts).
# Toolkit v1.20.0 then writes the NVIDIA runtimes (a `plugins."io.containerd.grpc.v1.cri"` section, config version 2
# when the file it starts from is empty) into the drop-in, and `imports = ["<drop-in dir>/*.toml"]` into the top-level
# CONTAINERD_CONFIG (pkg/config/engine/containerd/config_drop_in.go `Save`, `ensureImports`; containerd.go `New`).
# - k0s v1.33.4+k0s.0 (containerd 1.7.27): k0s reads /etc/k0s/containerd.d/*.toml; a file with a CRI section is merged
#   into k0s's CRI config as a patch, any other is handed to containerd as an import (pkg/component/worker/containerd/
#   configurer.go `handleImports`, component.go `importsPath`). k0s's documented values (docs/runtime.md at that tag,
#   "Using nvidia-container-runtime": CONTAINERD_CONFIG=/etc/k0s/containerd.d/nvidia.toml) make nvidia.toml an
#   imports-only file pointing at /etc/containerd/conf.d/*.toml, whose CRI section containerd 1.7 then puts in place of
#   k0s's own: k0sproject/k0s#6547 (kubelet: "unknown service runtime.v1.RuntimeService"). So the drop-in goes into
#   containerd.d itself, as nvidia.toml (the file the documented values left there is replaced), where k0s merges it,
#   and the top-level file, whose imports line nothing must read, lives outside it. RUNTIME_CONFIG_SOURCE=file: the
#   toolkit starts from that file, not `containerd config dump`, which fails against k0s's static containerd
#   (NVIDIA/gpu-operator#1323), nor k0s's merged CRI config, whose every value the drop-in would then pin.
# - RKE2 v1.33.4+rke2r1 (containerd 2): RKE2's own documented and tested values for the GPU Operator (rancher/rke2-docs
#   docs/add-ons/gpu_operators.md, v26.3.x: CONTAINERD_SOCKET only). RKE2 finds the runtimes the toolkit installs in
#   /usr/local/nvidia/toolkit and writes them into the config it renders; the toolkit's own files stay in /etc/containerd,
#   which RKE2's containerd does not read. Pointing CONTAINERD_CONFIG at RKE2's template, as main did, made the
#   toolkit write an imports-only config.toml.tmpl that replaces RKE2's template, and with containerd 2 RKE2 renders
#   config-v3.toml.tmpl first (docs/advanced.md "Configuring containerd").
K0S_CONTAINERD_DROP_INS = "/etc/k0s/containerd.d"
"""k0s's drop-in directory (v1.33.4+k0s.0 pkg/component/worker/containerd/component.go `importsPathPosix`)."""
CONTAINERD_PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "k0s": (
        ("CONTAINERD_CONFIG", "/etc/k0s/nvidia-container-toolkit/config.toml"),
        ("RUNTIME_DROP_IN_CONFIG", f"{K0S_CONTAINERD_DROP_INS}/nvidia.toml"),
        ("CONTAINERD_SOCKET", "/run/k0s/containerd.sock"),
        ("RUNTIME_CONFIG_SOURCE", "file"),
    ),
    "rke2": (("CONTAINERD_SOCKET", "/run/k3s/containerd/containerd.sock"),),
}


def toolkit_env(distribution: str | None) -> list[dict[str, str]]:
    """The container toolkit's env for a cluster hpcforge bootstraps (`k0s`, `rke2`); empty for an existing cluster."""
    return [{"name": name, "value": value} for name, value in CONTAINERD_PATHS.get(distribution or "", ())]


def driver_values(config: GpuOperatorConfig, *, gpudirect_rdma: bool = False) -> dict[str, Any]:
    """`driver`: the operator's driver container (only with `driver.managed`), at the configured or pinned version."""
    driver_pin = (
        Images.GPU_DRIVER if config.driver.version is None else ImagePin(Images.GPU_DRIVER.repository, config.driver.version)
    )
    return {
        "enabled": config.driver.managed,
        **_image(driver_pin),
        "manager": _image(Images.DRIVER_MANAGER),
        # GPUDirect RDMA: the driver container builds and loads nvidia-peermem against the hosts' OFED (gpu-operator
        # v26.7.0 api/nvidia/v1/clusterpolicy_types.go GPUDirectRDMASpec). Only where the operator runs the driver.
        **({"rdma": {"enabled": True, "useHostMofed": True}} if gpudirect_rdma and config.driver.managed else {}),
    }


def dcgm_exporter_values(config: GpuOperatorConfig, *, site_scrapes_dcgm: bool = False) -> dict[str, Any]:
    """`dcgmExporter`: hpcforge's metric list, the operator's ServiceMonitor unless the site scrapes it itself, the
    Slurm job mapping directory."""
    return {
        "enabled": config.dcgm_exporter,
        **_image(Images.DCGM_EXPORTER),
        # hpcforge's metric list: the image default leaves out what the GPU alerts watch (dcgm_metrics.py).
        "config": {"name": METRICS_CONFIG_MAP, "create": True, "data": dcgm_metrics_csv()},
        "serviceMonitor": {"enabled": not site_scrapes_dcgm},
        # The operator mounts the host directory into dcgm-exporter and sets DCGM_HPC_JOB_MAPPING_DIR
        # (gpu-operator v26.7.0 controllers/object_controls.go); the GPU prolog writes it (config.py `job_mapping_dir`).
        **(
            {"hpcJobMapping": {"enabled": True, "directory": config.job_mapping_dir}}
            if config.job_mapping_dir is not None
            else {}
        ),
    }


def mig_manager_values(config: GpuOperatorConfig) -> dict[str, Any]:
    """`migManager`: on with a MIG strategy; the per-pool layouts (mig_parted_config) when some are configured."""
    return {
        "enabled": config.mig_strategy != "none",
        **_image(Images.MIG_MANAGER),
        "config": {
            "default": "all-disabled",
            "create": bool(config.mig_profiles),
            "name": MIG_CONFIG_MAP if config.mig_profiles else "",
            "data": {"config.yaml": mig_parted_config(config)} if config.mig_profiles else {},
        },
    }


def gpu_operator_values(
    config: GpuOperatorConfig,
    *,
    site_scrapes_dcgm: bool = False,
    gpu_pool_taints: Sequence[str] = (),
    distribution: str | None = None,
    gpudirect_rdma: bool = False,
) -> dict[str, Any]:
    """Helm values of the gpu-operator chart (pure: tested directly and checked against the chart's values.yaml).

    `site_scrapes_dcgm`: the observability layer scrapes dcgm-exporter with its own PodMonitor; the operator's
    ServiceMonitor (the chart's default `dcgmExporter.serviceMonitor.enabled: true`; the operator creates
    `nvidia-dcgm-exporter` where the CRD exists, gpu-operator v26.7.0 controllers/object_controls.go, and the site's
    Prometheus selects every ServiceMonitor) is then switched off, or every GPU series would be scraped twice and every
    GPU alert fire twice.

    `gpu_pool_taints`: taint keys of the GPU node pools. The operands (driver, toolkit, device plugin, DCGM...: the
    ClusterPolicy's `daemonsets.tolerations`) and Node Feature Discovery's worker, whose labels decide where the
    operator puts them, must tolerate them, or the device plugin never runs where the GPUs are; the chart tolerates only
    `nvidia.com/gpu`.

    `distribution`: `k0s` or `rke2` when hpcforge bootstraps the cluster (toolkit_env). `gpudirect_rdma`: GPU nodes
    reach an RDMA fabric; with the operator's driver it also loads nvidia-peermem (`driver.rdma`, with the hosts'
    OFED/DOCA: `useHostMofed`), with a preinstalled driver that is the hosts' prerequisite (docs/layers/gpu.md)."""
    return {
        "operator": {
            **_operator_image(),
            # Both are Helm hooks that helm.v4.Chart drops (layer.py's docstring).
            "upgradeCRD": False,
            "cleanupCRD": False,
            "resources": container_resources("200m", "128Mi", "512Mi"),
        },
        # The validator's plugin check runs a pod that requests one nvidia.com/gpu (gpu-operator v26.7.0
        # cmd/nvidia-validator/main.go: --with-workload, env WITH_WORKLOAD, default true). A GPU slurmd pod holds every
        # GPU of its node, so after a restart the validation pod stays Pending and the validator never reports the
        # plugin ready: validate the plugin without the workload (the resource being advertised is still checked).
        "validator": {**_operator_image(), "plugin": {"env": [{"name": "WITH_WORKLOAD", "value": "false"}]}},
        "nodeStatusExporter": _operator_image(),
        "driver": driver_values(config, gpudirect_rdma=gpudirect_rdma),
        "toolkit": {
            "enabled": config.toolkit,
            **_image(Images.CONTAINER_TOOLKIT),
            **({"env": toolkit_env(distribution)} if toolkit_env(distribution) else {}),
        },
        "devicePlugin": {
            "enabled": config.device_plugin,
            **_image(Images.DEVICE_PLUGIN),
            "config": {
                "create": True,
                "name": DEVICE_PLUGIN_CONFIG_MAP,
                "default": "hpcforge",
                "data": {"hpcforge": device_plugin_config(config)},
            },
        },
        "gfd": {"enabled": config.gpu_feature_discovery, **_image(Images.DEVICE_PLUGIN)},
        "dcgm": {"enabled": config.dcgm, **_image(Images.DCGM)},
        "dcgmExporter": dcgm_exporter_values(config, site_scrapes_dcgm=site_scrapes_dcgm),
        # The operator passes the strategy to the device plugin and GFD as MIG_STRATEGY (gpu-operator v26.7.0
        # controllers/object_controls.go applyMIGConfiguration), which wins over the plugin's config file: `none` must
        # reach it as none (the CRD's enum accepts none;single;mixed), or one GPU left in MIG mode is offered as MIG
        # devices and the node's nvidia.com/gpu count drops below the slurmd pod's limit.
        "mig": {"strategy": config.mig_strategy},
        "migManager": mig_manager_values(config),
        "daemonsets": {
            "labels": {"app.kubernetes.io/part-of": "hpcforge"},
            "tolerations": _tolerating(_OPERAND_TOLERATIONS, gpu_pool_taints),
        },
        "node-feature-discovery": {"worker": {"tolerations": _tolerating(_NFD_WORKER_TOLERATIONS, gpu_pool_taints)}},
    }

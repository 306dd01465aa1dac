"""Issue 28 items 1, 2, 4, 5, 6, 7, 9: what GPU nodes need from the pod and from the GPU Operator, proved on what the
program renders (the NodeSets, the Controller's slurm.conf lines, the gpu-operator chart's values) and on the
configuration checks.

Upstream, at the pins (components/versions.py):
- slurm-operator v1.2.1 internal/builder/workerbuilder/worker_app.go: the slurmd pod it builds mounts nothing at
  /dev/shm and sets no hostPID (`Base: corev1.PodSpec{...}`, `nodesetVolumes`); the NodeSet's template is merged in.
- gpu-operator v26.7.0 controllers/object_controls.go `applyMIGConfiguration`: MIG_STRATEGY=<mig.strategy> on the
  device plugin and GFD, which wins over the plugin's config file; api/nvidia/v1/clusterpolicy_types.go MIGSpec:
  enum none;single;mixed. `getRuntimeConfigFiles`/`getRuntimeSocketFile`: CONTAINERD_CONFIG/CONTAINERD_SOCKET from
  the toolkit's env, else /etc/containerd/config.toml and /run/containerd/containerd.sock.
  cmd/nvidia-validator/main.go: the plugin validation runs a GPU workload unless WITH_WORKLOAD=false.
- slurm.conf(5) of Slurm 26.05 (../shared/slurm): PrologEpilogTimeout, "The default behavior is to wait
  indefinitely"; "If the Prolog ... time out, the job is requeued if possible and the node is drained."
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from components.layers.gpu.config import GpuOperatorConfig
from components.layers.gpu.objects import gpu_operator_values, toolkit_env
from components.site.loader import ConfigError, load_config
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config, require_shared
from tests.scripts.slurm.test_gpu_health import EPILOG, run_script
from tests.test_layers import objects, one


def _prod_with(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def _nodeset(stack: RecordedStack, name: str) -> dict[str, Any]:
    return one(stack, "NodeSet", "slurm", name)["spec"]


# --- item 1: /dev/shm ---------------------------------------------------------------------------------------------


@pytest.mark.program
def test_gpu_nodesets_mount_a_memory_backed_dev_shm_sized_from_config(prod_stack: RecordedStack) -> None:
    for name, size in (("gpu-h100", "65536Mi"), ("gpu-a100", "65536Mi")):  # a quarter of 1900Gi / 960Gi, at most 64Gi
        spec = _nodeset(prod_stack, name)
        volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
        assert volumes["dev-shm"] == {"name": "dev-shm", "emptyDir": {"medium": "Memory", "sizeLimit": size}}
        assert {"name": "dev-shm", "mountPath": "/dev/shm"} in spec["slurmd"]["volumeMounts"]
    cpu = _nodeset(prod_stack, "cpu")
    assert "dev-shm" not in {v["name"] for v in cpu["template"]["spec"].get("volumes", [])}


def test_shm_size_is_configurable_per_nodeset_and_must_stay_below_the_memory_limit() -> None:
    config = _prod_with(lambda v: v["hpcforge:slurm"]["nodesets"][3].update(shmSize="128Gi"))
    assert config.slurm.nodesets[3].effective_shm_size == "128Gi"
    small = _prod_with(lambda v: v["hpcforge:slurm"]["nodesets"][3].update(memory="64Gi", reservedMemory="8Gi"))
    assert small.slurm.nodesets[3].effective_shm_size == "16384Mi"
    with pytest.raises(ConfigError, match=re.escape("hpcforge:slurm.nodesets[3].shmSize: nodeset 'gpu-h100': /dev/shm of 2Ti")):
        _prod_with(lambda v: v["hpcforge:slurm"]["nodesets"][3].update(shmSize="2Ti"))


# --- item 2: migStrategy none -------------------------------------------------------------------------------------


@pytest.mark.program
def test_mig_strategy_none_reaches_the_cluster_policy_as_none(prod_stack: RecordedStack) -> None:
    values = one(prod_stack, "Application", "argocd", "gpu-operator")["spec"]["source"]["helm"]["valuesObject"]
    assert values["mig"] == {"strategy": "none"}
    plugin = yaml.safe_load(values["devicePlugin"]["config"]["data"]["hpcforge"])
    assert plugin["flags"]["migStrategy"] == "none"
    crd = yaml.safe_load(require_shared("crds", "gpu-operator-26.7.0", "ClusterPolicy.yaml").read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["mig"]
    assert schema["properties"]["strategy"]["enum"] == ["none", "single", "mixed"]


# --- item 4: the epilog in a pod ------------------------------------------------------------------------------------


@pytest.mark.program
def test_slurmd_pods_have_no_host_pid_namespace_so_the_epilog_names_memory_without_a_process(
    prod_stack: RecordedStack, tmp_path: Any
) -> None:
    for resource in objects(prod_stack, "NodeSet").values():
        assert "hostPID" not in resource.inputs["spec"]["template"]["spec"]
    # What a pod's nvidia-smi shows of a leftover: memory in use, no process of its PID namespace.
    result = run_script(EPILOG, "leftover-memory.txt", tmp_path, gpus="0")
    assert result.returncode == 1
    assert "MiB of memory still in use by no process visible here (allowed: 1024 MiB)" in result.stderr


# --- item 5: PrologEpilogTimeout -----------------------------------------------------------------------------------


@pytest.mark.program
def test_prod_renders_a_prolog_epilog_timeout(prod_stack: RecordedStack) -> None:
    conf = objects(prod_stack, "Controller")["slurm/slurm"].inputs["spec"]["extraConf"]
    assert "\nPrologEpilogTimeout=300\n" in conf


def test_a_prolog_epilog_timeout_shorter_than_the_gpu_checks_own_is_refused() -> None:
    def short(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["controller"]["timeouts"]["prologEpilog"] = 60

    with pytest.raises(ConfigError, match=re.escape("hpcforge:slurm.controller.timeouts.prologEpilog: 60s leaves")):
        _prod_with(short)


# --- item 6: the container toolkit on k0s and RKE2 -----------------------------------------------------------------


def test_toolkit_is_pointed_at_k0s_and_rke2_containerd() -> None:
    config = GpuOperatorConfig()
    assert "env" not in gpu_operator_values(config)["toolkit"]  # an existing cluster: the operator's defaults
    k0s = {e["name"]: e["value"] for e in gpu_operator_values(config, distribution="k0s")["toolkit"]["env"]}
    assert k0s == {
        "CONTAINERD_CONFIG": "/etc/k0s/nvidia-container-toolkit/config.toml",
        "RUNTIME_DROP_IN_CONFIG": "/etc/k0s/containerd.d/nvidia.toml",
        "CONTAINERD_SOCKET": "/run/k0s/containerd.sock",
        "RUNTIME_CONFIG_SOURCE": "file",
    }
    # RKE2's documented values for the GPU Operator (rancher/rke2-docs docs/add-ons/gpu_operators.md): the socket only.
    assert toolkit_env("rke2") == [{"name": "CONTAINERD_SOCKET", "value": "/run/k3s/containerd/containerd.sock"}]


# --- item 7: GPUDirect RDMA ---------------------------------------------------------------------------------------


def test_operator_managed_driver_loads_nvidia_peermem_where_gpus_reach_rdma() -> None:
    managed = GpuOperatorConfig.model_validate({"driver": {"managed": True}})
    assert gpu_operator_values(managed, gpudirect_rdma=True)["driver"]["rdma"] == {"enabled": True, "useHostMofed": True}
    assert "rdma" not in gpu_operator_values(managed)["driver"]
    # A preinstalled driver (the default): nvidia-peermem or DMA-BUF is the hosts' prerequisite, checked by evidence.
    assert "rdma" not in gpu_operator_values(GpuOperatorConfig(), gpudirect_rdma=True)["driver"]


# --- item 9 ---------------------------------------------------------------------------------------------------------


@pytest.mark.program
def test_the_plugin_validator_does_not_ask_for_a_gpu_the_slurmd_pod_holds(prod_stack: RecordedStack) -> None:
    values = one(prod_stack, "Application", "argocd", "gpu-operator")["spec"]["source"]["helm"]["valuesObject"]
    assert values["validator"]["plugin"]["env"] == [{"name": "WITH_WORKLOAD", "value": "false"}]


def test_a_dcgm_diag_level_that_no_pod_can_run_is_refused() -> None:
    def level(values: dict[str, Any]) -> None:
        values.setdefault("hpcforge:gpu", {}).setdefault("health", {})["dcgmDiagLevel"] = 1

    with pytest.raises(ConfigError, match=re.escape("hpcforge:gpu.health.dcgmDiagLevel: level 1 would do nothing")):
        _prod_with(level)


# --- item 8: NCCL pointed at the rails ---------------------------------------------------------------------------


@pytest.mark.program
def test_rdma_gpu_pods_point_nccl_at_their_rails_and_bootstrap_on_the_pod_network(prod_stack: RecordedStack) -> None:
    h100 = _nodeset(prod_stack, "gpu-h100")
    limits = h100["slurmd"]["resources"]["limits"]
    assert {f"rdma/ib_rail{i}" for i in range(4)} <= set(limits)
    mounts = {m["mountPath"]: m for m in h100["slurmd"]["volumeMounts"]}
    assert mounts["/etc/nccl.conf"] == {
        "name": "nccl-conf",
        "mountPath": "/etc/nccl.conf",
        "subPath": "nccl.conf",
        "readOnly": True,
    }
    assert mounts["/etc/enroot/environ.d/90-hpcforge-nccl.env"]["subPath"] == "nccl.env"  # Pyxis containers
    volumes = {v["name"]: v for v in h100["template"]["spec"]["volumes"]}
    assert volumes["nccl-conf"] == {"name": "nccl-conf", "configMap": {"name": "slurm-nccl-gpu-h100"}}
    data = one(prod_stack, "ConfigMap", "slurm", "slurm-nccl-gpu-h100")["data"]
    assert data["nccl.conf"] == data["nccl.env"] == "NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3\nNCCL_SOCKET_IFNAME==eth0\n"
    # The A100s' RoCE rails are SR-IOV: their virtual functions' names are not known in advance, so no NCCL_IB_HCA.
    assert one(prod_stack, "ConfigMap", "slurm", "slurm-nccl-gpu-a100")["data"]["nccl.conf"] == "NCCL_SOCKET_IFNAME==eth0\n"
    assert "nccl-conf" not in {v["name"] for v in _nodeset(prod_stack, "cpu")["template"]["spec"].get("volumes", [])}


@pytest.mark.program
def test_a_cluster_hpcforge_bootstraps_with_rke2_points_the_toolkit_at_rke2s_containerd(tmp_path: Any) -> None:
    from tests.components.layers.bootstrap.test_rke2 import RKE2
    from tests.helpers import run_stack_file, write_variant

    def with_rke2(values: dict[str, Any]) -> None:
        values["hpcforge:cluster"] = {"bootstrap": RKE2}
        values["hpcforge:sshPrivateKey"] = "-----BEGIN OPENSSH PRIVATE KEY-----\\nAAAA\\n-----END OPENSSH PRIVATE KEY-----"
        values["hpcforge:kubernetes"].pop("context", None)

    stack = run_stack_file(write_variant(tmp_path, "prod", with_rke2), "prod")
    values = one(stack, "Application", "argocd", "gpu-operator")["spec"]["source"]["helm"]["valuesObject"]
    assert values["toolkit"]["env"] == toolkit_env("rke2")

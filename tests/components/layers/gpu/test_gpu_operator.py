"""The NVIDIA GPU Operator layer: values from typed config, hooks handled, images pinned, MIG checks."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from components.layers.gpu.config import GpuOperatorConfig
from components.layers.gpu.objects import gpu_operator_values, mig_parted_config
from components.platform import planned_charts
from components.site.checks.gpu import gpu_operator_enabled
from components.site.loader import ConfigError, load_config
from components.versions import Charts, Images
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config, tolerates
from tests.test_layers import one


def operator(**values: Any) -> GpuOperatorConfig:
    return GpuOperatorConfig.model_validate(values)


def test_defaults_preinstalled_driver_and_everything_else_on() -> None:
    values = gpu_operator_values(operator())
    assert values["driver"]["enabled"] is False
    assert values["toolkit"]["enabled"] and values["devicePlugin"]["enabled"] and values["gfd"]["enabled"]
    assert values["dcgm"]["enabled"] and values["dcgmExporter"]["enabled"]
    assert values["migManager"]["enabled"] is False
    plugin = yaml.safe_load(values["devicePlugin"]["config"]["data"]["hpcforge"])
    assert plugin == {"version": "v1", "flags": {"migStrategy": "none"}}  # no time-slicing by default


def test_chart_hooks_are_switched_off() -> None:
    # helm.v4.Chart drops hooks: the CRD-upgrade Job must not be relied on (CRDs come from the chart's crds/).
    values = gpu_operator_values(operator())
    assert values["operator"]["upgradeCRD"] is False and values["operator"]["cleanupCRD"] is False


def test_images_are_the_pins() -> None:
    values = gpu_operator_values(operator(driver={"managed": True}))
    assert values["driver"] | {} == {
        "enabled": True,
        "repository": "nvcr.io/nvidia",
        "image": "driver",
        "version": Images.GPU_DRIVER.tag,
        "manager": {"repository": "nvcr.io/nvidia/cloud-native", "image": "k8s-driver-manager", "version": "v0.12.0"},
    }
    assert values["dcgmExporter"]["version"] == Images.DCGM_EXPORTER.tag
    assert values["operator"]["version"] == values["validator"]["version"] == Images.GPU_OPERATOR.tag
    # Set explicitly although the chart would default to its appVersion, which equals the chart version here.
    assert Charts.GPU_OPERATOR.version == Images.GPU_OPERATOR.tag
    assert gpu_operator_values(operator(driver={"managed": True, "version": "580.159.04"}))["driver"]["version"] == "580.159.04"


def test_mig_layout_per_pool_and_time_slicing() -> None:
    config = operator(migStrategy="mixed", migProfiles={"gpu-a100": {"1g.10gb": 7}}, timeSlicingReplicas=4)
    values = gpu_operator_values(config)
    assert values["mig"]["strategy"] == "mixed" and values["migManager"]["enabled"] is True
    parted = yaml.safe_load(values["migManager"]["config"]["data"]["config.yaml"])
    assert parted["mig-configs"]["hpcforge-gpu-a100"] == [{"devices": "all", "mig-enabled": True, "mig-devices": {"1g.10gb": 7}}]
    assert parted == yaml.safe_load(mig_parted_config(config))
    plugin = yaml.safe_load(values["devicePlugin"]["config"]["data"]["hpcforge"])
    assert plugin["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]


def _prod_with(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def test_prod_deploys_the_operator_and_plans_its_chart() -> None:
    prod = load_config(raw_config(config_values("prod")))
    assert gpu_operator_enabled(prod)
    assert any(use.pin == Charts.GPU_OPERATOR for use in planned_charts(prod))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda v: v.setdefault("hpcforge:gpu", {}).setdefault("operator", {}).update({"devicePlugin": False}),
            "hpcforge:gpu.operator.devicePlugin: nodesets request GPUs",
        ),
        (
            lambda v: v.setdefault("hpcforge:gpu", {}).setdefault("operator", {}).update({"enabled": False}),
            "hpcforge:gpu.operator.enabled: nodesets request GPUs",
        ),
        (
            lambda v: (
                v.setdefault("hpcforge:gpu", {}).setdefault("operator", {}).update({"migProfiles": {"cpu": {"1g.10gb": 7}}})
            ),
            "'cpu' is not a node pool with GPUs",
        ),
        (
            lambda v: v["hpcforge:slurm"]["nodesets"][2].update(
                {
                    "gpus": {"type": "1g.10gb", "count": 56, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"},
                    "replicas": 0,
                }
            ),
            "migStrategy is 'none'",
        ),
        (
            lambda v: v.setdefault("hpcforge:gpu", {}).update(
                {"operator": {"migStrategy": "mixed", "migProfiles": {"gpu-a100": {"3g.40gb": 1, "1g.10gb": 4}}}}
            ),
            "hpcforge:slurm.nodesets[2].gpus.type: node pool 'gpu-a100' splits every GPU into MIG devices"
            " (gpu.operator.migProfiles): nodeset 'gpu-a100' must ask for one of its profiles (1g.10gb, 3g.40gb),"
            " not whole 'a100' GPUs",
        ),
        (
            lambda v: v.setdefault("hpcforge:gpu", {}).update(
                {"operator": {"migStrategy": "mixed", "migProfiles": {"gpu-a100": {"3g.40gb": 2, "2g.20gb": 1}}}}
            ),
            "hpcforge:gpu.operator.migProfiles.gpu-a100: the layout takes 8 compute slices of each GPU, which has 7 at most",
        ),
        (
            lambda v: v.setdefault("hpcforge:gpu", {}).update({"operator": {"hpcJobMappingDir": "var/lib/../job map"}}),
            "hpcforge:gpu.operator.hpcJobMappingDir",
        ),
    ],
)
def test_gpu_data_plane_mistakes_name_the_key(mutate: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        _prod_with(mutate)


def test_mig_nodeset_with_its_pool_layout_is_accepted() -> None:
    def mutate(values: dict[str, Any]) -> None:
        values.setdefault("hpcforge:gpu", {})["operator"] = {"migStrategy": "mixed", "migProfiles": {"gpu-a100": {"1g.10gb": 7}}}
        # bare-metal hosts only (replicas 0): MIG needs NVML, which the pinned slurmd image lacks
        values["hpcforge:slurm"]["nodesets"][2]["replicas"] = 0
        values["hpcforge:slurm"]["nodesets"][2]["gpus"] = {
            "type": "1g.10gb",
            "count": 56,
            "resource": "nvidia.com/mig-1g.10gb",
            "autodetect": "nvml",
        }
        values["hpcforge:nodePools"][1]["gpusPerNode"] = {
            "type": "1g.10gb",
            "count": 56,
            "resource": "nvidia.com/mig-1g.10gb",
            "autodetect": "nvml",
        }

    config = _prod_with(mutate)
    assert config.slurm.nodesets[2].gpus is not None and config.slurm.nodesets[2].gpus.is_mig


@pytest.mark.program
def test_prod_gpu_operator_application(prod_stack: RecordedStack) -> None:
    source = one(prod_stack, "Application", "argocd", "gpu-operator")["spec"]["source"]
    assert source["chart"] == "gpu-operator" and source["targetRevision"] == "v26.7.0"
    assert source["helm"]["valuesObject"]["operator"]["upgradeCRD"] is False
    labels = one(prod_stack, "Namespace", "", "gpu-operator")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"  # driver/toolkit/DCGM DaemonSets


def test_operands_and_feature_discovery_tolerate_every_gpu_pool_taint() -> None:
    """The chart tolerates only nvidia.com/gpu; a GPU pool tainted otherwise would get no device plugin."""
    values = gpu_operator_values(operator(), gpu_pool_taints=["hpc.example.org/gpu", "nvidia.com/gpu"])
    operands = values["daemonsets"]["tolerations"]
    workers = values["node-feature-discovery"]["worker"]["tolerations"]
    for tolerations in (operands, workers):
        assert tolerates(tolerations, "hpc.example.org/gpu") and tolerates(tolerations, "nvidia.com/gpu")
        assert not tolerates(tolerations, "hpc.example.org/other")
    assert tolerates(workers, "node-role.kubernetes.io/control-plane")  # the chart's own default is kept
    default = gpu_operator_values(operator())
    assert not tolerates(default["daemonsets"]["tolerations"], "hpc.example.org/gpu")

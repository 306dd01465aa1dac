"""GRES from one hardware description: the nodeset's `gpus` gives the device-plugin limit, the
`Gres=` of slurmd's --conf and the gres.conf lines (type, device files, core affinity); MIG
profiles are GPU types; the slurmd pod's CPU limit equals its request and reservations for slurmd
reach the Slinky image's CoreSpecCount/MemSpecLimit computation. Tier 4 loads the rendered
gres.conf and node GRES into a real slurmctld/slurmd 26.05.3 with stand-in device files.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from components.ground.gpus import GpuSpec
from components.layers.slurm.config import NodeSetConfig
from components.layers.slurm.objects import nodeset_spec
from components.layers.slurm.slurm_conf import expand_device_files, gres_conf, gres_lines, node_parameters
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from components.versions import SLURMD_IMAGE_HAS_NVML
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import config_values, raw_config, require_binaries


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def nodeset(**values: Any) -> NodeSetConfig:
    return NodeSetConfig.model_validate({"name": "gpu", "cpu": "8", "memory": "16Gi", "replicas": 2, **values})


def test_mig_profiles_are_gpu_types() -> None:
    spec = GpuSpec.model_validate({"type": "1g.10gb", "count": 7, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"})
    assert spec.is_mig
    # MIG needs NVML, which only bare-metal hosts' own slurmd can have (replicas: 0; SLURMD_IMAGE_HAS_NVML).
    ns = nodeset(gpus=spec.model_dump(by_alias=True), replicas=0)
    assert node_parameters(ns) == [("Gres", "gpu:1g.10gb:7")]
    assert gres_lines(ns) == ["AutoDetect=nvml"]
    assert nodeset_spec(ns, node_selector={})["slurmd"]["resources"]["limits"]["nvidia.com/mig-1g.10gb"] == 7


def test_nvml_autodetection_is_refused_in_slurmd_pods_whose_image_lacks_nvml() -> None:
    # SlinkyProject/containers#14: the pinned slurmd image's Slurm has no gpu/nvml, falls back to gpu/generic and the
    # node is drained; AutoDetect=nvidia needs no NVML.
    assert SLURMD_IMAGE_HAS_NVML is False
    with pytest.raises(ValidationError, match=r"autodetect: nvml cannot work in its slurmd pods.*use autodetect: nvidia"):
        nodeset(gpus={"type": "h100", "count": 8, "autodetect": "nvml"})
    with pytest.raises(ValidationError, match=r"cannot work in its slurmd pods.*MIG devices need NVML"):
        nodeset(gpus={"type": "1g.10gb", "count": 7, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"})
    with pytest.raises(ValidationError, match="cannot work in its slurmd pods"):
        nodeset(gpus={"type": "h100", "count": 8, "autodetect": "nvml"}, replicas=0, scalingMode="DaemonSet")
    assert gres_lines(nodeset(gpus={"type": "h100", "count": 8, "autodetect": "nvidia"})) == [
        "NodeName=gpu-[0-1] AutoDetect=nvidia"
    ]
    assert gres_lines(nodeset(gpus={"type": "h100", "count": 8, "autodetect": "nvml"}, replicas=0)) == ["AutoDetect=nvml"]


@pytest.mark.parametrize(
    ("gpus", "message"),
    [
        ({"type": "1g.10gb", "count": 7, "resource": "nvidia.com/mig-1g.10gb"}, "have no /dev/nvidiaN files"),
        ({"type": "1g.10gb", "count": 7, "resource": "nvidia.com/mig-2g.20gb", "autodetect": "nvml"}, "does not provide"),
        ({"type": "h100", "count": 1, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvml"}, "must be their profile"),
        (
            {"type": "h100", "count": 2, "cores": ["0-47", "48-95"], "autodetect": "nvml"},
            "autodetect: nvml lets slurmd discover the devices (gres.conf gets only AutoDetect=), so cores would be ignored",
        ),
        ({"type": "h100", "count": 2, "files": "/dev/nvidia[0-1]", "autodetect": "nvidia"}, "so files would be ignored"),
        ({"type": "1g.10gb", "count": 7, "resource": "nvidia.com/mig-1g.10gb", "autodetect": "nvidia"}, "does not detect MIG"),
        ({"type": "h100", "count": 8, "cores": ["0-47"]}, "1 core list(s) for 8 GPU(s)"),
        ({"type": "h100", "count": 2, "cores": ["0-47", "all"]}, "not a core list"),
        ({"type": "h100", "count": 2, "files": "/dev/nvidia[0-1] Cores=0"}, "not a device file expression"),
        ({"type": "H100", "count": 2}, "is not a GPU type"),
    ],
)
def test_gpu_description_mistakes_are_refused(gpus: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        GpuSpec.model_validate(gpus)


def test_gpu_nodesets_with_unknown_node_names_must_autodetect() -> None:
    with pytest.raises(ValidationError, match="node names are not known in advance"):
        nodeset(gpus={"type": "h100", "count": 8}, scalingMode="DaemonSet")
    with pytest.raises(ValidationError, match="node names are not known in advance"):
        nodeset(gpus={"type": "h100", "count": 8}, replicas=0)
    bare_metal = nodeset(gpus={"type": "h100", "count": 8, "autodetect": "nvml"}, replicas=0)
    assert gres_lines(bare_metal) == ["AutoDetect=nvml"]


def test_gres_lines_carry_device_files_and_core_affinity() -> None:
    ns = nodeset(gpus={"type": "h100", "count": 2, "cores": ["0-47", "48-95"]})
    assert gres_lines(ns) == [
        "NodeName=gpu-[0-1] Name=gpu Type=h100 File=/dev/nvidia0 Cores=0-47",
        "NodeName=gpu-[0-1] Name=gpu Type=h100 File=/dev/nvidia1 Cores=48-95",
    ]
    assert gres_lines(nodeset(gpus={"type": "a100", "count": 4}, replicas=1)) == [
        "NodeName=gpu-0 Name=gpu Type=a100 File=/dev/nvidia[0-3]"
    ]
    assert expand_device_files("/dev/nvidia[0-2,5]") == ["/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia5"]


def test_slurmd_cpu_limit_equals_request_and_no_real_memory_in_conf() -> None:
    spec = nodeset_spec(nodeset(), node_selector={})
    assert spec["slurmd"]["resources"]["limits"] == {"cpu": "8", "memory": "16Gi"}
    assert "env" not in spec["slurmd"]
    # The image derives MemSpecLimit from the memory limit; an explicit RealMemory would be reduced twice.
    assert "Realmemory" not in spec.get("extraConf", "").title() and "RealMemory" not in spec.get("extraConf", "")


def test_reservations_for_slurmd_lower_what_the_image_is_told_the_pod_has() -> None:
    spec = nodeset_spec(nodeset(reservedCpus=2, reservedMemory="2Gi", cpuLimit="10"), node_selector={})
    assert spec["slurmd"]["resources"]["limits"]["cpu"] == "10"
    assert spec["slurmd"]["env"] == [{"name": "POD_CPUS", "value": "8"}, {"name": "POD_MEMORY", "value": str(14 * 1024)}]
    with pytest.raises(ValidationError, match="leaves jobs none"):
        nodeset(reservedCpus=8)
    with pytest.raises(ValidationError, match="below the CPU request"):
        nodeset(cpuLimit="4")


def test_prod_gpu_counts_agree_everywhere(prod: PlatformConfig) -> None:
    gres = gres_conf(prod.slurm)
    assert gres is not None
    for ns in prod.slurm.nodesets:
        if ns.gpus is None:
            continue
        limit = nodeset_spec(ns, node_selector={})["slurmd"]["resources"]["limits"]["nvidia.com/gpu"]
        files = [f for line in gres_lines(ns) for f in expand_device_files(line.split("File=")[1].split()[0])]
        assert limit == ns.gpus.count == len(files) == int(dict(node_parameters(ns))["Gres"].rsplit(":", 1)[1])


# --- tier 4: the rendered gres.conf and node GRES in a real Slurm 26.05.3 ----------------------------------------------


def _loadable_gres_conf(text: str, devices: Path) -> str:
    """The rendered gres.conf with /dev/nvidiaN replaced by stand-in character devices (the null device's numbers: no
    GPUs here; slurmd refuses plain files); nothing else changes."""
    devices.mkdir(parents=True, exist_ok=True)
    for index in range(16):
        os.mknod(devices / f"nvidia{index}", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return text.replace("/dev/nvidia", f"{devices}/nvidia")


@pytest.mark.real_daemon
@pytest.mark.timeout(300)
def test_real_slurm_loads_gres_counts_equal_limits(prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    gres = gres_conf(prod.slurm)
    assert gres is not None
    nodes = []
    gpu_nodesets = [ns for ns in prod.slurm.nodesets if ns.gpus is not None]
    for ns in gpu_nodesets:
        conf = dict(node_parameters(ns))
        assert ns.gpus is not None
        if ns.gpus.cores:
            # The hardware the pool describes (2 sockets), so that Cores= refers to cores that exist; slurmd takes the
            # configured layout instead of this small host's (SlurmdParameters=config_overrides).
            layout = "Boards=1 Sockets=2 CoresPerSocket=48 ThreadsPerCore=2"
            nodes.append(node_line(f"{ns.name}-0", cpus=192, gres=conf["Gres"], extra=layout))
        else:
            nodes.append(node_line(f"{ns.name}-0", gres=conf["Gres"]))
    with SlurmCluster(
        tmp_path / "c",  # short: slurmstepd's socket path under the spool dir must stay within 108 characters
        "gres",
        nodes=nodes,
        partitions=["PartitionName=gpu Nodes=ALL Default=YES State=UP", "PartitionName=a100 Nodes=gpu-a100-0 State=UP"],
        extra_conf="GresTypes=gpu\nSlurmdParameters=config_overrides\n",
        gres_conf=_loadable_gres_conf(gres, tmp_path / "dev"),
    ) as cluster:
        for ns in gpu_nodesets:
            assert ns.gpus is not None
            name = f"{ns.name}-0"
            cluster.wait_node_idle(name, 60)
            info = cluster.node_info(name)
            limit = nodeset_spec(ns, node_selector={})["slurmd"]["resources"]["limits"]["nvidia.com/gpu"]
            assert info["Gres"].split("(")[0] == f"gpu:{ns.gpus.type}:{limit}", info
        job = cluster.sbatch('echo "$CUDA_VISIBLE_DEVICES" > a100.txt\n', partition="a100", args=["--gres=gpu:a100:8"])
        assert cluster.wait_job(job, 60) == "COMPLETED", cluster.job_info(job)
        assert (cluster.jobs_dir / "a100.txt").read_text().strip() == "0,1,2,3,4,5,6,7"
        job = cluster.sbatch('echo "$CUDA_VISIBLE_DEVICES" > h100.txt\n', args=["-w", "gpu-h100-0", "--gres=gpu:h100:4"])
        assert cluster.wait_job(job, 60) == "COMPLETED", cluster.job_info(job)
        assert (cluster.jobs_dir / "h100.txt").read_text().strip() == "0,1,2,3"


def slinky_conf(nodeset: NodeSetConfig) -> str:
    """The `slurmd --conf` value Slinky slurm-operator v1.2.1 builds for a NodeSet's pods (read at that tag in
    internal/builder/workerbuilder/worker_app.go, slurmdConfArgs): `Features=<nodeset>` plus the extraConf items split
    on spaces, keys title-cased, features merged, items sorted. (The 26.05 slurmd image then appends CoreSpecCount /
    MemSpecLimit from the pod's limits; on this host there are none to reserve.)"""
    conf: dict[str, str] = {"Features": nodeset.name}
    spec = nodeset_spec(nodeset, node_selector={})
    for item in spec.get("extraConf", "").split(" ") if spec.get("extraConf") else []:
        key, value = item.split("=", 1)
        key = key[:1].upper() + key[1:].lower()
        key = "Features" if key in ("Feature", "Features") else key
        conf[key] = f"{conf[key]},{value}" if key in conf else value
    return " ".join(sorted(f"{k}={v}" for k, v in conf.items()))


@pytest.mark.real_daemon
@pytest.mark.timeout(300)
def test_gpu_pod_has_its_gres_at_first_registration_slurm_operator_pr_191(prod: PlatformConfig, tmp_path: Path) -> None:
    """slurm-operator PR #191 (not in v1.2.1): a GPU node whose --conf lacks Gres= registers Gres=(null) first. hpcforge
    puts Gres= into the NodeSet's extraConf, so the very first registration of a dynamic node carries it."""
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    a100 = prod.slurm.nodeset("gpu-a100")
    assert a100 is not None and a100.gpus is not None
    conf = slinky_conf(a100)
    # the node weight (slurm.nodesets[].weight) rides along in --conf too
    weight = f" Weight={a100.weight}" if a100.weight is not None else ""
    assert conf == f"Features=gpu-a100 Gres=gpu:a100:8{weight}"
    gres = gres_conf(prod.slurm)
    assert gres is not None
    with SlurmCluster(
        tmp_path / "c",
        "first",
        partitions=["PartitionName=gpu Nodes=ALL Default=YES State=UP"],
        extra_conf="GresTypes=gpu\n",
        gres_conf=_loadable_gres_conf(gres, tmp_path / "dev"),
        dynamic=True,
    ) as cluster:
        cluster.start_dynamic_slurmd("gpu-a100-0", conf=conf)
        cluster.wait_node_idle("gpu-a100-0", 60)  # fails fast on DRAIN / INVALID_REG
        info = cluster.node_info("gpu-a100-0")
        assert info["Gres"] == "gpu:a100:8" and "DYNAMIC_NORM" in info["State"]
        assert info["AvailableFeatures"] == "gpu-a100"
        # The failure mode of PR #191: the same pod without Gres= in its --conf registers with no GPUs at all.
        cluster.stop_slurmd("gpu-a100-0", delete=True)
        cluster.start_dynamic_slurmd("gpu-a100-1", conf="Features=gpu-a100")
        assert cluster.node_info("gpu-a100-1")["Gres"] == "(null)"


def _prod_with_h100_nodeset(gpus: dict[str, Any]) -> dict[str, Any]:
    values = config_values("prod")
    nodeset = next(ns for ns in values["hpcforge:slurm"]["nodesets"] if ns["name"] == "gpu-h100")
    nodeset["gpus"] = gpus
    nodeset.pop("gres", None)
    return values


def test_a_nodeset_pod_must_take_every_gpu_of_its_node() -> None:
    # prod's pool gpu-h100 has 8 GPUs per node. A slurmd pod runs privileged (slurm-operator v1.2.1) and sees all 8
    # whichever 4 the device plugin picked; Slurm would use /dev/nvidia0-3 with File= and with autodetection alike
    # (gres_gpu.c keeps the lowest-numbered devices), so no setting makes part of a node safe.
    for gpus in ({"type": "h100", "count": 4}, {"type": "h100", "count": 4, "autodetect": "nvidia"}):
        with pytest.raises(ConfigError, match=re.escape("hpcforge:slurm.nodesets[")) as raised:
            load_config(raw_config(_prod_with_h100_nodeset(gpus)))
        assert "nodeset 'gpu-h100' gets 4 of the 8 GPUs of each node in pool 'gpu-h100'" in str(raised.value)
        assert ".gpus.count: " in str(raised.value) and "ask for all 8" in str(raised.value)
    load_config(raw_config(_prod_with_h100_nodeset({"type": "h100", "count": 8})))  # the whole node: File= is right
    config = load_config(raw_config(_prod_with_h100_nodeset({"type": "h100", "count": 8, "autodetect": "nvidia"})))
    assert gres_lines(next(ns for ns in config.slurm.nodesets if ns.name == "gpu-h100")) == [
        "NodeName=gpu-h100-[0-3] AutoDetect=nvidia"
    ]

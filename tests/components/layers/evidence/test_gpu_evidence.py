"""GPU deployment evidence: the NCCL all-reduce and RDMA device checks against a fake kubectl.

nccl_output() writes the format nccl-tests prints (its closing "# Avg bus bandwidth" line); the two runs in
tests/fixtures/nccl-tests/ are real outputs from two 8x H100 nodes, quoted from NVIDIA/nccl-tests#294. No run was
captured by hpcforge (no GPU machine was available to this work).
"""

from __future__ import annotations

from pathlib import Path

from components.layers.evidence.gpu import gpu_check_environments
from components.site.loader import load_config
from components.versions import Images
from tests.components.layers.evidence.test_operations import SLURM, _ok, run_check
from tests.helpers import REPO, config_values, raw_config

NCCL = {
    **SLURM,
    "GPU_PARTITION": "h100",
    "NCCL_NODES": "2",
    "NCCL_GPUS_PER_NODE": "8",
    "NCCL_IMAGE": Images.NCCL_TESTS.ref,
    "NCCL_MESSAGE_SIZE": "1G",
    "NCCL_MIN_BUSBW": "300",
}


def nccl_output(busbw: str) -> str:
    return (
        "# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
        "  1073741824     268435456     float     sum      -1   5409.1  198.51  372.20      0\n"
        "# Out of bounds values : 0 OK\n"
        f"# Avg bus bandwidth    : {busbw} \n"
    )


def test_allreduce_above_the_floor_passes(tmp_path: Path) -> None:
    answers = [{"match": "srun --partition=h100 --nodes=2", "stdout": nccl_output("372.2")}]
    report = _ok(run_check(tmp_path, "nccl-allreduce.sh", answers, NCCL), "nccl-allreduce")
    assert report["detail"] == "NCCL all-reduce over 2 nodes x 8 GPUs: bus bandwidth 372.2 GB/s (floor 300 GB/s)"
    call = (tmp_path / "kubectl.log").read_text()
    assert f"--container-image={Images.NCCL_TESTS.ref}" in call and "--gpus-per-node=8" in call and "-b 1G -e 1G" in call


def test_allreduce_below_the_floor_fails(tmp_path: Path) -> None:
    answers = [{"match": "srun", "stdout": nccl_output("41.7")}]
    result = run_check(tmp_path, "nccl-allreduce.sh", answers, NCCL)
    assert result.returncode == 1
    assert "bus bandwidth 41.7 GB/s is below the floor of 300 GB/s" in result.stderr


NCCL_RUNS = REPO / "tests/fixtures/nccl-tests"


def published_run(name: str) -> str:
    """The nccl-tests output of a fixture (after its '#' header, which ends before the first output line)."""
    lines = (NCCL_RUNS / name).read_text().splitlines(keepends=True)
    start = next(number for number, line in enumerate(lines) if not line.startswith("#"))
    assert lines[0].startswith("# QUOTED FROM A PUBLISHED RUN") and "https://github.com/NVIDIA/nccl-tests/issues/294" in lines[0]
    return "".join(lines[start:])


def test_a_published_two_node_h100_run_is_read_with_its_interleaved_nccl_log(tmp_path: Path) -> None:
    # 16 ranks on two 8x H100 nodes over InfiniBand; NCCL INFO lines sit between the rows and the result.
    answers = [{"match": "srun --partition=h100 --nodes=2", "stdout": published_run("h100x16-two-nodes.txt")}]
    report = _ok(run_check(tmp_path, "nccl-allreduce.sh", answers, NCCL), "nccl-allreduce")
    assert report["detail"] == "NCCL all-reduce over 2 nodes x 8 GPUs: bus bandwidth 406.034 GB/s (floor 300 GB/s)"
    above = run_check(tmp_path, "nccl-allreduce.sh", answers, {**NCCL, "NCCL_MIN_BUSBW": "450"})
    assert above.returncode == 1 and "bus bandwidth 406.034 GB/s is below the floor of 450 GB/s" in above.stderr


def test_ranks_that_ran_alone_are_named_as_such(tmp_path: Path) -> None:
    answers = [{"match": "srun", "stdout": published_run("ranks-ran-alone.txt")}]
    result = run_check(tmp_path, "nccl-allreduce.sh", answers, NCCL)
    assert result.returncode == 1
    assert "bus bandwidth 0 GB/s, so each rank ran alone instead of in one communicator" in result.stderr


def test_allreduce_without_a_result_or_failing_fails(tmp_path: Path) -> None:
    result = run_check(tmp_path, "nccl-allreduce.sh", [{"match": "srun", "stdout": "srun: error: no GPUs\n"}], NCCL)
    assert result.returncode == 1 and "printed no average bus bandwidth" in result.stderr
    failed = run_check(
        tmp_path, "nccl-allreduce.sh", [{"match": "srun", "stderr": "srun: error: Unable to allocate\n", "exit": 1}], NCCL
    )
    assert failed.returncode == 1 and "NCCL all-reduce in partition h100 failed: srun: error: Unable to allocate" in failed.stderr


RDMA = {**SLURM, "GPU_PARTITION": "h100", "RDMA_MIN_DEVICES": "4"}


# What the probe job prints on a healthy H100 node of prod (after the device and memlock lines).
PROBE_REST = "nccl: NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3\npeermem: loaded\nkmod: 0\n"


def test_rdma_devices_and_memlock(tmp_path: Path) -> None:
    answers = [{"match": "hpcforge-rdma", "stdout": "devices: mlx5_0 mlx5_1 mlx5_2 mlx5_3 \nmemlock: unlimited\n" + PROBE_REST}]
    report = _ok(run_check(tmp_path, "rdma-devices.sh", answers, RDMA), "rdma-devices")
    assert report["detail"] == "4 RDMA device(s) (mlx5_0 mlx5_1 mlx5_2 mlx5_3), memlock unlimited, GPUDirect: nvidia_peermem"
    few = run_check(tmp_path, "rdma-devices.sh", [{"match": "srun", "stdout": "devices: mlx5_0 \nmemlock: unlimited\n"}], RDMA)
    assert few.returncode == 1 and "sees 1 RDMA device(s) (mlx5_0 ), expected at least 4" in few.stderr
    locked = run_check(tmp_path, "rdma-devices.sh", [{"match": "srun", "stdout": "devices: a b c d\nmemlock: 8192\n"}], RDMA)
    assert locked.returncode == 1 and "may lock only 8192 KiB" in locked.stderr


# Issue 28 item 8: a privileged slurmd pod sees every HCA of its host, so the devices alone prove nothing; the pod
# must have been allocated the fabrics' resources (its spec's limits), and NCCL pointed at the rails.
RDMA_ALLOCATED = {
    **RDMA,
    "RDMA_RESOURCES": "rdma/ib_rail0 rdma/ib_rail1",
    "RDMA_NCCL_IB_HCA": "=mlx5_0,mlx5_1,mlx5_2,mlx5_3",
}
PROBE = "node: gpu-h100-1\ndevices: mlx5_0 mlx5_1 mlx5_2 mlx5_3 \nmemlock: unlimited\n"
LIMITS = '{"cpu":"180","memory":"1900Gi","nvidia.com/gpu":"8","rdma/ib_rail0":"1","rdma/ib_rail1":"1"}'


def test_rdma_evidence_fails_when_the_pod_was_allocated_no_rdma_resource(tmp_path: Path) -> None:
    ok = [{"match": "hpcforge-rdma", "stdout": PROBE + PROBE_REST}, {"match": "get pod gpu-h100-1", "stdout": LIMITS}]
    report = _ok(run_check(tmp_path, "rdma-devices.sh", ok, RDMA_ALLOCATED), "rdma-devices")
    assert "pod gpu-h100-1 allocated rdma/ib_rail0 rdma/ib_rail1" in report["detail"]
    bare = [
        {"match": "hpcforge-rdma", "stdout": PROBE + PROBE_REST},
        {"match": "get pod gpu-h100-1", "stdout": '{"cpu":"180","memory":"1900Gi","nvidia.com/gpu":"8"}'},
    ]
    failed = run_check(tmp_path, "rdma-devices.sh", bare, RDMA_ALLOCATED)
    assert failed.returncode == 1
    assert "the slurmd pod gpu-h100-1 was allocated no rdma/ib_rail0" in failed.stderr


def test_rdma_evidence_fails_when_nccl_is_not_pointed_at_the_rails_or_gpudirect_cannot_work(tmp_path: Path) -> None:
    unset = [
        {"match": "hpcforge-rdma", "stdout": PROBE + "nccl: \npeermem: loaded\nkmod: 0\n"},
        {"match": "get pod", "stdout": LIMITS},
    ]
    failed = run_check(tmp_path, "rdma-devices.sh", unset, RDMA_ALLOCATED)
    assert failed.returncode == 1 and "NCCL on gpu-h100-1 is not pointed at the rails" in failed.stderr
    copies = [
        {
            "match": "hpcforge-rdma",
            "stdout": PROBE + "nccl: NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3\npeermem: absent\nkmod: 0\n",
        },
        {"match": "get pod", "stdout": LIMITS},
    ]
    failed = run_check(tmp_path, "rdma-devices.sh", copies, RDMA_ALLOCATED)
    assert failed.returncode == 1 and "GPUDirect RDMA cannot work on gpu-h100-1" in failed.stderr
    # The open kernel module gives DMA-BUF without nvidia_peermem (the hpcforge H200 capture's driver is one).
    dmabuf = [
        {
            "match": "hpcforge-rdma",
            "stdout": PROBE + "nccl: NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3\npeermem: absent\nkmod: 1\n",
        },
        {"match": "get pod", "stdout": LIMITS},
    ]
    assert "GPUDirect: DMA-BUF" in _ok(run_check(tmp_path, "rdma-devices.sh", dmabuf, RDMA_ALLOCATED), "rdma-devices")["detail"]


def test_prod_gpu_checks_follow_config() -> None:
    prod = load_config(raw_config(config_values("prod")))
    checks = {name: env for name, _, env in gpu_check_environments(prod, dict(SLURM))}
    assert list(checks) == ["gpu-allocatable", "rdma-devices", "nccl-allreduce"]
    assert checks["gpu-allocatable"]["GPU_NODESETS"] == (
        "gpu-a100|hpcforge.io/pool=gpu-a100|nvidia.com/gpu|8|8 gpu-h100|hpcforge.io/pool=gpu-h100|nvidia.com/gpu|8|4"
    )
    assert checks["nccl-allreduce"]["NCCL_MIN_BUSBW"] == "160" and checks["nccl-allreduce"]["GPU_PARTITION"] == "h100"
    assert checks["rdma-devices"]["RDMA_MIN_DEVICES"] == "4"  # the four InfiniBand rails of gpu-h100
    assert checks["rdma-devices"]["RDMA_RESOURCES"] == "rdma/ib_rail0 rdma/ib_rail1 rdma/ib_rail2 rdma/ib_rail3"
    assert checks["rdma-devices"]["RDMA_NCCL_IB_HCA"] == "=mlx5_0,mlx5_1,mlx5_2,mlx5_3"
    dev = load_config(raw_config(config_values("dev")))
    assert gpu_check_environments(dev, dict(SLURM)) == []  # no GPU partition


def test_device_plugin_offers_the_nodesets_gpus(tmp_path: Path) -> None:
    env = {"GPU_NODESETS": "gpu-h100|hpcforge.io/pool=gpu-h100|nvidia.com/gpu|8|2"}
    answers = [{"match": "get nodes -l hpcforge.io/pool=gpu-h100", "stdout": "h1=8\nh2=8\nh3=\n"}]
    report = _ok(run_check(tmp_path, "gpu-allocatable.sh", answers, env), "gpu-allocatable")
    assert report["detail"] == "gpu-h100: 2 node(s) offer 8 nvidia.com/gpu"
    assert "allocatable.nvidia\\.com/gpu" in (tmp_path / "kubectl.log").read_text()
    short = run_check(tmp_path, "gpu-allocatable.sh", [{"match": "get nodes", "stdout": "h1=8\nh2=4\nh3=\n"}], env)
    assert short.returncode == 1 and "nodeset gpu-h100: 1 node(s) offer 8 nvidia.com/gpu, 2 needed" in short.stderr


def _real_probe() -> str:
    """What the rdma-devices probe printed on a real H200 (tests/fixtures/gpu-probe/h200-580.159.04.txt)."""
    text = (REPO / "tests/fixtures/gpu-probe/h200-580.159.04.txt").read_text()
    block = text.split("$ rdma-devices.sh probe (verbatim, no Slurm)\n", 1)[1]
    return block.split("$ ", 1)[0]


def test_the_probe_as_it_ran_on_a_real_h200_reads_the_open_kernel_module_as_dma_buf(tmp_path: Path) -> None:
    # The VM has no InfiniBand: the device count fails the check; without that floor, the driver's open kernel module
    # (no nvidia_peermem there) is read as GPUDirect RDMA through DMA-BUF.
    probe = _real_probe()
    assert "peermem: absent\nkmod: 1\n" in probe
    answers = [{"match": "hpcforge-rdma", "stdout": probe}]
    failed = run_check(tmp_path, "rdma-devices.sh", answers, RDMA)
    assert failed.returncode == 1 and "sees 0 RDMA device(s)" in failed.stderr
    report = _ok(run_check(tmp_path, "rdma-devices.sh", answers, {**RDMA, "RDMA_MIN_DEVICES": "0"}), "rdma-devices")
    assert report["detail"].endswith("memlock unlimited, GPUDirect: DMA-BUF")

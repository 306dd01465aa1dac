"""gres.conf `Cores=` per device file, from what nvidia-smi prints on a node (pure).

`hpcforge:slurm.nodesets[].gpus.cores` gives one core list per `File=` device, in the order of the device files
(`/dev/nvidia0`, `/dev/nvidia1`...: the gres.conf lines, components/layers/slurm/slurm_conf.py `gres_lines`). The CPU
affinity of each GPU comes from `nvidia-smi topo -m`, whose rows are nvidia-smi's indexes, i.e. PCI bus order. The
two orders differ wherever the driver's minor numbers do not follow the PCI order (a real 8x RTX 4090 node:
tests/fixtures/nvidia-smi/rtx4090x8-535.154.05-nov2024.txt, minors 2,3,1,0,6,7,5,4 by index), so copying topo's rows
in order gives a GPU the cores of another. `cores_by_device_file` maps them through `nvidia-smi -q`'s
"Minor Number" of each GPU (its blocks are in index order, the order of topo's rows).
"""

from __future__ import annotations

import re


def topo_cpu_affinity(topo: str) -> list[str]:
    """`nvidia-smi topo -m`: the "CPU Affinity" of GPU0, GPU1... (tab-separated columns, a header row naming them)."""
    lines = topo.splitlines()
    header = next((line for line in lines if "CPU Affinity" in line), None)
    if header is None:
        raise ValueError("no 'CPU Affinity' column in the topo -m output")
    column = [cell.strip() for cell in header.split("\t")].index("CPU Affinity")
    rows = [line.split("\t") for line in lines if re.match(r"^GPU[0-9]+\t", line)]
    return [row[column].strip() for row in sorted(rows, key=lambda r: int(r[0][3:]))]


def q_minor_numbers(q: str) -> list[int]:
    """`nvidia-smi -q`: the "Minor Number" of each GPU, in the order of its `GPU <bus id>` blocks (index order)."""
    return [int(m) for m in re.findall(r"^    Minor Number\s*:\s*([0-9]+)\s*$", q, re.M)]


def cores_by_device_file(topo: str, q: str) -> list[str]:
    """`gpus.cores` for `files: /dev/nvidia[...]`: one core list per device file, in the files' order (Slurm sorts
    `File=` names as strings, gres_gpu.c `_sort_gpu_by_file`), each the affinity of the GPU with that minor number."""
    affinity = topo_cpu_affinity(topo)
    minors = q_minor_numbers(q)
    if len(affinity) != len(minors):
        raise ValueError(f"topo -m lists {len(affinity)} GPU(s), -q {len(minors)}")
    by_minor = dict(zip(minors, affinity, strict=True))
    return [by_minor[m] for m in sorted(by_minor, key=lambda m: f"/dev/nvidia{m}")]


__all__ = ["cores_by_device_file", "q_minor_numbers", "topo_cpu_affinity"]

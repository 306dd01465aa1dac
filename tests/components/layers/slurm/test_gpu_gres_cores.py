"""Issue 28 item 9: gres.conf `Cores=` follows the device files (/dev/nvidia<minor>, in Slurm's string order:
src/plugins/gres/gpu/gres_gpu.c `_sort_gpu_by_file`, 22.05 and 26.05), while `nvidia-smi topo -m` lists GPUs by
nvidia-smi's (PCI) index: copying topo's rows in order gives a GPU another's cores wherever minor numbers do not
follow the PCI order. The minor numbers are those of a real 8x RTX 4090 node (its whole `nvidia-smi -q`, driver
535.154.05, tests/fixtures/nvidia-smi/rtx4090x8-535.154.05-nov2024.txt: minors 2,3,1,0,6,7,5,4 by index). The
`topo -m` table is RECONSTRUCTED in the layout nvidia-smi prints (tab-separated, a "CPU Affinity" column), with one
NUMA node per pair of GPUs: no multi-GPU `topo -m` was captured.
"""

from __future__ import annotations

from components.layers.slurm.gres_cores import cores_by_device_file, q_minor_numbers, topo_cpu_affinity
from tests.helpers import REPO

Q = (REPO / "tests/fixtures/nvidia-smi/rtx4090x8-535.154.05-nov2024.txt").read_text()
AFFINITY = ["0-23", "0-23", "24-47", "24-47", "48-71", "48-71", "72-95", "72-95"]
TOPO = (
    "\t" + "\t".join(f"GPU{i}" for i in range(8)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    + "".join(
        f"GPU{i}\t" + "\t".join("X" if j == i else "SYS" for j in range(8)) + f"\t{AFFINITY[i]}\t{i // 2}\t\tN/A\n"
        for i in range(8)
    )
    + "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
)  # fmt: skip


def test_the_real_nodes_minor_numbers_do_not_follow_the_pci_order() -> None:
    assert q_minor_numbers(Q) == [2, 3, 1, 0, 6, 7, 5, 4]
    assert topo_cpu_affinity(TOPO) == AFFINITY


def test_cores_follow_the_device_files_not_topos_rows() -> None:
    cores = cores_by_device_file(TOPO, Q)
    # /dev/nvidia0 is the GPU of minor 0: index 3, on the second NUMA node; /dev/nvidia2 is index 0.
    assert cores == ["24-47", "24-47", "0-23", "0-23", "72-95", "72-95", "48-71", "48-71"]
    assert cores != AFFINITY  # what copying topo's rows in order would have given

"""Corpus cases for the Slurm verdicts (issue 33, the Slurm half), one or more per class of the real-daemon table
(offline/diff/slurm_outcomes.json), each with its expected worst severity written before it ran: prod edited as an
operator of the site would edit it. tests/offline/diff/test_diff_corpus.py runs them with diff_corpus.CASES."""

from __future__ import annotations

from collections.abc import Callable

from offline.diff.effects import UNASSESSED
from tests.offline.diff.diff_corpus import Case, Site


def sub(old: str, new: str) -> Callable[[Site], None]:
    def edit(site: Site) -> None:
        site.replace("stack", old, new)

    return edit


def extra(parameter: str) -> Callable[[Site], None]:
    """`extraParameters: {parameter}` on the controller."""
    return sub("      preemption:\n", f"      extraParameters: {{{parameter}}}\n      preemption:\n")


def both(*edits: Callable[[Site], None]) -> Callable[[Site], None]:
    def edit(site: Site) -> None:
        for one in edits:
            one(site)

    return edit


def _without_debug(site: Site) -> None:
    start = site.stack.index("      - name: debug\n")
    end = site.stack.index("      # The bare-metal hosts tagged")
    site.stack = site.stack[:start] + site.stack[end:]


SLURM_CASES: tuple[Case, ...] = (
    Case(
        "slurm-partition-removed", "partition debug removed: its running and pending jobs are killed", "data-loss", _without_debug
    ),
    Case(
        "slurm-partition-renamed",
        "partition scavenger renamed spare: Slurm removes scavenger, killing its jobs",
        "data-loss",
        sub("      - name: scavenger\n", "      - name: spare\n"),
    ),
    Case(
        "slurm-select-linear",
        "SelectType select/linear: slurmctld refuses it with the operator's MaxNodeCount",
        "outage",
        sub("      priority:\n        weights:", "      select: {type: select/linear}\n      priority:\n        weights:"),
    ),
    Case(
        "slurm-switch-type", "SwitchType switch/nvidia_imex (extraParameters)", "reload", extra("SwitchType: switch/nvidia_imex")
    ),
    Case(
        "slurm-gres-type",
        "pool and nodeset gpu-a100: GPU type a100 -> a800 (no case of the table changes GPU types)",
        UNASSESSED,
        both(
            sub("        gpus: {type: a100, count: 8}\n", "        gpus: {type: a800, count: 8}\n"),
            sub("      gpusPerNode: {type: a100, count: 8}\n", "      gpusPerNode: {type: a800, count: 8}\n"),
        ),
    ),
    Case(
        "slurm-gres-cores",
        "nodeset gpu-h100: the GPUs' cores change (no case of the table changes cores)",
        UNASSESSED,
        sub(
            "cores: [0-47, 0-47, 0-47, 0-47, 48-95, 48-95, 48-95, 48-95]",
            "cores: [0-47, 0-47, 48-95, 48-95, 0-47, 0-47, 48-95, 48-95]",
        ),
    ),
    Case(
        "slurm-topology-switch",
        "a leaf switch rack5 (for hosts to come) under the spine (topology.yaml)",
        "reload",
        sub(
            "        - {name: spine, switches: [rack1, rack2, rack3, rack4, cpu1, gpu1, gpu2]}\n",
            "        - {name: spine, switches: [rack1, rack2, rack3, rack4, rack5, cpu1, gpu1, gpu2]}\n"
            '        - {name: rack5, nodes: ["cn[097-120]"]}\n',
        ),
    ),
    Case(
        "slurm-cgroup",
        "cgroup.conf AllowedRAMSpace 100 -> 95",
        "reload",
        sub("    nodesets:\n", "    cgroup: {allowedRamSpace: 95}\n    nodesets:\n"),
    ),
    Case(
        "slurm-unknown-parameter",
        "SchedulerTimeSlice (extraParameters; no case of the table)",
        UNASSESSED,
        extra("SchedulerTimeSlice: '60'"),
    ),
    Case("slurm-auth-type", "AuthType auth/munge (extraParameters)", "outage", extra("AuthType: auth/munge")),
    Case("slurm-slurmd-port", "SlurmdPort 6900 (extraParameters)", "outage", extra("SlurmdPort: '6900'")),
    Case(
        "slurm-partition-access",
        "partition h100: account ops no longer allowed",
        "reload",
        sub("allowAccounts: [llm, ops]", "allowAccounts: [llm]"),
    ),
    Case(
        "slurm-nodeset-leaves-partition",
        "nodeset cpu-bm leaves partition scavenger",
        "reload",
        sub("      - name: scavenger\n        nodesets: [cpu, cpu-bm]", "      - name: scavenger\n        nodesets: [cpu]"),
    ),
    Case(
        "slurm-priority-basic",
        "PriorityType priority/basic (the multifactor weights go)",
        "reload",
        sub("      priority:\n        weights:", "      priority:\n        type: priority/basic\n        weights:"),
    ),
)

"""offline/live/drains.py: slurm-operator v1.2.1's order for the pods it drains and deletes (utils/sort.go ActivePods.Less,
as far as Slurm's JSON shows it: idle nodes, then the earliest job end, then the highest ordinal)."""

from __future__ import annotations

from offline.live.drains import UNLIMITED_S, Drain, batches, offline_order, slinky_order


def test_idle_nodes_go_first_then_the_earliest_deadline_then_the_highest_ordinal() -> None:
    nodes = ("gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-10")
    deadlines = {"gpu-3": 2000.0, "gpu-10": 9000.0, "gpu-0": 1000.0}
    # gpu-2 and gpu-1 are idle (no deadline): highest ordinal first among them; then gpu-0 (ends first), gpu-3, gpu-10
    assert slinky_order(nodes, deadlines) == ["gpu-2", "gpu-1", "gpu-0", "gpu-3", "gpu-10"]


def test_a_job_without_a_time_limit_holds_its_node_to_the_end_of_the_order() -> None:
    start = 1795765587.0
    deadlines = {"cpu-0": start + UNLIMITED_S, "cpu-1": start + 3600}
    assert slinky_order(("cpu-0", "cpu-1"), deadlines) == ["cpu-1", "cpu-0"]
    assert UNLIMITED_S == 9_223_372_036  # math.MaxInt64 ns, what GetNodeDeadlines adds for an infinite limit


def test_a_roll_goes_in_batches_of_max_unavailable_and_a_scale_in_takes_only_its_count() -> None:
    roll = Drain("cpu", "roll", tuple(f"cpu-{i}" for i in range(5)), 5, 2)
    assert batches(roll, {"cpu-4": 50.0}) == [["cpu-3", "cpu-2"], ["cpu-1", "cpu-0"], ["cpu-4"]]
    scale_in = Drain("cpu", "scale-in", tuple(f"cpu-{i}" for i in range(4)), 1, 1)
    assert batches(scale_in, {"cpu-3": 50.0, "cpu-0": 10.0, "cpu-1": 30.0, "cpu-2": 20.0}) == [["cpu-0"]]
    assert offline_order(scale_in) == ["cpu-3"]

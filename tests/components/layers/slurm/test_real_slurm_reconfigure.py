"""Tier 4 (real daemons): which slurm.conf changes `scontrol reconfigure` puts in force on Slurm 26.05.3, and which need
a slurmctld restart - the proof behind the change-impact report's "reconfigure versus restart" (DESIGN.md, Day N).

Each case starts slurmctld 26.05.3 (with slurmdbd and a slurmd behind it) on hpcforge's rendered prod configuration
(test_real_slurm.rendered_cluster), changes ONE parameter in slurm.conf, runs `scontrol reconfigure` and reads
`scontrol show config`; a restart-class parameter is then shown to take effect after a slurmctld restart.

What slurm.conf(5) of 26.05.3 (doc/man/man5/slurm.conf.5 in ../shared/slurm/slurm-26.05.3.tar.bz2) says:
"Changes to the configuration file take effect upon restart of Slurm daemons, daemon receipt of the SIGHUP signal, or
execution of the command "scontrol reconfigure" unless otherwise noted. Changes to TCP listening settings will require
a daemon restart." (lines 21-24).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from components.site.loader import load_config
from components.site.root import PlatformConfig
from offline.diff.slurm_conf import applied_by
from tests.components.layers.slurm.test_real_slurm import rendered_cluster, rendered_site, require_root
from tests.daemons import slurm
from tests.daemons.common import free_port, port_open, run, wait_until
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


@dataclass(frozen=True)
class Case:
    key: str
    """The slurm.conf parameter changed."""
    value: str
    """Its new value (in slurm.conf); `{port}` is a free TCP port."""
    shown: str
    """How `scontrol show config` shows the new value."""
    why: str
    """What slurm.conf(5) of 26.05.3 says about it."""

    @property
    def takes_effect(self) -> str:
        """`reconfigure` or `restart`: what the change-impact report's table says (offline/diff/slurm_conf.py
        `applied_by`, from offline/diff/slurm_outcomes.json), which this test holds the real slurmctld to."""
        return applied_by(self.key)


CASES = [
    Case("SlurmdTimeout", "900", "900 sec", "no note: the general rule (slurm.conf(5) lines 21-23)"),
    Case(
        "SchedulerParameters",
        "bf_continue,bf_interval=60,bf_max_job_test=1000,bf_window=10080",
        "bf_continue,bf_interval=60,bf_max_job_test=1000,bf_window=10080",
        "no note: the general rule",
    ),
    Case("MaxJobCount", "20000", "20000", "no note: the general rule (lines 2701-2711 name no restart)"),
    Case(
        "SlurmctldPort",
        "{port}",
        "{port}",
        '"Changes to TCP listening settings will require a daemon restart." (line 24)',
    ),
]


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def shown(cluster: SlurmCluster, key: str, conf: Path) -> str | None:
    """`scontrol show config`'s value for `key`, asking slurmctld as the clients of `conf` reach it (None: no answer)."""
    done = run(["scontrol", "show", "config"], env=cluster.env({"SLURM_CONF": str(conf)}), timeout=30)
    if done.returncode != 0:
        return None
    match = re.search(rf"^{key}\s+= (.*)$", done.stdout, re.M)
    return match.group(1).strip() if match else None


def change(conf: Path, key: str, value: str) -> None:
    """Set `key=value` in slurm.conf: the line that sets it is replaced (one is added when none does)."""
    text = conf.read_text()
    line = re.compile(rf"^{key}=.*$", re.M)
    assert len(line.findall(text)) <= 1, f"{key} is set more than once"
    conf.write_text(line.sub(f"{key}={value}", text) if line.search(text) else text + f"{key}={value}\n")


@pytest.mark.parametrize("case", CASES, ids=[case.key for case in CASES])
def test_one_parameter_changed_then_reconfigure_or_restart(case: Case, prod: PlatformConfig, tmp_path: Path) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    port = free_port()
    value = case.value.format(port=port)
    want = case.shown.format(port=value)
    with rendered_cluster(prod, tmp_path, nodes=[node_line("cpu-0", features=["cpu"])]) as cluster:
        before = shown(cluster, case.key, cluster.conf_path)
        assert before is not None and before != want
        old = tmp_path / "slurm.conf.before"  # how clients reached slurmctld before the change
        shutil.copyfile(cluster.conf_path, old)
        change(cluster.conf_path, case.key, value)
        reconfigured = run(["scontrol", "reconfigure"], env=cluster.env({"SLURM_CONF": str(old)}), timeout=60)
        assert reconfigured.returncode == 0, reconfigured.stderr
        if case.takes_effect == "reconfigure":
            cluster.wait_controller(60)
            assert shown(cluster, case.key, cluster.conf_path) == want, f"{case.key} after scontrol reconfigure ({case.why})"
            return
        # SlurmctldPort: the new slurmctld process that `scontrol reconfigure` starts (scontrol(1) of 26.05.3, lines
        # 399-404: it "will not be able to change the daemons' listening TCP port settings") reports the new value in
        # `show config` but keeps listening where it did; clients with the new slurm.conf cannot reach it.
        assert shown(cluster, case.key, old) == want
        assert not port_open(port) and shown(cluster, case.key, cluster.conf_path) is None
        cluster.restart_controller(60)
        assert port_open(port) and shown(cluster, case.key, cluster.conf_path) == want


def test_reconfigure_reloads_associations_and_qos_changed_behind_slurmdbd(prod: PlatformConfig, tmp_path: Path) -> None:
    """slurmctld keeps the QOS and associations it loaded; a change slurmdbd did not make (a restored database, here
    a row deleted while slurmdbd is stopped) stays invisible to it until it loads them again - which on 26.05.3
    `scontrol reconfigure` does, since it starts a new slurmctld process (scontrol(1) lines 399-402). The restore
    runbook restarts slurmctld instead (docs/operations.md, tests/components/layers/backups/test_runbook.py)."""
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    with rendered_site(prod, tmp_path, nodes=[node_line("cpu-0", features=["cpu"])]) as (cluster, dbd):
        cluster.run("sacctmgr", "-i", "add", "qos", "behind", check=True)

        def known() -> bool:
            return "QOS=behind" in cluster.scontrol("show", "assoc_mgr", "flags=qos")

        wait_until(known, 30, "slurmctld to learn QOS behind")
        dbd.stop()
        dbd.database.sql_root("DELETE FROM qos_table WHERE name = 'behind'", "slurm_acct_db")
        dbd.start()
        wait_until(
            lambda: "behind" not in cluster.run("sacctmgr", "-n", "-P", "show", "qos", "format=name").stdout.split(),
            30,
            "the restarted slurmdbd to serve the QOS without behind",
        )
        assert known()  # slurmdbd no longer has it; slurmctld still does
        cluster.scontrol("reconfigure")
        cluster.wait_controller(60)
        wait_until(lambda: not known(), 30, "scontrol reconfigure to drop QOS behind from slurmctld")

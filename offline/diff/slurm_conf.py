"""Which slurm.conf parameters a running slurmctld applies on `scontrol reconfigure` and which need a restart
(slurm.conf(5) of Slurm 26.05.3, read from the pinned tarball by tests/offline/diff/test_diff.py), and slurm.conf's lines as items."""

from __future__ import annotations

from dataclasses import dataclass

SLURM_CONF_MAN = "slurm-26.05.3.tar.bz2:doc/man/man5/slurm.conf.5"


SLURM_CONF_DEFAULT_EVIDENCE = (
    f"{SLURM_CONF_MAN}, DESCRIPTION: 'Changes to the configuration file take effect upon restart of Slurm daemons, "
    'daemon receipt of the SIGHUP signal, or execution of the command "scontrol reconfigure" unless otherwise noted\'; '
    "slurm-operator v1.2.1 internal/builder/controllerbuilder/scripts/reconfigure.sh (the reconfigure sidecar runs "
    "`scontrol reconfigure` when the files under /etc/slurm change)"
)


EVIDENCE_CONTROLLER_RECREATE = (
    "slurm-operator v1.2.1 api/v1beta1/controller_types.go InplaceReconfigure (default false: 'the pod will be recreated and "
    "reconfigure issued only on startup') and internal/builder/controllerbuilder/controller_app.go controllerPodTemplate "
    "(the pod template carries slurm-config-hash, getHashes; the reconfigure sidecar only with InplaceReconfigure)"
)


@dataclass(frozen=True)
class RestartRule:
    severity: str
    effect: str
    quote: str
    """Words of the parameter's entry in slurm.conf(5) (tests/offline/diff/test_diff.py finds them there, in the pinned tarball)."""


SLURM_CONF_RESTART: dict[str, RestartRule] = {
    "AuthType": RestartRule(
        "outage",
        "every Slurm daemon and command must be stopped, then restarted with the new AuthType; outstanding job steps are interrupted",
        "All Slurm daemons and commands must be terminated prior to changing",
    ),
    "SwitchType": RestartRule(
        "data-loss",
        "all daemons restart; with running jobs, slurmctld may lose the records of all jobs",
        "records of all jobs in any state may be lost",
    ),
    "SlurmctldPort": RestartRule(
        "singleton-restart",
        "slurmctld must restart to listen on the new port (a TCP listening setting), and every slurmd must learn it",
        "The port number that the Slurm controller",
    ),
    "SlurmdPort": RestartRule(
        "rolling-drain",
        "every slurmd must restart to listen on the new port (a TCP listening setting)",
        "The port number that the Slurm compute node daemon",
    ),
    "StateSaveLocation": RestartRule(
        "data-loss",
        "slurmctld reads its state (every running and pending job) from StateSaveLocation at start: a new location starts empty",
        "Since all running and pending job information is stored here",
    ),
}
"""Parameters that `scontrol reconfigure` does not apply; every other parameter is applied by it (the
man page's DESCRIPTION: 'unless otherwise noted'; 'Changes to TCP listening settings will require a daemon
restart' covers the two ports)."""


LISTENING_QUOTE = "Changes to TCP listening settings will require a daemon restart."


def applied_by(key: str) -> str:
    """How a change of slurm.conf parameter `key` takes effect on a running slurmctld: `restart` for the parameters
    of `SLURM_CONF_RESTART`, else `reconfigure` (tests/components/layers/slurm/test_real_slurm_reconfigure.py holds real 26.05.3 to it)."""
    return "restart" if key in SLURM_CONF_RESTART else "reconfigure"


def slurm_conf_items(text: str) -> dict[str, str]:
    """`Key=Value` settings of a slurm.conf fragment (NodeSet=/PartitionName= lines by their name)."""
    items: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or "=" not in line:
            continue
        key, _, rest = line.partition("=")
        if key in ("NodeSet", "PartitionName", "NodeName"):
            items[f"{key}={rest.split()[0] if rest.split() else ''}"] = line
        else:
            items[key] = rest.strip()
    return items

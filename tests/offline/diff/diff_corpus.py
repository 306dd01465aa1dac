"""A corpus of realistic changes to prod, each with its expected worst impact written down before it ran.

Each case edits a copy of Pulumi.prod.yaml and its inventory files (`Site`), or a version pin
(`pins`: components/versions.py attributes the program reads when it runs). tests/offline/diff/test_diff_corpus.py
runs the program on the edited copy and checks the plan and the impact against what is written here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from docs.sources import add_l40s


@dataclass
class Site:
    stack: str
    hosts: str
    users: str

    def replace(self, attribute: str, old: str, new: str, count: int = 1) -> None:
        text = getattr(self, attribute)
        assert text.count(old) >= count, f"{attribute}: {old!r} not found"
        setattr(self, attribute, text.replace(old, new, count))


@dataclass(frozen=True)
class Case:
    id: str
    what: str
    worst: str
    """The expected worst severity (offline/diff/effects.py SEVERITIES)."""
    edit: Callable[[Site], None]
    pins: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    """`Class.ATTR` of components.versions -> (field, old, new) to change in that pin."""
    drained: tuple[str, ...] = ()
    """Slurm nodes the impact must list as drained or restarted now."""
    resources: tuple[str, ...] = ()
    """`type-suffix name` of resources the plan must name (e.g. `NodeSet slurm/nodeset-cpu`)."""
    op: dict[str, str] = field(default_factory=dict)
    """Resource name -> the operation the plan must give it."""
    revised: str = ""
    """Where the expectation written first was changed after the first run, the first one and why."""


def _noop(site: Site) -> None:
    del site


HOST = """- name: cn097
  mac: 0c:c4:7a:10:00:61
  ip: 10.20.1.97
  nodeset: cpu-bm
  bmc: {mac: '0c:c4:7a:20:00:61', ip: 10.20.2.97}
  tags: [compute, rack4]
"""

USER = """- name: grace
  uidNumber: 10007
  primaryGroup: hpc-users
  groups: [proj-climate]
  fullName: Grace Hopper
"""


def _add_host(site: Site) -> None:
    site.hosts = site.hosts.rstrip("\n") + "\n" + HOST
    # Every host that joins Slurm is on a leaf switch of the topology (the config refuses it otherwise).
    site.replace("stack", '{name: rack4, nodes: ["cn[073-096]"]}', '{name: rack4, nodes: ["cn[073-097]"]}')


def _remove_host(site: Site) -> None:
    start = site.hosts.index("- name: cn005\n")
    end = site.hosts.index("- name: cn006\n")
    site.hosts = site.hosts[:start] + site.hosts[end:]


def _add_user(site: Site) -> None:
    site.users = site.users.rstrip("\n") + "\n" + USER


def _remove_user(site: Site) -> None:
    start = site.users.index("- name: frank\n")
    site.users = site.users[:start]


def _gpu_pool(site: Site) -> None:
    # The add-a-nodeset example of docs/operations.md, whose stack-file lines the docs show (docs/sources.py).
    site.stack = add_l40s()(site.stack)


def _extra(parameter: str) -> Callable[[Site], None]:
    def edit(site: Site) -> None:
        site.replace("stack", "      preemption:\n", f"      extraParameters: {{{parameter}}}\n      preemption:\n")

    return edit


def _move_pool(site: Site) -> None:
    site.replace("stack", '["10.10.0.100-10.10.0.149"]', '["10.10.8.100-10.10.8.149"]')
    for old in ("10.10.0.100", "10.10.0.101", "10.10.0.102"):
        site.replace("stack", f"address: {old}\n", f"address: {old.replace('10.10.0.', '10.10.8.')}\n")


def _sub(attribute: str, old: str, new: str, count: int = 1) -> Callable[[Site], None]:
    def edit(site: Site) -> None:
        site.replace(attribute, old, new, count)

    return edit


def _both(*edits: Callable[[Site], None]) -> Callable[[Site], None]:
    def edit(site: Site) -> None:
        for one in edits:
            one(site)

    return edit


CASES: tuple[Case, ...] = (
    Case("unchanged", "nothing edited", "none", _noop),
    Case(
        "add-host",
        "a bare-metal host cn097 joins nodeset cpu-bm (and leaf switch rack4)",
        "singleton-restart",
        _add_host,
        revised="none at first, for an edit the config refused; then singleton-restart (topology.yaml changes)"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows a topology.yaml change applied by the reconfigure sidecar with jobs kept (row topology.yaml)"
        + "; issue 33 (secrets by digest): the single Grendel pod restarts, its template carrying the checksum of the secret config that lists the hosts, which `[secret]` had hidden",
    ),
    Case(
        "remove-host",
        "bare-metal host cn005 (which may run jobs) leaves the inventory",
        "singleton-restart",
        _remove_host,
        drained=("cn005",),
        revised="rolling-drain at first (cn005 drained and removed, still a risk); issue 33 (secrets by digest): the single "
        "Grendel pod also restarts, its template's hpcforge.io/config-checksum (of its secret config) changing, which "
        "`[secret]` had hidden",
    ),
    Case(
        "add-user",
        "user grace in the directory",
        "reload",
        _add_user,
        revised="none at first; the reconcile Jobs run again, which impact.py defines as reload",
    ),
    Case("remove-user", "user frank leaves: directory entry and Slurm association removed", "reload", _remove_user),
    Case(
        "qos-limit",
        "QOS normal: maxJobsPerUser 200 -> 100",
        "reload",
        _sub("stack", "maxJobsPerUser: 200", "maxJobsPerUser: 100"),
        resources=("Job slurm/slurm-accounts-sync",),
        op={"slurm/slurm-accounts-sync": "replace"},
    ),
    Case(
        "add-gpu-pool",
        "a new L40S pool and nodeset gpu-l40s in partition gpu (docs/operations.md)",
        "reload",
        _gpu_pool,
        resources=("NodeSet slurm/nodeset-gpu-l40s", "Controller slurm/controller-slurm"),
        op={"slurm/nodeset-gpu-l40s": "create", "slurm/controller-slurm": "update"},
        revised="reload at first; then singleton-restart (no inplaceReconfigure)"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows a nodeset joining a partition and new gres.conf lines reconfigured with jobs kept",
    ),
    Case(
        "nodeset-image",
        "the slurmd image of the CPU nodesets (a pin bump)",
        "rolling-drain",
        _noop,
        pins={"Images.SLURMD": ("tag", "26.05-ubuntu26.04", "26.05.4-ubuntu26.04")},
        drained=("cpu-0", "cpu-15"),
    ),
    Case(
        "nodeset-resources",
        "nodeset cpu: 60 -> 58 CPUs per pod",
        "rolling-drain",
        _sub("stack", 'replicas: 16\n        cpu: "60"', 'replicas: 16\n        cpu: "58"'),
        drained=("cpu-0",),
    ),
    Case(
        "nodeset-scale-in",
        "nodeset gpu-a100: 8 -> 6 replicas",
        "rolling-drain",
        _sub("stack", 'replicas: 8\n        cpu: "120"', 'replicas: 6\n        cpu: "120"'),
        drained=("gpu-a100-6", "gpu-a100-7"),
        revised="rolling-drain at first; then singleton-restart (gres.conf lists the nodeset's nodes, no inplaceReconfigure)"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows a gres.conf host-list change reconfigured with jobs kept (row gres.conf-nodes); the drain is worst again",
    ),
    Case(
        "nodeset-max-unavailable",
        "nodeset cpu: maxUnavailable 2 -> 1 (no new pod revision)",
        "none",
        _sub("stack", "memory: 240Gi\n        maxUnavailable: 2", "memory: 240Gi\n        maxUnavailable: 1"),
    ),
    Case(
        "slurm-conf-restart",
        "slurm.conf SlurmctldPort (a TCP listening setting)",
        "outage",
        _extra("SlurmctldPort: '6820'"),
        revised="singleton-restart at first"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows the sidecar's scontrol cannot reach the new port, and slurm-operator keeps 6817 in the Service, --conf-server and probes",
    ),
    Case(
        "slurm-conf-reconfigure",
        "slurm.conf SlurmdTimeout 600 -> 900",
        "reload",
        _sub("stack", "slurmd: 600", "slurmd: 900"),
        revised="reload at first; then singleton-restart (no inplaceReconfigure)"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows SlurmdTimeout in force after scontrol reconfigure, jobs kept (row timeouts-and-weights)",
    ),
    Case(
        "state-save-location",
        "slurm.conf StateSaveLocation moved",
        "data-loss",
        _extra("StateSaveLocation: /var/spool/slurmctld2"),
    ),
    Case(
        "cluster-name",
        "ClusterName hpc -> hpc2",
        "outage",
        _sub("stack", "clusterName: hpc\n", "clusterName: hpc2\n"),
        revised="data-loss at first"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows slurmctld stopping on its saved state (fatal: CLUSTER NAME MISMATCH) with the jobs' processes running: an outage until the name is reverted",
    ),
    Case(
        "partition-max-time",
        "partition gpu: MaxTime 3 -> 4 days",
        "reload",
        _sub("stack", "maxTime: 3-00:00:00", "maxTime: 4-00:00:00"),
        revised="reload at first; then singleton-restart (no inplaceReconfigure)"
        + "; issue 33: the Controller now sets inplaceReconfigure, and offline/diff/slurm_outcomes.json (real Slurm 26.05.3) shows partition limits in force after scontrol reconfigure, jobs kept (row partition-limits)",
    ),
    Case("move-metallb-pool", "the services pool and the addresses in it move to 10.10.8.0/24", "outage", _move_pool),
    Case(
        "rotate-ca",
        "the internal CA gets a new subject (re-issued)",
        "outage",
        _sub("stack", "commonName: Example HPC Internal CA", "commonName: Example HPC Internal CA 2027"),
    ),
    Case(
        "db-grow",
        "database storage 100Gi -> 200Gi",
        "none",
        _sub("stack", "storage:\n      size: 100Gi", "storage:\n      size: 200Gi"),
    ),
    Case(
        "db-shrink",
        "database storage 100Gi -> 50Gi (refused by mariadb-operator)",
        "outage",
        _sub("stack", "storage:\n      size: 100Gi", "storage:\n      size: 50Gi"),
    ),
    Case(
        "db-storage-class",
        "database storage class ceph-rbd -> fast-nvme (refused by mariadb-operator)",
        "outage",
        _sub("stack", "storage:\n      size: 100Gi", "storage:\n      size: 100Gi\n      storageClass: fast-nvme"),
    ),
    Case(
        "chart-bump",
        "Kueue chart 0.19.2 -> 0.19.3",
        "singleton-restart",
        _noop,
        pins={"Charts.KUEUE": ("version", "0.19.2", "0.19.3")},
        resources=("Application argocd/kueue",),
    ),
    Case(
        "kernel-cmdline",
        "the compute image's kernel command line gains mitigations=off",
        "singleton-restart",
        _sub(
            "stack",
            "cmdline: console=ttyS0,115200 rd.neednet=1 ip=dhcp\n      - name: rocky9-service",
            "cmdline: console=ttyS0,115200 rd.neednet=1 ip=dhcp mitigations=off\n      - name: rocky9-service",
        ),
        revised="reload at first (the hosts boot the new command line at their next boot); issue 33 (secrets by digest): "
        "the single Grendel pod restarts, its template's hpcforge.io/config-checksum (of its secret config) changing, "
        "which `[secret]` had hidden",
    ),
    Case(
        "team-clusterqueue",
        "team-climate moves from ClusterQueue research to inference",
        "reload",
        _sub("stack", "{namespace: team-climate, clusterQueue: research}", "{namespace: team-climate, clusterQueue: inference}"),
    ),
    Case(
        "monitoring-off",
        "monitoring switched off",
        "outage",
        _sub("stack", "  hpcforge:observability:\n", "  hpcforge:observability:\n    enabled: false\n"),
    ),
    Case(
        "controller-memory",
        "slurmctld memory 16Gi -> 32Gi",
        "singleton-restart",
        _sub("stack", 'cpu: "4"\n      memory: 16Gi\n      storage:', 'cpu: "4"\n      memory: 32Gi\n      storage:'),
    ),
    Case(
        "accounting-memory",
        "slurmdbd memory 4Gi -> 8Gi",
        "singleton-restart",
        _sub("stack", 'cpu: "1"\n      memory: 4Gi', 'cpu: "1"\n      memory: 8Gi'),
    ),
    Case(
        "directory-storage",
        "389ds volume 20Gi -> 40Gi (a volumeClaimTemplates change)",
        "data-loss",
        _sub("stack", "storage:\n      size: 20Gi", "storage:\n      size: 40Gi"),
    ),
    Case(
        "add-account",
        "Slurm account physics under science",
        "reload",
        _sub(
            "stack",
            "      users:\n        - {name: alice",
            "        - {name: physics, parent: science, fairshare: 10}\n      users:\n        - {name: alice",
        ),
        revised="none at first; the reconcile Jobs run again, which impact.py defines as reload",
    ),
    Case(
        "login-memory",
        "login pods 16Gi -> 24Gi",
        "reload",
        _sub("stack", "memory: 16Gi\n      memoryLimit: 16Gi", "memory: 24Gi\n      memoryLimit: 24Gi"),
    ),
    Case(
        "backup-schedule",
        "database backups at 03:15 instead of 02:15",
        "none",
        _sub("stack", 'schedule: "15 2 * * *"', 'schedule: "15 3 * * *"'),
    ),
    Case(
        "observability-retention",
        "Prometheus retention 30d -> 45d",
        "singleton-restart",
        _sub("stack", "retention: 30d", "retention: 45d"),
    ),
    Case(
        "dns-host",
        "a new name in the site DNS zone",
        "reload",
        _sub("stack", "nfs02: 10.10.0.21\n", "nfs02: 10.10.0.21\n            nfs03: 10.10.0.22\n"),
        revised="none at first; the CoreDNS pods roll (their template carries the zone's checksum)",
    ),
)

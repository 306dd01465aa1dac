"""Corpus cases for the operator rules and the fail-closed verdict (issue 33, the rule half), each with its expected
worst severity and the evidence for it written before it ran: prod edited as an operator of the site would edit it.
tests/offline/diff/test_diff_corpus.py runs them with diff_corpus.CASES and corpus_slurm.SLURM_CASES."""

from __future__ import annotations

from offline.diff.effects import UNASSESSED
from tests.offline.diff.corpus_slurm import both, sub
from tests.offline.diff.diff_corpus import Case, Site

LOGIN_IN = both(
    sub("    login:\n      replicas: 2\n", "    login:\n      replicas: 1\n"),
    # hpcforge refuses a maxUnavailable that would take every login pod down at once
    sub("      memoryLimit: 16Gi\n      maxUnavailable: 1\n", "      memoryLimit: 16Gi\n      maxUnavailable: 0\n"),
)
RESTAPI_OFF = sub("    restapi:\n      enabled: true\n", "    restapi:\n      enabled: false\n")


def _uid(site: Site) -> None:
    site.replace("users", "- name: bob\n  uidNumber: 10002\n", "- name: bob\n  uidNumber: 20002\n")


OPERATOR_CASES: tuple[Case, ...] = (
    Case(
        "restapi-off",
        "RestApi switched off: slurmrestd stops and slurm-operator loses its Slurm client, so drains stop working "
        "(slurmclient_sync.go@v1.2.1:41-47, slurmcontrol.go@v1.2.1:208-216,334-342)",
        "outage",
        RESTAPI_OFF,
    ),
    Case(
        "restapi-off-with-roll",
        "RestApi off and, in the same change, the CPU nodesets' slurmd image: the roll deletes pods without a drain "
        "(nodeset_sync.go@v1.2.1:1297-1318 with IsNodeDrained true), jobs killed",
        "outage",
        RESTAPI_OFF,
        pins={"Images.SLURMD": ("tag", "26.05-ubuntu26.04", "26.05.4-ubuntu26.04")},
        drained=("cpu-0",),
    ),
    Case(
        "login-scale-in",
        "login pool 2 -> 1 replicas: the Deployment deletes a login pod with its sessions (login_app.go@v1.2.1:89-92)",
        "reload",
        LOGIN_IN,
        revised="outage at first; a roll of the login pods ends the same sessions and is a reload, and logins go on on the "
        "pods that stay (nothing stops until someone acts: docs/operations.md's outage), so both are reload with a step",
    ),
    Case(
        "login-scale-out",
        "login pool 2 -> 3 replicas: a new login pod, nothing else",
        "none",
        sub("    login:\n      replicas: 2\n", "    login:\n      replicas: 3\n"),
    ),
    Case(
        "controller-state-volume",
        "slurmctld state volume 50Gi -> 100Gi: slurm-operator never patches volumeClaimTemplates (patch.go@v1.2.1:159-173): "
        "not applied, nothing restarts",
        "none",
        sub("      storage:\n        size: 50Gi\n", "      storage:\n        size: 100Gi\n"),
    ),
    Case(
        "db-buffer-pool",
        "innodbBufferPoolSize 4096M -> 6144M: a new my.cnf hash restarts the single MariaDB pod "
        "(mariadb_controller_update.go@v26.6.0:107-116,223-235)",
        "singleton-restart",
        sub("innodbBufferPoolSize: 4096M", "innodbBufferPoolSize: 6144M"),
    ),
    Case(
        "db-memory",
        "database memory 8Gi -> 12Gi: a new pod template restarts the single MariaDB pod",
        "singleton-restart",
        sub("    memory: 8Gi\n    memoryLimit: 8Gi\n", "    memory: 12Gi\n    memoryLimit: 12Gi\n"),
    ),
    Case(
        "sriov-vfs",
        "RoCE rail 0: 8 -> 4 virtual functions: the SR-IOV config daemon drains (and may reboot) the nodes the policy "
        "selects (daemon.go@v1.6.0:233-277,394-397)",
        "outage",
        sub("mode: sriov, vfs: 8}\n", "mode: sriov, vfs: 4}\n"),
    ),
    Case(
        "ldap-suffix",
        "directory suffix dc=hpc -> dc=hpc2: a new backend; users' passwords stay in the old tree (ldap_sync.py ensure_backend)",
        "data-loss",
        sub("    suffix: dc=hpc,dc=example,dc=org\n", "    suffix: dc=hpc2,dc=example,dc=org\n"),
    ),
    Case(
        "uid-number",
        "bob's uidNumber 10002 -> 20002: his files keep 10002 and are orphaned",
        "data-loss",
        _uid,
    ),
    Case(
        "restapi-replicas",
        "slurmrestd 2 -> 3 replicas: no rule was written for a RestApi change, so it is unassessed (fail closed)",
        UNASSESSED,
        sub("    restapi:\n      enabled: true\n      replicas: 2\n", "    restapi:\n      enabled: true\n      replicas: 3\n"),
    ),
    Case(
        "nodeset-image-with-249",
        "the CPU nodesets' slurmd image with the RestApi on: a rolling drain, and Slinky #249 named as a risk",
        "rolling-drain",
        both(),
        pins={"Images.SLURMD": ("tag", "26.05-ubuntu26.04", "26.05.4-ubuntu26.04")},
        drained=("cpu-0",),
    ),
    Case(
        "login-scale-in-and-db",
        "login 2 -> 1 and database memory in one change: the worst is the database restart (singleton-restart)",
        "singleton-restart",
        both(
            LOGIN_IN,
            sub("    memory: 8Gi\n    memoryLimit: 8Gi\n", "    memory: 12Gi\n    memoryLimit: 12Gi\n"),
        ),
    ),
)

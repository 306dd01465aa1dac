"""Scheduled active GPU checks (hpcforge:gpu.activeChecks, issues 28 and 35): the typed config and its checks, what
one costs in GPU-hours a week (`weekly_gpu_hours`), what prod renders (ConfigMap, CronJobs). The job script against
faked tools is tested in tests/scripts/gpu/test_active_check_script.py; the driver, its drains and resumes against a
real Slurm 26.05.3, in tests/scripts/gpu/test_real_active_checks.py.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.layers.gpu.config import runs_per_week
from components.layers.slurm.accounts_job import SACK_START
from components.layers.slurm.active_checks import ACTIVE_CHECKS_MAP, JOB_IMAGES_ANNOTATION, cronjob_spec, weekly_gpu_hours
from components.site.loader import ConfigError, load_config
from components.site.placement import nodeset_nodes
from components.versions import Images
from offline.program.engine import RecordedStack
from tests.helpers import config_values, raw_config
from tests.test_layers import objects, one


def _prod_with(mutate: Any) -> Any:
    values = config_values("prod")
    mutate(values)
    return load_config(raw_config(values))


def _checks(values: dict[str, Any]) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = values["hpcforge:gpu"]["activeChecks"]
    return checks


# --- config and cost ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schedule", "runs"),
    [
        ("0 3 * * 0", 1.0),  # weekly, Sunday
        ("0 3 * * 7", 1.0),  # 7 is Sunday too
        ("30 2 * * *", 7.0),
        ("*/15 * * * *", 672.0),
        ("0 */6 * * 1-5", 20.0),
        ("0 3 1 * *", 12 / (365.2425 / 7)),  # monthly: 12 a year
    ],
)
def test_runs_per_week_of_a_cron_schedule(schedule: str, runs: float) -> None:
    assert runs_per_week(schedule) == pytest.approx(runs)


def test_an_allreduce_holds_its_nodes_and_no_more() -> None:
    def odd(values: dict[str, Any]) -> None:
        values["hpcforge:slurm"]["nodesets"][3]["replicas"] = 3
        _checks(values)[1].update(nodes=2, timeLimitMinutes=60)

    # 3 nodes in pairs: one all-reduce over the 3 (a short remainder joins the last group, no node is borrowed from
    # another job: issue 35 item 8): 3 nodes x 8 GPUs x (1 h + 5 min), weekly.
    config = _prod_with(odd)
    assert weekly_gpu_hours(config.slurm, config.gpu.active_checks, nodeset_nodes(config))["nccl"] == 26.0


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda v: _checks(v)[0].update(nodesets=["cpu"]),
            "hpcforge:gpu.activeChecks[0].nodesets[0]: 'cpu' is not a GPU nodeset",
        ),
        (
            lambda v: _checks(v)[1].update(nodes=8),
            "hpcforge:gpu.activeChecks[1].nodes: an all-reduce across 8 nodes, but nodeset 'gpu-h100' has 4",
        ),
        (lambda v: _checks(v)[2].update(name="dcgm"), "hpcforge:gpu.activeChecks[2].name: 'dcgm' is used by another check"),
        (lambda v: _checks(v)[2].update(schedule="0 25 * * *"), "hpcforge:gpu.activeChecks[2].schedule"),
        (lambda v: _checks(v)[2].update(schedule="daily"), "hpcforge:gpu.activeChecks[2].schedule"),
        (lambda v: _checks(v)[2].update(name="IB_links"), "hpcforge:gpu.activeChecks[2].name"),
        (lambda v: _checks(v)[2].update(action="remediate"), "hpcforge:gpu.activeChecks[2].action"),
        (
            lambda v: v["hpcforge:gpu"].update(activeCheckUser="mallory"),
            "hpcforge:gpu.activeCheckUser: unknown directory user 'mallory'",
        ),
        (
            lambda v: v["hpcforge:slurm"]["accounts"]["users"][1].update(adminLevel="Operator"),
            "hpcforge:gpu.activeCheckUser: 'hpcforge-check' has adminLevel Operator in slurm.accounts.users; the checks "
            "drain and resume nodes, which Slurm allows Administrator only",
        ),
        (
            lambda v: v["hpcforge:slurm"]["accounts"].update(users=[]),
            "hpcforge:gpu.activeCheckUser: 'hpcforge-check' has no Slurm association",
        ),
        (
            lambda v: v["hpcforge:slurm"]["accounting"].update(enabled=False),
            "hpcforge:gpu.activeChecks: the checks read their jobs' results from accounting (sacct)",
        ),
        (
            lambda v: v["hpcforge:slurm"].update(pyxis=False) or v["hpcforge:gpu"]["evidence"].update(enabled=False),
            "hpcforge:gpu.activeChecks[0].kind: dcgm-diag starts its image (nccl-tests, DCGM) with srun --container-image",
        ),
    ],
)
def test_active_check_mistakes_name_the_key(mutate: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        _prod_with(mutate)


# --- what prod renders ----------------------------------------------------------------------------------------------


@pytest.mark.program
def test_prod_runs_each_check_from_a_cronjob_that_never_overlaps(prod_stack: RecordedStack) -> None:
    cronjobs = {key: r.inputs["spec"] for key, r in objects(prod_stack, "CronJob").items() if "gpu-check-" in key}
    assert set(cronjobs) == {"slurm/gpu-check-dcgm", "slurm/gpu-check-nccl", "slurm/gpu-check-ib"}
    ib = cronjobs["slurm/gpu-check-ib"]
    assert ib["schedule"] == "30 2 * * *" and ib["concurrencyPolicy"] == "Forbid"
    pod = ib["jobTemplate"]["spec"]["template"]["spec"]
    command = pod["containers"][0]["command"]
    assert command == [
        "python3", "/etc/hpcforge/active-checks/active_checks.py", "--config", "/etc/hpcforge/active-checks/checks.json",
        "--check", "ib", "--script", "/etc/hpcforge/active-checks/active-check.sh",
        "--token-file", "/etc/hpcforge/token/SLURM_JWT",
    ]  # fmt: skip
    assert pod["containers"][0]["image"] == Images.LOGIN.ref
    checks_map = one(prod_stack, "ConfigMap", "slurm", ACTIVE_CHECKS_MAP)
    data = checks_map["data"]
    # the images its jobs run through Pyxis, named where the security pack's images-by-digest reads them
    assert checks_map["metadata"]["annotations"][JOB_IMAGES_ANNOTATION] == f"{Images.DCGM.ref},{Images.NCCL_TESTS.ref}"
    assert "# --- include ../" not in data["active-check.sh"] and "dcgm_reason()" in data["active-check.sh"]
    checks = {c["name"]: c for c in json.loads(data["checks.json"])["checks"]}
    assert checks["nccl"]["partition"] == checks["dcgm"]["partition"] == "gpu"  # the first that holds the nodesets
    assert checks["dcgm"]["env"]["IMAGE"] == Images.DCGM.ref and checks["ib"]["env"]["MIN_RATE"] == "400"
    # the jobs ask for every GPU of the nodes they test (issue 35 item 1): 8 per node in both nodesets
    assert checks["dcgm"]["gpus"] == {"gpu-a100": 8, "gpu-h100": 8} and checks["nccl"]["gpus"] == {"gpu-h100": 8}
    # prod declares no action: every check reports and drains nothing (the first stage of a rollout)
    assert {c["action"] for c in checks.values()} == {"report"}


def test_preview_and_diff_print_what_each_check_costs_in_gpu_hours(prod_stack: RecordedStack) -> None:
    """Each CronJob carries its `weekly_gpu_hours` figure; preview sums them, and a diff that changes a schedule
    names the old and new cost (issue 28: the cost printed by the impact/preview output)."""
    import copy

    from offline.diff.base import State
    from offline.diff.impact import assess
    from offline.diff.plan import make_plan
    from offline.preview.summary import active_check_costs

    config = load_config(config_values("prod"), stack="prod")
    expected = weekly_gpu_hours(config.slurm, config.gpu.active_checks, nodeset_nodes(config))
    line = active_check_costs(prod_stack)
    assert line is not None and f"{sum(expected.values()):.1f} GPU-hours a week" in line
    for name, hours in expected.items():
        assert f"gpu-check-{name} {hours:.1f}" in line
    base = State.from_recorded(prod_stack, "prod")
    head = copy.deepcopy(base)
    for resource in head.resources:
        if resource["name"] == "slurm/gpu-check-nccl":
            resource["inputs"]["metadata"]["annotations"]["hpcforge.io/gpu-hours-per-week"] = "16.0"
            resource["inputs"]["spec"]["schedule"] = "0 3 * * 0,3"
    effects = [e for e in assess(make_plan(base, head)).effects if "active GPU check" in e.what]
    assert [e.what for e in effects] == [
        f"active GPU check gpu-check-nccl: up to 16.0 GPU-hours a week (was {expected['nccl']:.1f})"
    ]
    assert effects[0].severity == "none"


# --- who the checks run as (issue 35 item 12) -----------------------------------------------------------------------


@pytest.mark.program
def test_the_check_pod_holds_a_jwt_for_its_user_and_no_slurm_key(prod_stack: RecordedStack) -> None:
    """The narrowest credential Slurm 26.05.3 offers that may reserve, drain and resume: a JWT for one user with
    AdminLevel=Administrator (tests/scripts/gpu/test_real_active_checks.py proves what each level may do), from
    Slinky's Token resource, signed with the Controller's JWT key. slurm.key (a credential for any user) stays out."""
    token = one(prod_stack, "Token", "slurm", "gpu-active-checks")
    assert token["spec"] == {
        "jwtKeyRef": {"name": "slurm-auth-jwt", "key": "jwt.key"},
        "username": "hpcforge-check",
        "lifetime": "2h",
        "refresh": True,
        "secretRef": {"name": "gpu-active-checks-jwt", "key": "SLURM_JWT"},
    }
    for key, cronjob in objects(prod_stack, "CronJob").items():
        if "gpu-check-" not in key:
            continue
        pod = cronjob.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        assert "slurm-auth-slurm" not in json.dumps(pod) and "slurm.key" not in json.dumps(pod)
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65534
        secrets = [v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v]
        assert secrets == ["gpu-active-checks-jwt"]


@pytest.mark.program
def test_slurmctld_and_slurmdbd_can_look_the_check_user_up(prod_stack: RecordedStack, tmp_path: Path) -> None:
    """A JWT names its user only; slurmctld and slurmdbd look the name up in their own pods, which know root and slurm
    (components/layers/slurm/passwd.py). Each gets the user's line (uid of the directory, primary group's gid) on top
    of its image's /etc/passwd; the init container's command, run here on this machine's /etc/passwd, keeps every
    line of the image's file and adds the user's."""
    for kind, container in (("Controller", "slurmctld"), ("Accounting", "slurmdbd")):
        spec = one(prod_stack, kind, "slurm", "slurm")["spec"]
        assert spec[container]["volumeMounts"] == [
            {"name": "hpcforge-passwd", "mountPath": "/etc/passwd", "subPath": "passwd", "readOnly": True}
        ]
        init = spec["template"]["spec"]["initContainers"][0]
        assert init["image"] == spec[container]["image"]  # the image's own passwd, whatever users it has
        command = [part.replace("/out/", f"{tmp_path}/") for part in init["command"]]
        subprocess.run(command, check=True, timeout=30)
        written = (tmp_path / "passwd").read_text().splitlines()
        assert written[:-1] == Path("/etc/passwd").read_text().splitlines()
        assert written[-1] == "hpcforge-check:x:19001:5000:hpcforge-check:/nonexistent:/usr/sbin/nologin"


def test_without_a_check_user_the_checks_run_as_root_with_slurm_key() -> None:
    """No `gpu.activeCheckUser` (a stack written before issue 35): as before, root with slurm.key and sackd."""
    config = _prod_with(lambda v: v["hpcforge:gpu"].pop("activeCheckUser"))
    check = config.gpu.active_checks[0]
    spec = cronjob_spec(check, controller="slurm", slurm_key_secret="slurm-auth-slurm", labels={})
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["command"][:3] == ["/bin/sh", "-c", SACK_START]
    assert "--token-file" not in pod["containers"][0]["command"]

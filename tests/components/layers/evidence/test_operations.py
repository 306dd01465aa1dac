"""Deployment evidence and cluster bootstrap: the scripts against fake kubectl/k0s binaries on
PATH (success and failure answers), shellcheck, and what the program declares for them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.layers.evidence.objects import evidence_checks
from components.site.loader import load_config
from offline.program.engine import ProgramConfigError, RecordedStack
from tests.helpers import REPO, config_values, raw_config, require_binaries, run_stack_file, write_variant

EVIDENCE = REPO / "scripts" / "evidence"
BOOTSTRAP = REPO / "scripts" / "bootstrap"
FAKES = REPO / "tests" / "fakes"


def run_check(
    tmp_path: Path, script: str, answers: list[dict[str, Any]], env: dict[str, str], timeout: str = "0"
) -> subprocess.CompletedProcess[str]:
    answers_file = tmp_path / "answers.json"
    answers_file.write_text(json.dumps(answers))
    environment = {
        **os.environ,
        "PATH": f"{FAKES}:{os.environ['PATH']}",
        "FAKE_KUBECTL_ANSWERS": str(answers_file),
        "FAKE_KUBECTL_LOG": str(tmp_path / "kubectl.log"),
        "HPCFORGE_EVIDENCE_TIMEOUT": timeout,
        "HPCFORGE_EVIDENCE_INTERVAL": "0",
        "HPCFORGE_KUBE_CONTEXT": "hpcforge-test",
        **env,
    }
    return subprocess.run(
        ["bash", str(EVIDENCE / script)], env=environment, capture_output=True, text=True, timeout=60, check=False
    )


SLURM = {"SLURM_NAMESPACE": "slurm", "SLURM_CONTROLLER": "slurm-controller", "SLURM_LOGIN": "login"}


def _ok(result: subprocess.CompletedProcess[str], check: str) -> dict[str, Any]:
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["check"] == check and report["ok"] is True
    return report


def test_argocd_apps_synced(tmp_path: Path) -> None:
    rows = "cert-manager Synced Healthy\nmetallb Synced Healthy\n"
    result = run_check(tmp_path, "argocd-apps.sh", [{"match": "-n argocd get applications.argoproj.io", "stdout": rows}], {})
    assert _ok(result, "argocd-apps")["detail"] == "2 applications Synced and Healthy"
    assert "--context hpcforge-test" in (tmp_path / "kubectl.log").read_text()


def test_argocd_app_out_of_sync_fails_naming_it(tmp_path: Path) -> None:
    rows = "cert-manager Synced Healthy\ntraefik OutOfSync Degraded\nkueue Synced \n"
    result = run_check(tmp_path, "argocd-apps.sh", [{"match": "get applications", "stdout": rows}], {})
    assert result.returncode == 1
    assert "argocd-apps failed after 0s: not converged: traefik is OutOfSync/Degraded; kueue is Synced/Unknown" in result.stderr


def test_argocd_unreachable(tmp_path: Path) -> None:
    result = run_check(tmp_path, "argocd-apps.sh", [{"match": "get applications", "exit": 1, "stderr": "connection refused"}], {})
    assert result.returncode == 1 and "cannot list Argo CD applications" in result.stderr


def test_check_waits_for_convergence(tmp_path: Path) -> None:
    answers = [
        {"match": "get applications", "stdout": "traefik Syncing Progressing\n", "times": 2},
        {"match": "get applications", "stdout": "traefik Synced Healthy\n"},
    ]
    result = run_check(tmp_path, "argocd-apps.sh", answers, {}, timeout="30")
    _ok(result, "argocd-apps")
    assert (tmp_path / "kubectl.log").read_text().count("get applications") == 3


def test_slurm_controller(tmp_path: Path) -> None:
    up = [
        {
            "match": "exec statefulset/slurm-controller -c slurmctld -- scontrol ping",
            "stdout": "Slurmctld(primary) at slurm-controller-0 is UP\n",
        }
    ]
    _ok(run_check(tmp_path, "slurm-controller.sh", up, SLURM), "slurm-controller")
    down = [{"match": "scontrol ping", "stdout": "Slurmctld(primary) at slurm-controller-0 is DOWN\n"}]
    result = run_check(tmp_path, "slurm-controller.sh", down, SLURM)
    assert result.returncode == 1 and "slurmctld is not up: Slurmctld(primary) at slurm-controller-0 is DOWN" in result.stderr


def test_slurm_nodes(tmp_path: Path) -> None:
    rows = "cpu-0|idle|cpu,avx512\ncpu-1|idle|cpu,avx512\ngpu-0|idle|gpu-a100\ngpu-0|idle|gpu-a100\n"
    env = {**SLURM, "SLURM_NODESETS": "cpu:2 gpu-a100:1 cpu-bm:0"}
    report = _ok(run_check(tmp_path, "slurm-nodes.sh", [{"match": "sinfo -h -N", "stdout": rows}], env), "slurm-nodes")
    assert report["detail"] == "cpu 2/2 ready (2 idle); gpu-a100 1/1 ready (1 idle)"
    busy = "cpu-0|mixed|cpu\ncpu-1|allocated|cpu\n"
    report = _ok(
        run_check(tmp_path, "slurm-nodes.sh", [{"match": "sinfo", "stdout": busy}], {**SLURM, "SLURM_NODESETS": "cpu:2"}),
        "slurm-nodes",
    )
    assert report["detail"] == "cpu 2/2 ready (0 idle)"  # a busy cluster is fine
    rows = "cpu-0|idle|cpu\ncpu-1|drained|cpu\n"
    result = run_check(
        tmp_path, "slurm-nodes.sh", [{"match": "sinfo", "stdout": rows}], {**SLURM, "SLURM_NODESETS": "cpu:2 gpu-a100:1"}
    )
    assert result.returncode == 1
    assert "nodeset cpu has 1 of 2 nodes ready; nodeset gpu-a100 has 0 of 1 nodes ready" in result.stderr


def test_slurm_test_job(tmp_path: Path) -> None:
    env = {**SLURM, "SLURM_PARTITION": "debug"}
    ok = [{"match": "exec deployment/login -- srun --partition=debug --nodes=1", "stdout": "cpu-0\n"}]
    assert (
        _ok(run_check(tmp_path, "slurm-test-job.sh", ok, env), "slurm-test-job")["detail"]
        == "test job in partition debug ran on cpu-0"
    )
    bad = [{"match": "srun", "exit": 1, "stderr": "srun: error: Unable to allocate resources: Invalid partition name specified"}]
    result = run_check(tmp_path, "slurm-test-job.sh", bad, env)
    assert result.returncode == 1 and "Invalid partition name specified" in result.stderr


def test_ldap_lookup(tmp_path: Path) -> None:
    env = {**SLURM, "LOOKUP_USER": "alice", "LOOKUP_UID": "10001"}
    ok = [{"match": "getent passwd alice", "stdout": "alice:*:10001:5000:Alice Admin:/home/alice:/bin/bash\n"}]
    _ok(run_check(tmp_path, "ldap-lookup.sh", ok, env), "ldap-lookup")
    wrong = [{"match": "getent passwd alice", "stdout": "alice:*:500:500::/home/alice:/bin/sh\n"}]
    result = run_check(tmp_path, "ldap-lookup.sh", wrong, env)
    assert result.returncode == 1 and "resolved with uid 500, expected 10001" in result.stderr
    missing = [{"match": "getent passwd alice", "exit": 2}]
    result = run_check(tmp_path, "ldap-lookup.sh", missing, env)
    assert result.returncode == 1 and "user alice is unknown on the login node" in result.stderr


def test_grendel_api(tmp_path: Path) -> None:
    env = {"GRENDEL_NAMESPACE": "provisioning", "GRENDEL_HOSTS": "2"}
    ok = [{"match": "exec deployment/grendel -- grendel -c /secret/grendel.toml host list", "stdout": "cn001\ncn002\n"}]
    _ok(run_check(tmp_path, "grendel-api.sh", ok, env), "grendel-api")
    few = [{"match": "host list", "stdout": "cn001\n"}]
    result = run_check(tmp_path, "grendel-api.sh", few, env)
    assert result.returncode == 1 and "Grendel lists 1 hosts, expected at least 2" in result.stderr


def test_bootstrapped_cluster_kubeconfig_is_used_and_removed(tmp_path: Path) -> None:
    answers = [{"match": "--kubeconfig /", "stdout": "traefik Synced Healthy\n"}]
    result = run_check(tmp_path, "argocd-apps.sh", answers, {"HPCFORGE_KUBECONFIG_DATA": "apiVersion: v1\nkind: Config\n"})
    _ok(result, "argocd-apps")
    path = (tmp_path / "kubectl.log").read_text().split("--kubeconfig ", 1)[1].split()[0]
    assert not Path(path).exists()  # the temporary kubeconfig is gone after the check


def test_missing_parameter_is_reported(tmp_path: Path) -> None:
    result = run_check(tmp_path, "slurm-nodes.sh", [], {"SLURM_NAMESPACE": "slurm"})
    assert result.returncode == 2 and "SLURM_CONTROLLER is not set" in result.stderr


def test_scripts_are_shellcheck_clean() -> None:
    shellcheck = require_binaries("shellcheck")["shellcheck"]
    scripts = sorted(str(p) for p in (REPO / "scripts").rglob("*.sh"))
    assert len(scripts) >= 12
    result = subprocess.run(
        [shellcheck, "-x", "-P", "SCRIPTDIR", *scripts], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


# --- what the program declares ------------------------------------------------------------------------


@pytest.mark.program
def test_evidence_commands_in_prod(prod_stack: RecordedStack, dev_stack: RecordedStack) -> None:
    commands = {r.name: r.inputs for r in prod_stack.by_type("command:local:Command")}
    assert set(commands) == {
        f"evidence-{c}"
        for c in (
            "argocd-apps",
            "slurm-controller",
            "slurm-nodes",
            "slurm-test-job",
            "ldap-lookup",
            "gpu-allocatable",
            "rdma-devices",
            "nccl-allreduce",
            "grendel-api",
        )
    }
    nodes = commands["evidence-slurm-nodes"]
    assert nodes["create"] == "bash scripts/evidence/slurm-nodes.sh"
    assert nodes["environment"]["SLURM_NODESETS"] == "cpu:16 cpu-bm:0 gpu-a100:8 gpu-h100:4"
    assert nodes["environment"]["HPCFORGE_EVIDENCE_TIMEOUT"] == "1200"
    assert commands["evidence-ldap-lookup"]["environment"]["LOOKUP_UID"] == "10001"
    assert set(prod_stack.outputs["evidence"]) == {c.removeprefix("evidence-") for c in commands}
    assert not dev_stack.by_type("command:local:Command")  # evidence is enabled per stack


def test_evidence_check_list_follows_config() -> None:
    dev = load_config(raw_config(config_values("dev")))
    names = [check.name for check in evidence_checks(dev)]
    assert names == ["argocd-apps", "slurm-controller", "slurm-nodes", "slurm-test-job", "ldap-lookup", "grendel-api"]
    test_job = next(c for c in evidence_checks(dev) if c.name == "slurm-test-job")
    assert test_job.environment["SLURM_PARTITION"] == "debug"


# --- cluster bootstrap --------------------------------------------------------------------------------

BOOTSTRAP_CONFIG = {
    "version": "v1.33.4+k0s.0",
    "controllers": [{"host": "10.0.0.11", "name": "cp1"}],
    "workers": [{"host": "10.0.0.21", "name": "w1"}, {"host": "10.0.0.22", "name": "w2", "user": "admin", "port": 2222}],
}


def _with_bootstrap(values: dict[str, Any]) -> None:
    values["hpcforge:cluster"] = {"bootstrap": BOOTSTRAP_CONFIG}
    values["hpcforge:sshPrivateKey"] = "-----BEGIN OPENSSH PRIVATE KEY-----\\nAAAA\\n-----END OPENSSH PRIVATE KEY-----"
    values["hpcforge:kubernetes"].pop("context")


@pytest.mark.program
def test_bootstrap_over_ssh(tmp_path: Path) -> None:
    stack = run_stack_file(write_variant(tmp_path, "dev", _with_bootstrap), "dev")
    remote = {r.name: r for r in stack.by_type("command:remote:Command")}
    assert set(remote) == {"k0s-cp1", "k0s-token-worker", "k0s-w1", "k0s-w2", "k0s-kubeconfig"}
    w2 = remote["k0s-w2"]
    assert w2.inputs["connection"]["host"] == "10.0.0.22" and w2.inputs["connection"]["port"] == 2222
    assert "connection.privateKey" in w2.secret_paths or "connection" in w2.secret_paths
    assert "K0S_ROLE=worker" in w2.inputs["create"] and "k0s-remove" not in w2.inputs["create"]
    assert w2.inputs["delete"].startswith("bash -c") or "k0s removed" in w2.inputs["delete"]
    assert "stdin" in w2.inputs  # the join token, not on a command line
    # A version bump must update in place, never replace (a replace would run k0s-remove on the host).
    assert "triggers" not in w2.inputs and w2.inputs["update"] == w2.inputs["create"]
    assert "K0S_ROLE=controller " in remote["k0s-cp1"].inputs["create"]
    provider = stack.find("pulumi:providers:kubernetes", "kubernetes")
    assert "kubeconfig" in provider.secret_paths
    assert "stdout" in remote["k0s-kubeconfig"].additional_secret_outputs


@pytest.mark.program
def test_no_bootstrap_by_default(dev_stack: RecordedStack) -> None:
    assert not dev_stack.by_type("command:remote:Command")
    assert dev_stack.find("pulumi:providers:kubernetes", "kubernetes").inputs.get("context") == "hpcforge-dev"


def test_bootstrap_needs_a_key(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        _with_bootstrap(values)
        values.pop("hpcforge:sshPrivateKey")

    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(write_variant(tmp_path, "dev", edit), "dev")
    assert any(m.startswith("hpcforge:sshPrivateKey: required when cluster.bootstrap is set") for m in raised.value.messages)


FAKE_K0S = """#!/usr/bin/env bash
state="$FAKE_K0S_STATE"
echo "k0s $*" >>"$state/calls"
case "$1" in
  version) cat "$state/version" 2>/dev/null || exit 1 ;;
  status) [ -f "$state/running" ] ;;
  install) echo "$*" >"$state/installed" ;;
  start) touch "$state/running" ;;
  stop) rm -f "$state/running" ;;
  token) echo "fake-token" ;;
  *) exit 0 ;;
esac
"""
FAKE_CURL = """#!/usr/bin/env bash
echo "curl $*" >>"$FAKE_K0S_STATE/calls"
printf 'printf "%%s" "$K0S_VERSION" >"$FAKE_K0S_STATE/version"\\n'
"""


def _fake_host(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    state = tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    (bin_dir / "k0s").write_text(FAKE_K0S)
    (bin_dir / "curl").write_text(FAKE_CURL)
    for name in ("k0s", "curl"):
        (bin_dir / name).chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_K0S_STATE": str(state),
        "K0S_BIN": str(bin_dir / "k0s"),
        "K0S_TOKEN_FILE": str(tmp_path / "token"),
        "K0S_WAIT_SECONDS": "5",
        "K0S_VERSION": "v1.33.4+k0s.0",
    }


@pytest.mark.parametrize("role", ["controller", "worker"])
def test_k0s_install_is_idempotent(tmp_path: Path, role: str) -> None:
    env = {**_fake_host(tmp_path), "K0S_ROLE": role}
    script = str(BOOTSTRAP / "k0s-install.sh")
    first = subprocess.run(["bash", script], env=env, input="join-token", capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    calls = (tmp_path / "state" / "calls").read_text()
    assert "curl -sSfL https://get.k0s.sh" in calls and f"k0s install {role}" in calls and "k0s start" in calls
    if role == "worker":
        assert (tmp_path / "token").read_text() == "join-token"
        assert (tmp_path / "token").stat().st_mode & 0o077 == 0
    (tmp_path / "state" / "calls").write_text("")
    second = subprocess.run(
        ["bash", script], env=env, input="join-token", capture_output=True, text=True, timeout=60, check=False
    )
    assert second.returncode == 0 and "already running: nothing to do" in second.stdout
    assert "install" not in (tmp_path / "state" / "calls").read_text()


def test_k0s_upgrade_stops_the_old_release_and_starts_the_new(tmp_path: Path) -> None:
    env = {**_fake_host(tmp_path), "K0S_ROLE": "controller"}
    state = tmp_path / "state"
    (state / "version").write_text("v1.32.9+k0s.0")
    (state / "running").touch()
    result = subprocess.run(
        ["bash", str(BOOTSTRAP / "k0s-install.sh")], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    calls = (state / "calls").read_text().splitlines()
    assert "upgrading k0s v1.32.9+k0s.0 to v1.33.4+k0s.0" in result.stdout
    stop, fetch, start = (
        calls.index("k0s stop"),
        next(i for i, c in enumerate(calls) if c.startswith("curl")),
        calls.index("k0s start"),
    )
    assert stop < fetch < start
    assert (state / "version").read_text() == "v1.33.4+k0s.0"


def test_k0s_install_refuses_worker_without_token(tmp_path: Path) -> None:
    env = {**_fake_host(tmp_path), "K0S_ROLE": "worker"}
    result = subprocess.run(
        ["bash", str(BOOTSTRAP / "k0s-install.sh")], env=env, input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 2 and "no join token on standard input" in result.stderr


def test_k0s_remove_is_idempotent(tmp_path: Path) -> None:
    env = _fake_host(tmp_path)
    env["K0S_BIN"] = str(tmp_path / "absent")
    result = subprocess.run(
        ["bash", str(BOOTSTRAP / "k0s-remove.sh")], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0 and "nothing to do" in result.stdout
    assert shutil.which("bash")

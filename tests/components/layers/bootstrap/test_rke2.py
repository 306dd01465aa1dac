"""RKE2 beside k0s: what the program declares for `cluster.bootstrap.distribution: rke2`, and the
bootstrap scripts run against fake `rke2`, `systemctl`, `curl` and `kubectl` on PATH: first install,
join order, a re-run that changes nothing, and a rolling upgrade that keeps etcd's quorum."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from components.layers.bootstrap.objects import install_environment
from components.site.loader import ConfigError, load_config
from offline.program.engine import RecordedStack
from tests.helpers import REPO, config_values, raw_config, run_stack_file, write_variant

BOOTSTRAP = REPO / "scripts" / "bootstrap"
SERVERS = {"s1": "10.0.0.11", "s2": "10.0.0.12", "s3": "10.0.0.13"}
RKE2 = {
    "distribution": "rke2",
    "version": "v1.33.4+rke2r1",
    "controllers": [{"host": ip, "name": name} for name, ip in SERVERS.items()],
    "workers": [{"host": "10.0.0.21", "name": "a1"}, {"host": "10.0.0.22", "name": "a2"}],
    "rke2": {"tlsSan": ["k8s.hpc.example.org"], "clusterCidr": "10.244.0.0/16", "serviceCidr": "10.96.0.0/12"},
}


def _with_rke2(values: dict[str, Any]) -> None:
    values["hpcforge:cluster"] = {"bootstrap": RKE2}
    values["hpcforge:sshPrivateKey"] = "-----BEGIN OPENSSH PRIVATE KEY-----\\nAAAA\\n-----END OPENSSH PRIVATE KEY-----"
    values["hpcforge:kubernetes"].pop("context")


@pytest.fixture(scope="module")
def rke2_stack(tmp_path_factory: pytest.TempPathFactory) -> RecordedStack:
    return run_stack_file(write_variant(tmp_path_factory.mktemp("rke2"), "dev", _with_rke2), "dev")


@pytest.mark.program
def test_rke2_servers_join_one_after_another_and_agents_after_them(rke2_stack: RecordedStack) -> None:
    remote = {r.name: r for r in rke2_stack.by_type("command:remote:Command")}
    nodes = ["s1", "s2", "s3", "a1", "a2"]
    assert set(remote) == {f"rke2-{n}" for n in nodes} | {f"rke2-prepare-{n}" for n in nodes} | {"rke2-kubeconfig"}
    urn = {name: r.urn for name, r in remote.items()}
    assert urn["rke2-s1"] in remote["rke2-s2"].depends_on and urn["rke2-s2"] in remote["rke2-s3"].depends_on
    assert urn["rke2-s2"] not in remote["rke2-s1"].depends_on
    for agent in ("rke2-a1", "rke2-a2"):
        assert urn["rke2-s3"] in remote[agent].depends_on
    for node in nodes:
        assert urn[f"rke2-prepare-{node}"] in remote[f"rke2-{node}"].depends_on
        # Updates in place (a replace would uninstall RKE2 on the host); the token comes on stdin.
        assert "triggers" not in remote[f"rke2-{node}"].inputs
        assert remote[f"rke2-{node}"].inputs["update"] == remote[f"rke2-{node}"].inputs["create"]
        assert "stdin" in remote[f"rke2-{node}"].secret_paths or "stdin" in remote[f"rke2-{node}"].inputs
    s1, s2 = remote["rke2-s1"].inputs["create"], remote["rke2-s2"].inputs["create"]
    assert "RKE2_SERVER_URL=" not in s1 and "RKE2_SERVER_URL=https://10.0.0.11:9345" in s2
    assert "RKE2_TYPE=agent" in remote["rke2-a1"].inputs["create"]
    assert rke2_stack.by_type("random:index/randomPassword:RandomPassword")
    assert "stdout" in remote["rke2-kubeconfig"].additional_secret_outputs
    assert "kubeconfig" in rke2_stack.find("pulumi:providers:kubernetes", "kubernetes").secret_paths
    assert not any(r.name.startswith("k0s-") for r in rke2_stack.by_type("command:remote:Command"))


def test_rke2_server_environment_carries_the_config_yaml_settings() -> None:
    values = config_values("dev")
    _with_rke2(values)
    cfg = load_config(raw_config(values)).cluster.bootstrap
    assert cfg is not None
    env = install_environment(cfg, cfg.controllers[1], server=True)
    assert env["RKE2_TLS_SAN"] == "10.0.0.11,10.0.0.12,10.0.0.13,k8s.hpc.example.org"
    assert env["RKE2_CLUSTER_CIDR"] == "10.244.0.0/16" and env["RKE2_SERVICE_CIDR"] == "10.96.0.0/12"
    assert env["RKE2_KUBECONFIG_MODE"] == "0640" and env["RKE2_SERVERS"] == "3"
    agent = install_environment(cfg, cfg.workers[0], server=False)
    assert "RKE2_TLS_SAN" not in agent and agent["RKE2_SERVER_URL"] == "https://10.0.0.11:9345"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda b: b.update(controllers=b["controllers"][:2]), "hpcforge:cluster.bootstrap.controllers: 2 RKE2 servers"),
        (
            lambda b: b.update(version="v1.33.4+k0s.0"),
            "hpcforge:cluster.bootstrap.version: 'v1.33.4+k0s.0' is not a rke2 release",
        ),
        (lambda b: b["rke2"].update(clusterCidr="10.244.0.0/33"), "hpcforge:cluster.bootstrap.rke2.clusterCidr"),
        (lambda b: b["rke2"].update(tlsSan=["bad name"]), "hpcforge:cluster.bootstrap.rke2.tlsSan"),
    ],
)
def test_bad_rke2_config_is_refused(change: Any, expected: str) -> None:
    values = config_values("dev")
    _with_rke2(values)
    bootstrap = {**RKE2, "rke2": dict(RKE2["rke2"])}  # type: ignore[arg-type]
    change(bootstrap)
    values["hpcforge:cluster"] = {"bootstrap": bootstrap}
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert any(m.startswith(expected) for m in raised.value.messages), raised.value.messages


# --- the scripts against fakes ---------------------------------------------------------------------

# One shared "cluster" directory: nodes/<name> holds True/False (the node's Ready condition); every
# host has its own version file, config dir and service state. `systemctl restart` takes the node
# down (logging how many servers are still Ready at that moment) and brings it back Ready.
FAKE_RKE2 = """#!/usr/bin/env bash
[ "$1" = --version ] || exit 2
v="$(cat "$HOST_DIR/version" 2>/dev/null)" || exit 1
printf 'rke2 version %s (fake)\\ngo version go1.24\\n' "$v"
"""
FAKE_CURL = """#!/usr/bin/env bash
echo "curl $*" >>"$HOST_DIR/calls"
printf 'echo "install $INSTALL_RKE2_TYPE $INSTALL_RKE2_VERSION" >>"$HOST_DIR/calls"; printf %%s "$INSTALL_RKE2_VERSION" >"$HOST_DIR/version"\\n'
"""
FAKE_SYSTEMCTL = """#!/usr/bin/env bash
echo "systemctl $*" >>"$HOST_DIR/calls"
ready() { grep -lx True "$CLUSTER_DIR"/nodes/s* 2>/dev/null | wc -l; }
case "$1" in
  is-active) [ -f "$HOST_DIR/active" ] ;;
  enable) ;;
  start) touch "$HOST_DIR/active"; echo True >"$CLUSTER_DIR/nodes/$NODE" ;;
  restart)
    echo False >"$CLUSTER_DIR/nodes/$NODE"
    echo "down $NODE ready=$(ready)" >>"$CLUSTER_DIR/events"
    touch "$HOST_DIR/active"; echo True >"$CLUSTER_DIR/nodes/$NODE" ;;
  *) exit 0 ;;
esac
"""
FAKE_KUBECTL = """#!/usr/bin/env bash
# get nodes -l ... -o jsonpath=...  |  get node NAME -o jsonpath=...
if [ "$2" = nodes ]; then
  for f in "$CLUSTER_DIR"/nodes/s*; do [ -f "$f" ] && echo "$(basename "$f")=$(cat "$f")"; done
else
  cat "$CLUSTER_DIR/nodes/$3" 2>/dev/null
fi
"""


def _cluster(tmp_path: Path) -> Path:
    cluster = tmp_path / "cluster"
    (cluster / "nodes").mkdir(parents=True)
    (cluster / "events").touch()
    return cluster


def _host(tmp_path: Path, cluster: Path, name: str) -> dict[str, str]:
    host = tmp_path / name
    bin_dir = host / "bin"
    bin_dir.mkdir(parents=True)
    for tool, text in (("rke2", FAKE_RKE2), ("curl", FAKE_CURL), ("systemctl", FAKE_SYSTEMCTL), ("kubectl", FAKE_KUBECTL)):
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    (host / "calls").touch()
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOST_DIR": str(host),
        "CLUSTER_DIR": str(cluster),
        "NODE": name,
        "RKE2_NODE_NAME": name,
        "RKE2_CONFIG_DIR": str(host / "etc"),
        "RKE2_KUBECTL": str(bin_dir / "kubectl"),
        "RKE2_WAIT_SECONDS": "3",
        "RKE2_POLL_SECONDS": "0.2",
        "RKE2_SERVERS": "3",
        "RKE2_TYPE": "server",
        "RKE2_VERSION": "v1.33.4+rke2r1",
        "RKE2_CLUSTER_CIDR": "10.42.0.0/16",
        "RKE2_SERVICE_CIDR": "10.43.0.0/16",
        "RKE2_TLS_SAN": "10.0.0.11,10.0.0.12,10.0.0.13",
        "RKE2_KUBECONFIG_MODE": "0640",
    }


def _install(env: dict[str, str], token: str = "s3cr3t-token") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(BOOTSTRAP / "rke2-install.sh")],
        env=env,
        input=token,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _three_servers(tmp_path: Path) -> tuple[Path, dict[str, dict[str, str]]]:
    cluster = _cluster(tmp_path)
    envs = {name: _host(tmp_path, cluster, name) for name in SERVERS}
    for name in ("s2", "s3"):
        envs[name]["RKE2_SERVER_URL"] = "https://10.0.0.11:9345"
    return cluster, envs


def test_first_server_bootstraps_and_the_others_join_it(tmp_path: Path) -> None:
    _, envs = _three_servers(tmp_path)
    for name in SERVERS:  # the order Pulumi's dependency chain runs them in
        result = _install(envs[name])
        assert result.returncode == 0, result.stderr
        assert "s3cr3t-token" not in result.stdout + result.stderr
    first = (tmp_path / "s1" / "etc" / "config.yaml").read_text()
    assert 'token: "s3cr3t-token"' in first and "server:" not in first
    for line in (
        'write-kubeconfig-mode: "0640"',
        'cluster-cidr: "10.42.0.0/16"',
        'service-cidr: "10.43.0.0/16"',
        '  - "10.0.0.12"',
    ):
        assert line in first
    joined = (tmp_path / "s2" / "etc" / "config.yaml").read_text()
    assert 'server: "https://10.0.0.11:9345"' in joined and 'token: "s3cr3t-token"' in joined
    assert (tmp_path / "s2" / "etc" / "config.yaml").stat().st_mode & 0o077 == 0
    calls = (tmp_path / "s1" / "calls").read_text().splitlines()
    assert "install server v1.33.4+rke2r1" in calls
    assert calls.index("systemctl enable rke2-server") < calls.index("systemctl start rke2-server")


def test_rerun_on_a_converged_server_changes_nothing(tmp_path: Path) -> None:
    _, envs = _three_servers(tmp_path)
    for name in SERVERS:
        assert _install(envs[name]).returncode == 0
    (tmp_path / "s2" / "calls").write_text("")
    again = _install(envs["s2"])
    assert again.returncode == 0 and "already running: nothing to do" in again.stdout
    assert [c for c in (tmp_path / "s2" / "calls").read_text().splitlines() if not c.startswith("systemctl is-active")] == []


def test_rolling_upgrade_keeps_quorum(tmp_path: Path) -> None:
    cluster, envs = _three_servers(tmp_path)
    for name in SERVERS:
        assert _install(envs[name]).returncode == 0
    for name in SERVERS:  # one at a time: each waits for the one before (Pulumi dependency chain)
        envs[name]["RKE2_VERSION"] = "v1.34.1+rke2r1"
        result = _install(envs[name])
        assert result.returncode == 0, result.stderr
        assert (tmp_path / name / "version").read_text() == "v1.34.1+rke2r1"
    events = (cluster / "events").read_text().splitlines()
    # Each server went down once, while the two others were Ready: etcd (3 members) kept its quorum.
    assert events == ["down s1 ready=2", "down s2 ready=2", "down s3 ready=2"]


def test_upgrade_waits_while_another_server_is_down(tmp_path: Path) -> None:
    cluster, envs = _three_servers(tmp_path)
    for name in SERVERS:
        assert _install(envs[name]).returncode == 0
    (cluster / "nodes" / "s3").write_text("False\n")  # s3 is not Ready
    envs["s1"]["RKE2_VERSION"] = "v1.34.1+rke2r1"
    result = _install(envs["s1"])
    assert result.returncode == 1 and "all 3 servers Ready did not happen" in result.stderr
    assert "install server v1.34.1" not in (tmp_path / "s1" / "calls").read_text()  # s1 untouched
    assert (cluster / "events").read_text() == ""


def test_agent_joins_without_server_settings(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    env = {**_host(tmp_path, cluster, "a1"), "RKE2_TYPE": "agent", "RKE2_SERVER_URL": "https://10.0.0.11:9345"}
    result = _install(env)
    assert result.returncode == 0, result.stderr
    config = (tmp_path / "a1" / "etc" / "config.yaml").read_text()
    assert 'server: "https://10.0.0.11:9345"' in config and "cluster-cidr" not in config and "tls-san" not in config
    assert "systemctl start rke2-agent" in (tmp_path / "a1" / "calls").read_text()


def test_install_refuses_without_a_token(tmp_path: Path) -> None:
    env = _host(tmp_path, _cluster(tmp_path), "s1")
    result = _install(env, token="")
    assert result.returncode == 2 and "no cluster token on standard input" in result.stderr


FAKE_TOOLS = {
    "swapon": 'cat "$HOST_DIR/swap" 2>/dev/null\n',
    "swapoff": 'echo "swapoff $*" >>"$HOST_DIR/calls"; rm -f "$HOST_DIR/swap"\n',
    "getenforce": "echo Enforcing\n",
    "firewall-cmd": """case "$1" in
  --state) exit 0 ;;
  --reload) echo "firewall reload" >>"$HOST_DIR/calls" ;;
  --permanent)
    case "$2" in
      --query-port=*) grep -qx "${2#--query-port=}" "$HOST_DIR/ports" 2>/dev/null ;;
      --add-port=*) echo "${2#--add-port=}" >>"$HOST_DIR/ports" ;;
    esac ;;
esac
""",
    "id": '[ -f "$HOST_DIR/user-$1" ]\n',
    "useradd": 'for last; do :; done; touch "$HOST_DIR/user-$last"; echo "useradd $*" >>"$HOST_DIR/calls"\n',
    "chown": "exit 0\n",
}


def test_node_preparation_is_idempotent(tmp_path: Path) -> None:
    host = tmp_path / "h"
    bin_dir = host / "bin"
    bin_dir.mkdir(parents=True)
    for tool, text in FAKE_TOOLS.items():
        (bin_dir / tool).write_text("#!/usr/bin/env bash\n" + text)
        (bin_dir / tool).chmod(0o755)
    (host / "swap").write_text("/swapfile\n")
    fstab = host / "fstab"
    fstab.write_text("/dev/sda1 / xfs defaults 0 0\n/swapfile none swap sw 0 0\n")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOST_DIR": str(host),
        "RKE2_TYPE": "server",
        "RKE2_SYSADMIN": "sysadmin",
        "RKE2_SYSADMIN_KEYS": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHO4xUoQo58Ijc0witWn81SbrosgcRgLPYV8gevRY+pq ops@hpc",
        "RKE2_FSTAB": str(fstab),
        "RKE2_SUDOERS_DIR": str(host / "sudoers.d"),
        "RKE2_HOME_ROOT": str(host / "home"),
    }
    script = str(BOOTSTRAP / "rke2-prepare.sh")
    first = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    assert "SELinux: Enforcing" in first.stdout and "host prepared" in first.stdout
    assert (host / "ports").read_text().split() == [
        "6443/tcp", "9345/tcp", "10250/tcp", "2379-2380/tcp", "8472/udp", "9099/tcp", "30000-32767/tcp"
    ]  # fmt: skip
    assert "# disabled for RKE2: /swapfile none swap sw 0 0" in fstab.read_text()
    assert (host / "sudoers.d" / "90-sysadmin").read_text() == "sysadmin ALL=(ALL) NOPASSWD: ALL\n"
    assert (host / "home" / "sysadmin" / ".ssh" / "authorized_keys").read_text().startswith("ssh-ed25519 ")
    calls = (host / "calls").read_text()
    assert "swapoff -a" in calls and "firewall reload" in calls and "useradd" in calls
    (host / "calls").write_text("")
    second = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60, check=False)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert (host / "calls").read_text() == ""


def test_kubeconfig_points_at_the_first_server(tmp_path: Path) -> None:
    (tmp_path / "rke2.yaml").write_text("clusters:\n- cluster:\n    server: https://127.0.0.1:6443\n")
    env = {**os.environ, "RKE2_CONFIG_DIR": str(tmp_path), "RKE2_API_HOST": "10.0.0.11"}
    result = subprocess.run(
        ["bash", str(BOOTSTRAP / "rke2-kubeconfig.sh")], env=env, capture_output=True, text=True, timeout=30, check=True
    )
    assert "server: https://10.0.0.11:6443" in result.stdout


def test_remove_runs_the_uninstaller_once_and_then_has_nothing_to_do(tmp_path: Path) -> None:
    uninstall = tmp_path / "rke2-uninstall.sh"
    uninstall.write_text(f"#!/usr/bin/env bash\necho uninstalled >>{tmp_path}/log\nrm -f {uninstall}\n")
    uninstall.chmod(0o755)
    env = {**os.environ, "RKE2_UNINSTALL": str(uninstall)}
    script = str(BOOTSTRAP / "rke2-remove.sh")
    first = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert first.returncode == 0 and "rke2 removed" in first.stdout
    second = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=30, check=False)
    assert second.returncode == 0 and "nothing to do" in second.stdout
    assert (tmp_path / "log").read_text() == "uninstalled\n"

"""hpcforge's attachments run through the real CNI plugins: Debian bookworm's containernetworking-plugins 1.1.1
(/usr/lib/cni: ipvlan, macvlan, static), each ADD in a private network namespace whose host side has the attachment's
master interface (a veth of the attachment's MTU) and whose pod is a second namespace.

- The provisioning attachment (ipvlan, static IPAM): `static` gets Grendel's address as Multus hands it over (the
  pod's network-selection `ips`, which libcni injects as `runtimeConfig.ips` only into a config that declares
  `capabilities: {ips: true}`: containernetworking/cni v1.3.0 libcni/api.go `injectRuntimeConfig`, Multus v4.3.0
  pkg/types/conf.go `CreateCNIRuntimeConf`), and returns exactly it. `ipvlan` parses the config, finds the master
  and its mode, and goes to the kernel: a kernel without ipvlan (this sandbox's) answers "operation not supported"
  there, after every check of the config; one with it finishes the ADD, and the pod's interface is checked.
- A shared RoCE fabric's attachment (macvlan): the whole ADD, up to the pod's interface with its mode, MTU and
  address; the IPAM plugin (nv-ipam or whereabouts, not packaged for Debian) is stood in for by a script that keeps
  what macvlan hands it (the attachment's config, as is: tests/components/layers/rdma/test_cni_consumers.py holds that against nv-ipam's
  and whereabouts' rules) and answers one address.

The cluster runs these plugins from network-operator 26.4.1's `plugins` image (Mellanox/k8snetworkplumbingwg-plugins,
branch network-operator-26.4.x), or the site's own for the site networks: for the keys hpcforge writes (master,
mode, mtu, ipam) their `loadConf` and `cmdAdd` check the same things as 1.1.1's (plugins/main/{ipvlan,macvlan}),
and they are built with containernetworking/cni v1.3.0, whose `version.All` still includes 0.3.1.
"""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.layers.rdma.config import RdmaConfig
from components.layers.rdma.face import attachment_config
from offline.program.engine import RecordedStack
from tests.components.layers.rdma.test_rdma import RDMA
from tests.helpers import require_binaries, skip_or_fail
from tests.test_layers import objects, one

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(180)]

PLUGIN_DIR = Path("/usr/lib/cni")

# $1 plugin, $2 master, $3 its MTU, $4 CNI_PATH, $5 output folder; the config on stdin. Runs in a fresh network
# namespace (the host side); the pod is a second one, kept open by `sleep`.
ADD_IN_NAMESPACE = r"""
set -u
plugin=$1 master=$2 mtu=$3 cni_path=$4 out=$5
ip link add "$master" mtu "$mtu" type veth peer name cni-peer0 || exit 90
ip link set "$master" up
unshare --net sleep 120 &
pod=$!
while [ "$(readlink /proc/$pod/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
CNI_COMMAND=ADD CNI_CONTAINERID=hpcforge-test CNI_NETNS=/proc/$pod/ns/net CNI_IFNAME=net1 CNI_PATH="$cni_path" \
    "$plugin" >"$out/result.json"
echo $? >"$out/rc"
nsenter --net=/proc/$pod/ns/net ip -d -j addr show dev net1 >"$out/link.json" 2>/dev/null || echo '[]' >"$out/link.json"
kill $pod
"""

# Stands in for an IPAM plugin that Debian does not package: keeps its stdin, answers one address (CNI 0.3.1 result).
IPAM_STAND_IN = """#!/bin/sh
[ "$CNI_COMMAND" = ADD ] || exit 0
cat >"$0.stdin"
printf '%s' '{"cniVersion":"0.3.1","ips":[{"version":"4","address":"ADDRESS"}]}'
"""


def plugin(name: str) -> Path:
    path = PLUGIN_DIR / name
    if not os.access(path, os.X_OK):
        skip_or_fail(f"{path} is not installed (Debian package containernetworking-plugins; see .ci/run)")
    return path


def namespace_command() -> list[str]:
    """`unshare` into a new network namespace (in a user namespace when not root), checked by making a veth pair."""
    tools = require_binaries("unshare", "nsenter", "ip")
    command = [tools["unshare"], "--net"]
    if os.geteuid() != 0:
        command = [tools["unshare"], "--user", "--map-root-user", "--net"]
    probe = [*command, tools["ip"], "link", "add", "probe0", "type", "veth", "peer", "name", "probe1"]
    result = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    if result.returncode != 0:
        skip_or_fail(f"no network namespace with a veth pair here ({' '.join(command)}): {result.stderr.strip()}")
    return command


@dataclass(frozen=True)
class Added:
    returncode: int
    result: dict[str, Any]
    """The plugin's stdout: the CNI result, or its error ({code, msg, details})."""
    link: dict[str, Any] | None
    """`ip -d -j addr show dev net1` in the pod's namespace (None when there is no such interface)."""


def add(
    tmp_path: Path,
    name: str,
    config: dict[str, Any],
    *,
    master_mtu: int,
    cni_path: str = str(PLUGIN_DIR),
    host_interface: str | None = None,
) -> Added:
    """ADD `config` with plugin `name`; the host has `host_interface` (default: the config's master) of `master_mtu`."""
    out = tmp_path / f"add-{len(list(tmp_path.glob('add-*')))}"
    out.mkdir()
    host = host_interface or config["master"]
    command = [*namespace_command(), "sh", "-c", ADD_IN_NAMESPACE, "sh", str(plugin(name)), host, str(master_mtu)]
    ran = subprocess.run(
        [*command, cni_path, str(out)], input=json.dumps(config), capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, f"namespace setup failed: {ran.stderr}"
    links = json.loads((out / "link.json").read_text() or "[]")
    return Added(int((out / "rc").read_text()), json.loads((out / "result.json").read_text()), links[0] if links else None)


def multus_runtime_config(config: dict[str, Any], ips: list[str]) -> dict[str, Any]:
    """The config as the plugin gets it from Multus for a pod asking for `ips`: libcni adds `runtimeConfig.<cap>`
    for each capability the config declares true and the runtime has (injectRuntimeConfig); Multus gives `ips`."""
    runtime = {cap: value for cap, value in {"ips": ips}.items() if config.get("capabilities", {}).get(cap)}
    return {**config, "runtimeConfig": runtime} if runtime else dict(config)


def run_static(config: dict[str, Any]) -> dict[str, Any]:
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "hpcforge-test", "CNI_NETNS": "/proc/self/ns/net", "CNI_IFNAME": "net1"}
    ran = subprocess.run(
        [str(plugin("static"))], input=json.dumps(config), env={**env, "CNI_PATH": str(PLUGIN_DIR)},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    result: dict[str, Any] = json.loads(ran.stdout)
    return result


def grendel_request(stack: RecordedStack) -> tuple[dict[str, Any], list[str]]:
    """The provisioning attachment's config and the addresses Grendel's pod asks for on it."""
    deployment = one(stack, "Deployment", "provisioning", "grendel")
    (selection,) = json.loads(deployment["spec"]["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    attachment = one(stack, "NetworkAttachmentDefinition", selection["namespace"], selection["name"])
    return json.loads(attachment["spec"]["config"]), selection["ips"]


@pytest.mark.program
def test_the_plugins_take_the_cni_version_hpcforge_writes(prod_stack: RecordedStack) -> None:
    written = {
        json.loads(r.inputs["spec"]["config"])["cniVersion"] for r in objects(prod_stack, "NetworkAttachmentDefinition").values()
    }
    assert written
    for name in ("ipvlan", "macvlan", "static"):
        ran = subprocess.run(
            [str(plugin(name))], env={"CNI_COMMAND": "VERSION"}, capture_output=True, text=True, timeout=30, check=True
        )
        assert written <= set(json.loads(ran.stdout)["supportedVersions"]), (name, ran.stdout)


@pytest.mark.program
def test_grendel_gets_its_address_from_the_real_static_ipam(prod_stack: RecordedStack) -> None:
    config, ips = grendel_request(prod_stack)
    assert config["ipam"] == {"type": "static"}
    result = run_static(multus_runtime_config(config, ips))
    assert [ip["address"] for ip in result["ips"]] == ips
    # Without the capability libcni passes no address, static returns none, and ipvlan fails the pod
    # ("IPAM plugin returned missing IP config").
    config.pop("capabilities")
    assert "ips" not in run_static(multus_runtime_config(config, ips))


@pytest.mark.program
def test_real_ipvlan_takes_the_provisioning_attachment_as_far_as_the_kernel_goes(
    prod_stack: RecordedStack, tmp_path: Path
) -> None:
    config, ips = grendel_request(prod_stack)
    request = multus_runtime_config(config, ips)
    master_mtu = config.get("mtu", 1500)
    added = add(tmp_path, "ipvlan", request, master_mtu=master_mtu)
    if added.returncode != 0:
        # Everything before the link is made passed; this kernel has no ipvlan.
        assert added.result["msg"] == "failed to create ipvlan: operation not supported", added.result
    else:
        assert added.link is not None, added.result
        assert added.link["linkinfo"]["info_kind"] == "ipvlan"
        assert added.link["linkinfo"]["info_data"]["mode"] == config["mode"]
        assert added.link["mtu"] == master_mtu
        assert [f"{a['local']}/{a['prefixlen']}" for a in added.link["addr_info"] if a["family"] == "inet"] == ips
    # The same run refuses what ipvlan checks before the kernel: the run reaches those checks.
    refused = add(tmp_path, "ipvlan", {**request, "mode": "l4"}, master_mtu=master_mtu)
    assert (refused.returncode, refused.result["msg"]) == (1, 'unknown ipvlan mode: "l4"')
    refused = add(tmp_path, "ipvlan", {**request, "master": "bond9"}, master_mtu=master_mtu, host_interface=config["master"])
    assert (refused.returncode, refused.result["msg"]) == (1, 'failed to lookup master "bond9": Link not found')


@pytest.mark.parametrize("ipam", ["nv-ipam", "whereabouts"])
def test_real_macvlan_makes_a_shared_roce_fabric_s_interface_and_hands_its_ipam_the_config(tmp_path: Path, ipam: str) -> None:
    rdma = RdmaConfig.model_validate({**RDMA, "fabrics": [{**f, "ipam": ipam} for f in RDMA["fabrics"]]})
    fabric = rdma.fabric("roce-rail0")
    assert fabric is not None and fabric.mode == "shared" and fabric.type == "roce"
    config = json.loads(attachment_config(fabric, rdma.master_interface(fabric.name)))
    address = f"{ipaddress.ip_network(fabric.range)[1]}/{ipaddress.ip_network(fabric.range).prefixlen}"
    stand_in = tmp_path / "ipam" / ipam
    stand_in.parent.mkdir()
    stand_in.write_text(IPAM_STAND_IN.replace("ADDRESS", address))
    stand_in.chmod(0o755)
    cni_path = f"{stand_in.parent}:{PLUGIN_DIR}"

    # The host port's MTU must be at least the fabric's: macvlan refuses the pod otherwise (before any link is made).
    refused = add(tmp_path, "macvlan", config, master_mtu=1500, cni_path=cni_path)
    assert (refused.returncode, refused.result["msg"]) == (1, f"invalid MTU {fabric.mtu}, must be [0, master MTU(1500)]")

    added = add(tmp_path, "macvlan", config, master_mtu=fabric.mtu, cni_path=cni_path)
    if added.returncode != 0:
        # Everything before the link is made passed; this kernel has no macvlan.
        assert added.result["msg"] == "failed to create macvlan: operation not supported", added.result
        return
    assert json.loads(Path(f"{stand_in}.stdin").read_text()) == config  # the IPAM plugin gets the config as is
    assert added.link is not None
    assert added.link["linkinfo"]["info_kind"] == "macvlan"
    assert added.link["linkinfo"]["info_data"]["mode"] == config["mode"]
    assert added.link["mtu"] == fabric.mtu
    assert [f"{a['local']}/{a['prefixlen']}" for a in added.link["addr_info"] if a["family"] == "inet"] == [address]

"""Tier 1: the typed stack configuration accepts both stack files and refuses bad input clearly.

Every bad input is run through the real program under the mock engine: it must stop with exactly
the message that names the key, before registering a single resource.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.site import loader
from components.site.loader import ConfigError, load_config
from components.site.root import PlatformConfig
from offline.program.engine import ProgramConfigError
from tests.helpers import config_values, inventory_file, raw_config, run_stack_file, write_variant
from tests.site_helpers import load_edited


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_files_are_valid(stack: str) -> None:
    config = load_config(raw_config(config_values(stack)))
    assert isinstance(config, PlatformConfig)
    assert config.environment == stack


def test_prod_is_a_realistic_site() -> None:
    prod = load_config(raw_config(config_values("prod")))
    gpu_nodesets = [ns for ns in prod.slurm.nodesets if ns.gpus]
    assert len(prod.slurm.nodesets) >= 3 and len(gpu_nodesets) >= 2
    assert prod.slurm.login.replicas == 2
    assert prod.provisioning is not None and 90 <= len(prod.provisioning.hosts) <= 150
    assert prod.delivery == "argocd" and prod.protection_mode == "protect"


def test_dev_is_a_single_node_lab() -> None:
    dev = load_config(raw_config(config_values("dev")))
    assert [pool.nodes for pool in dev.node_pools] == [1]
    assert dev.delivery == "pulumi" and dev.protection_mode == "none"


def test_config_is_frozen() -> None:
    config = load_config(raw_config(config_values("dev")))
    with pytest.raises(Exception, match="frozen"):
        config.environment = "prod"  # type: ignore[misc]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Edit helper: `_set("hpcforge:network/pools/0/addresses", [...])` (list indexes as numbers)."""

    def edit(values: dict[str, Any]) -> None:
        key, *rest = path.split("/")
        if not rest:
            values[key] = value
            return
        target: Any = values[key]
        for part in rest[:-1]:
            target = target[int(part)] if isinstance(target, list) else target[part]
        last = rest[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return edit


def _delete(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda values: values.pop(key)


def _hosts(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda values: edit(values["hpcforge:provisioning"]["hosts"])


DUPLICATE_MAC = _hosts(lambda hosts: hosts[5].update(mac=hosts[2]["mac"]))

BAD_INPUTS: list[tuple[str, str, Callable[[dict[str, Any]], None], str]] = [
    (
        "unknown top-level key",
        "prod",
        lambda v: v.update({"hpcforge:netwrok": {}}),
        "hpcforge:netwrok: unknown key (did you mean 'hpcforge:network'?",
    ),
    (
        "unknown nested key",
        "prod",
        _set("hpcforge:network/pools/0/adresses", ["10.0.0.1"]),
        "hpcforge:network.pools[0].adresses: unknown key (did you mean 'addresses'?",
    ),
    (
        "empty list where one item is needed",
        "prod",
        _set("hpcforge:network/pools", []),
        "hpcforge:network.pools: needs at least 1 item (got 0)",
    ),
    (
        "empty mapping where one entry is needed",
        "prod",
        _set("hpcforge:nodePools/0/labels", {}),
        "hpcforge:nodePools[0].labels: needs at least 1 entry (got 0)",
    ),
    (
        "wrong type",
        "prod",
        _set("hpcforge:slurm/nodesets/0/replicas", "three"),
        "hpcforge:slurm.nodesets[0].replicas: expected an integer (got 'three')",
    ),
    (
        "bad IPv4 address",
        "prod",
        _set("hpcforge:network/pools/0/addresses", ["10.0.0.300"]),
        "hpcforge:network.pools[0].addresses: 10.0.0.300 is not an IPv4 address",
    ),
    (
        "unknown delivery mode",
        "dev",
        _set("hpcforge:delivery", "helm"),
        "hpcforge:delivery: 'helm' is not allowed (expected 'pulumi' or 'argocd')",
    ),
    ("missing required key", "dev", _delete("hpcforge:directory"), "hpcforge:directory: required key is missing"),
    (
        "ingress address outside its pool",
        "prod",
        _set("hpcforge:network/ingress/address", "10.10.9.9"),
        "hpcforge:network.ingress.address: 10.10.9.9 is not inside pool 'services'",
    ),
    (
        "ingress pool unknown",
        "prod",
        _set("hpcforge:network/ingress/pool", "nowhere"),
        "hpcforge:network.ingress.pool: unknown pool 'nowhere' (known: services, login)",
    ),
    (
        "overlapping pools",
        "prod",
        _set("hpcforge:network/pools/1/addresses", ["10.10.0.140-10.10.0.160"]),
        "hpcforge:network.pools[1].addresses: overlaps pool 'services'",
    ),
    # What cert-manager v1.21.1's and MetalLB v0.16.1's webhooks would refuse at `pulumi up`
    # (policies/admission/certmanager/, policies/admission/metallb/; tests/offline/admission/test_admission_program.py).
    (
        "CA common name over 64 bytes (33 characters in UTF-8)",
        "prod",
        _set("hpcforge:tls/ca/commonName", "é" * 33),
        "hpcforge:tls.ca.commonName: '" + "é" * 33 + "' is 66 bytes long: cert-manager refuses a commonName longer than 64 bytes",
    ),
    (
        "empty CA common name",
        "dev",
        _set("hpcforge:tls/ca/commonName", ""),
        "hpcforge:tls.ca.commonName: must not be empty: cert-manager refuses a CA certificate without a commonName",
    ),
    (
        "renewBefore under cert-manager's minimum",
        "prod",
        _set("hpcforge:tls/renewBefore", "4m59s"),
        "hpcforge:tls.renewBefore: 4m59s is shorter than cert-manager's minimum of 5m",
    ),
    (
        "overlapping addresses within one pool",
        "prod",
        _set("hpcforge:network/pools/1/addresses", ["10.10.0.150-10.10.0.153", "10.10.0.152/31"]),
        "hpcforge:network.pools[1].addresses: 10.10.0.152/31 overlaps 10.10.0.150-10.10.0.153 of the same pool",
    ),
    (
        "BGP peers announcing from two ASNs",
        "prod",
        _set(
            "hpcforge:network/advertisement",
            {
                "mode": "bgp",
                "peers": [
                    {"name": "r1", "address": "10.10.0.1", "peerAsn": 65000, "myAsn": 64512},
                    {"name": "r2", "address": "10.10.0.2", "peerAsn": 65000, "myAsn": 64513},
                ],
            },
        ),
        "hpcforge:network.advertisement.peers[1].myAsn: peer 'r2': myAsn 64513 differs from myAsn 64512 of peer 'r1'",
    ),
    (
        "two BGP peers at one address",
        "prod",
        _set(
            "hpcforge:network/advertisement",
            {
                "mode": "bgp",
                "peers": [
                    {"name": "r1", "address": "10.10.0.1", "peerAsn": 65000, "myAsn": 64512},
                    {"name": "r2", "address": "10.10.0.1", "peerAsn": 65001, "myAsn": 64512},
                ],
            },
        ),
        "hpcforge:network.advertisement.peers[1].address: peer 'r2': 10.10.0.1 is already the address of peer 'r1'",
    ),
    (
        "BGP hold time under 3s",
        "prod",
        _set(
            "hpcforge:network/advertisement",
            {
                "mode": "bgp",
                "peers": [{"name": "r1", "address": "10.10.0.1", "peerAsn": 65000, "myAsn": 64512, "holdTime": "2900ms"}],
            },
        ),
        "hpcforge:network.advertisement.peers[0].holdTime: peer 'r1': 2900ms is not a BGP hold time MetalLB accepts (0 or at least 3s)",
    ),
    (
        "partition names an unknown nodeset",
        "prod",
        _set("hpcforge:slurm/partitions/1/nodesets", ["gpu-a100", "gpu-x"]),
        "hpcforge:slurm.partitions[1].nodesets[1]: partition 'gpu': unknown nodeset 'gpu-x'",
    ),
    (
        "GRES disagrees with the GPU request",
        "prod",
        _set("hpcforge:slurm/nodesets/3/gres", ["gpu:h100:4"]),
        "hpcforge:slurm.nodesets[3].gres: nodeset 'gpu-h100': GRES 'gpu:h100:4' disagrees with the device request nvidia.com/gpu=8",
    ),
    (
        "invalid nodeset name",
        "prod",
        _set("hpcforge:slurm/nodesets/0/name", "CPU_Nodes"),
        "hpcforge:slurm.nodesets[0].name: 'CPU_Nodes' is not a valid Slurm and Kubernetes name",
    ),
    (
        "maxUnavailable out of bounds",
        "prod",
        _set("hpcforge:slurm/nodesets/0/maxUnavailable", "150%"),
        "hpcforge:slurm.nodesets[0].maxUnavailable: '150%' must be between 1% and 100%",
    ),
    (
        "login update would take every pod down",
        "prod",
        _set("hpcforge:slurm/login/maxUnavailable", 2),
        "hpcforge:slurm.login: maxUnavailable 2 would take all 2 login pod(s) down at once",
    ),
    (
        "duplicate uidNumber",
        "prod",
        _set("hpcforge:directory/users/1/uidNumber", 10001),
        "{users}: users[1].uidNumber: uidNumber 10001 of user 'bob' is already used by user 'alice'",
    ),
    (
        "user in an unknown group",
        "prod",
        _set("hpcforge:directory/users/2/groups", ["proj-astro"]),
        "{users}: users[2].groups[0]: user 'carol': unknown group 'proj-astro'",
    ),
    (
        "malformed ssh key",
        "prod",
        _set("hpcforge:directory/users/0/sshPublicKeys", ["ssh-ed25519 not-base64!! alice"]),
        "{users}: users[0].sshPublicKeys: 'ssh-ed25519 not-base64!! alice': the key body is not valid base64",
    ),
    (
        "duplicate MAC",
        "prod",
        DUPLICATE_MAC,
        "{hosts}: hosts[5].mac: host 'cn006': MAC 0c:c4:7a:10:00:03 is already used by host 'cn003'",
    ),
    (
        "IP outside the provisioning subnet",
        "prod",
        _hosts(lambda h: h[0].update(ip="10.99.0.1")),
        "{hosts}: hosts[0].ip: host 'cn001': IP 10.99.0.1 is outside the provisioning subnets 10.20.0.0/23, 10.21.0.0/24",
    ),
    (
        "IP inside the DHCP dynamic range",
        "prod",
        _hosts(lambda h: h[1].update(ip="10.20.1.240")),
        "{hosts}: hosts[1].ip: host 'cn002': IP 10.20.1.240 is inside the DHCP dynamic range 10.20.1.230-10.20.1.250",
    ),
    (
        "unknown boot image",
        "prod",
        _hosts(lambda h: h[2].update(image="ubuntu-noble")),
        "{hosts}: hosts[2].image: host 'cn003': unknown image 'ubuntu-noble' (known: rocky9-compute, rocky9-service)",
    ),
    (
        "host names an unknown nodeset",
        "prod",
        _hosts(lambda h: h[3].update(nodeset="gpu-b200")),
        "{hosts}: hosts[3].nodeset: host 'cn004': unknown nodeset 'gpu-b200'",
    ),
    (
        "branch as targetRevision in prod",
        "prod",
        _set("hpcforge:gitops/apps/0/targetRevision", "main"),
        "hpcforge:gitops.apps[0].targetRevision: app 'monitoring': 'main' can be moved; production needs a full commit SHA",
    ),
    (
        "tag as targetRevision in prod",
        "prod",
        _set("hpcforge:gitops/apps/0/targetRevision", "v2.3.1"),
        "hpcforge:gitops.apps[0].targetRevision: app 'monitoring': 'v2.3.1' can be moved; production needs a full commit SHA",
    ),
    (
        "tag as the root's revision in prod",
        "prod",
        _set("hpcforge:gitops/rootRevision", "v2.3.1"),
        "hpcforge:gitops.rootRevision: 'v2.3.1' can be moved; production needs a full commit SHA of the app-of-apps root",
    ),
    (
        "root ssh keys on the login pods in prod",
        "prod",
        _set(
            "hpcforge:slurm/login/rootSshAuthorizedKeys",
            ["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHO4xUoQo58Ijc0witWn81SbrosgcRgLPYV8gevRY+pq ops@hpc"],
        ),
        "hpcforge:slurm.login.rootSshAuthorizedKeys: refused in production: root on a login pod reads the Slurm key",
    ),
    (
        "a site app in the monitoring namespace",
        "prod",
        _set("hpcforge:gitops/apps/0/namespace", "monitoring"),
        "hpcforge:gitops.apps[0].namespace: app 'monitoring': namespace 'monitoring' belongs to the Observability layer",
    ),
    (
        "a boot image under Grendel's served repo",
        "prod",
        _set("hpcforge:provisioning/images/0/liveimg", "/var/lib/grendel/repo/rocky9/rootfs.squashfs"),
        "hpcforge:provisioning.images[0].liveimg: /var/lib/grendel/repo/rocky9/rootfs.squashfs is under /var/lib/grendel/repo, "
        "which Grendel serves to anyone without a token",
    ),
    (
        "key export without the sealing keys' names in prod",
        "prod",
        _set("hpcforge:backups/sealingKeys", []),
        "hpcforge:backups.sealingKeys: production exports the platform's keys (keyRecipient is set): name the "
        "sealed-secrets keys it reads",
    ),
    (
        "an exposure both public and ranged",
        "prod",
        _set("hpcforge:network/ingress/exposure", {"public": True, "sourceRanges": ["10.10.0.0/16"]}),
        "hpcforge:network.ingress.exposure: public: true and sourceRanges exclude each other",
    ),
    (
        "every address as the site's range",
        "prod",
        _set("hpcforge:network/siteRanges", ["0.0.0.0/0"]),
        "hpcforge:network.siteRanges: 0.0.0.0/0 is every address, not the site's",
    ),
    (
        "unsupported Kubernetes version",
        "dev",
        _set("hpcforge:kubernetes/version", "2.0"),
        "hpcforge:kubernetes.version: '2.0' is not a supported Kubernetes minor version",
    ),
    (
        "Kubernetes without admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy",
        "dev",
        _set("hpcforge:kubernetes/version", "1.29"),
        "hpcforge:kubernetes.version: '1.29' is not a supported Kubernetes minor version (1.30 to 1.39",
    ),
    (
        "invalid environment name",
        "dev",
        _set("hpcforge:environment", "Prod"),
        "hpcforge:environment: 'Prod' is not an environment name",
    ),
    (
        "MAC address with a bad format",
        "prod",
        _hosts(lambda h: h[0].update(mac="0c:c4:7a:10:00")),
        "{hosts}: hosts[0].mac: '0c:c4:7a:10:00' is not a MAC address",
    ),
]


@pytest.mark.parametrize(("case", "stack", "edit", "expected"), BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_is_refused_before_any_resource(
    tmp_path: Path, case: str, stack: str, edit: Callable[[dict[str, Any]], None], expected: str
) -> None:
    path = write_variant(tmp_path, stack, edit)
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, stack)
    messages = raised.value.messages
    expected = expected.format(hosts=inventory_file(tmp_path, "provisioning"), users=inventory_file(tmp_path, "directory"))
    assert any(message.startswith(expected) for message in messages), f"{case}: {messages}"
    assert raised.value.registered == 0, "a resource was registered before the config was refused"


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    def two_problems(values: dict[str, Any]) -> None:
        _set("hpcforge:delivery", "helm")(values)
        DUPLICATE_MAC(values)

    path = write_variant(tmp_path, "prod", two_problems)
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, "prod")
    assert len(raised.value.messages) == 2


def test_structured_value_that_is_not_json() -> None:
    with pytest.raises(ConfigError, match=r"hpcforge:network: not valid JSON"):
        load_config({"hpcforge:network": "{not json"})


def test_keys_of_other_namespaces_are_ignored() -> None:
    values = raw_config(config_values("dev"))
    values["kubernetes:context"] = "somewhere"
    assert load_config(values).environment == "dev"


def test_backups_without_the_accounting_database_are_refused_by_name() -> None:
    from tests.helpers import config_values, raw_config

    values = config_values("prod")
    values["hpcforge:slurm"]["accounting"] = {**values["hpcforge:slurm"].get("accounting", {}), "enabled": False}
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert any(m.startswith("hpcforge:backups:") and "accounting database" in m for m in raised.value.messages)


def test_an_interface_name_starting_with_a_dash_is_refused_by_name() -> None:
    values = config_values("prod")
    values["hpcforge:network"]["advertisement"]["interfaces"] = ["-bond0"]
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert any(m.startswith("hpcforge:network.advertisement.interfaces[0]:") and "'-bond0'" in m for m in raised.value.messages)


def test_a_negative_gpu_index_on_an_rdma_nic_is_refused_by_name() -> None:
    values = config_values("prod")
    values["hpcforge:rdma"]["pools"][0]["nics"][1]["gpus"] = [2, -1]
    with pytest.raises(ConfigError) as raised:
        load_config(raw_config(values))
    assert any(m.startswith("hpcforge:rdma.pools[0].nics[1].gpus[1]:") for m in raised.value.messages), raised.value.messages


def test_a_bgp_hold_time_must_be_a_duration() -> None:
    from components.layers.network.config import BgpPeer

    peer = {"name": "tor1", "address": "10.0.0.1", "peerAsn": 64512, "myAsn": 64513}
    assert BgpPeer.model_validate({**peer, "holdTime": "3m"}).hold_time == "3m"
    with pytest.raises(ValueError, match="'90 s' is not a duration"):
        BgpPeer.model_validate({**peer, "holdTime": "90 s"})


def _every_leaf(value: Any, leaf: Any) -> Any:
    if isinstance(value, dict):
        return {key: _every_leaf(item, leaf) for key, item in value.items()}
    if isinstance(value, list):
        return [_every_leaf(item, leaf) for item in value]
    return leaf


@pytest.mark.parametrize(("written", "value"), [("null", None), ("true", True), ("false", False)])
def test_null_and_booleans_are_printed_as_yaml_writes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str, value: Any
) -> None:
    """Every value of prod's config and of its inventory files set to null (true, false) at once: each message
    shows it as YAML writes it, never as Python's None (True, False)."""
    monkeypatch.setattr(loader, "MAX_MESSAGES", 10**6)
    monkeypatch.setattr(loader, "SAME_CAUSE_SHOWN", 10**6)
    with pytest.raises(ConfigError) as raised:
        load_edited(tmp_path, lambda values: values.update(_every_leaf(values, value)))
    messages = raised.value.messages
    assert len(messages) > 100
    python = {None: "None", True: "True", False: "False"}[value]
    assert [m for m in messages if re.search(rf"(?<!')\b{python}\b(?!')", m)] == []
    hosts = inventory_file(tmp_path, "provisioning")
    for expected in (
        f"hpcforge:provisioning.gateway: {written} is not an IPv4 address",
        f"hpcforge:provisioning.subnet: {written} is not an IPv4 network in CIDR form",
        f"hpcforge:network.advertisement.mode: {written} is not allowed (expected 'l2' or 'bgp')",
        f"hpcforge:slurm.accounts.users[0].adminLevel: {written} is not allowed (expected 'None', 'Operator' or 'Administrator')",
        f"{hosts}: hosts[0].mac: {written} is not a MAC address (six hex pairs, e.g. 0c:c4:7a:00:00:01)",
    ):
        assert expected in messages

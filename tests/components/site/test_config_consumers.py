"""Values checked against what their consumer enforces, and relations between values (issue 14).

Each case edits one stack file and expects one message naming the key; load_config is called
directly (the program tier in test_config.py shows the same messages come out of the program).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.ground.base import quantity_value
from components.layers.slurm.slurm_conf import conf_token
from components.site.loader import MAX_MESSAGES, ConfigError, load_config
from tests.helpers import config_values, inline_inventories, outline_inventories, raw_config

Edit = Callable[[dict[str, Any]], None]


def _messages(stack: str, edit: Edit, tmp_path: Path) -> list[str]:
    values = inline_inventories(config_values(stack))  # hosts and users editable like config ...
    edit(values)
    outline_inventories(values, tmp_path)  # ... and back in inventory files
    with pytest.raises(ConfigError) as caught:
        load_config(raw_config(values))
    return caught.value.messages


def _slurm(values: dict[str, Any]) -> dict[str, Any]:
    slurm: dict[str, Any] = values["hpcforge:slurm"]
    return slurm


CASES: list[tuple[str, str, Edit, str]] = [
    (
        "newline in SchedulerParameters",
        "prod",
        lambda v: _slurm(v)["controller"].update(scheduler={"parameters": ["bf_continue\nSlurmUser=root"]}),
        "hpcforge:slurm.controller.scheduler.parameters[0]: 'bf_continue\\nSlurmUser=root' contains a line break",
    ),
    (
        "space in SchedulerParameters item",
        "prod",
        lambda v: _slurm(v)["controller"].update(scheduler={"parameters": ["bf_continue SlurmUser=root"]}),
        "hpcforge:slurm.controller.scheduler.parameters[0]: 'bf_continue SlurmUser=root' is not one slurm.conf list item",
    ),
    (
        "comment in an extra slurm.conf value",
        "prod",
        lambda v: _slurm(v)["controller"].update(extraParameters={"MaxJobCount": "10000#x"}),
        "hpcforge:slurm.controller.extraParameters.MaxJobCount: '10000#x' is not a slurm.conf value",
    ),
    (
        "newline in a kernel command line",
        "dev",
        lambda v: v["hpcforge:provisioning"]["images"][0].update(cmdline="console=ttyS0\nip=dhcp"),
        "hpcforge:provisioning.images[0].cmdline: 'console=ttyS0\\nip=dhcp' contains a line break",
    ),
    (
        "NUL in a user's full name (LDIF)",
        "dev",
        lambda v: v["hpcforge:directory"]["users"][0].update(fullName="Alice\x00"),
        "users.yaml: users[0].fullName: 'Alice\\x00' contains a NUL character",  # the inventory file, by name
    ),
    (
        "boolean for a Slurm weight",
        "prod",
        lambda v: _slurm(v)["controller"]["priority"]["weights"].update(age=True),
        "hpcforge:slurm.controller.priority.weights.age: expected an integer (got true, a boolean)",
    ),
    (
        "Slurm weight over 32 bits",
        "prod",
        lambda v: _slurm(v)["controller"]["priority"]["weights"].update(qos=2**32),
        "hpcforge:slurm.controller.priority.weights.qos: expected less than or equal to 4294967293",
    ),
    (
        "InactiveLimit over 65533",
        "prod",
        lambda v: _slurm(v)["controller"].update(timeouts={"inactiveLimit": 65534}),
        "hpcforge:slurm.controller.timeouts.inactiveLimit: expected less than or equal to 65533",
    ),
    (
        "boolean where a string belongs, with the fix",
        "prod",
        lambda v: _slurm(v)["partitions"][0].update(oversubscribe=False),
        "hpcforge:slurm.partitions[0].oversubscribe: expected a string (got false, a boolean; put it in quotes",
    ),
    (
        "a list where a string belongs",
        "dev",
        lambda v: v["hpcforge:kubernetes"].update(context=["a"]),
        "hpcforge:kubernetes.context: expected a string (got a list)",
    ),
    (
        "quantity too large",
        "dev",
        lambda v: v["hpcforge:database"].update(memoryLimit="1e30"),
        "hpcforge:database.memoryLimit: '1e30' is too large for a Kubernetes quantity",
    ),
    (
        "quantity with a suffix and an exponent",
        "dev",
        lambda v: v["hpcforge:database"].update(memoryLimit="1e30Gi"),
        "hpcforge:database.memoryLimit: '1e30Gi' is not a Kubernetes quantity",
    ),
    (
        "label value Kubernetes refuses",
        "dev",
        lambda v: v["hpcforge:nodePools"][0]["labels"].update({"kubernetes.io/hostname": "lab node"}),
        "hpcforge:nodePools[0].labels[\"kubernetes.io/hostname\"]: 'lab node' is not a Kubernetes label value",
    ),
    (
        "taint key Kubernetes refuses",
        "prod",
        lambda v: v["hpcforge:nodePools"][1].update(taints=["nvidia.com/gpu x"]),
        "hpcforge:nodePools[1].taints[0]: 'nvidia.com/gpu x' is not a Kubernetes label or taint key",
    ),
    (
        "toleration key Kubernetes refuses",
        "dev",
        lambda v: _slurm(v)["nodesets"][0].update(tolerations=[{"key": "-bad"}]),
        "hpcforge:slurm.nodesets[0].tolerations[0].key: '-bad' is not a Kubernetes label or taint key",
    ),
    (
        "interface name with a space",
        "dev",
        lambda v: v["hpcforge:network"]["attachments"][0].update(master="eth 1"),
        "hpcforge:network.attachments[0].master: 'eth 1' is not a Linux interface name",
    ),
    (
        "storage class with a space",
        "dev",
        lambda v: v["hpcforge:kubernetes"].update(storageClass="local path"),
        "hpcforge:kubernetes.storageClass: 'local path' is not a valid DNS name",
    ),
    (
        "slurmctld address equal to the ingress address",
        "dev",
        lambda v: _slurm(v)["controller"]["service"].update(address="192.168.56.240"),
        "hpcforge:slurm.controller.service.address: 192.168.56.240 is already the ingress's address",
    ),
    (
        "DHCP range covering the gateway",
        "dev",
        lambda v: v["hpcforge:provisioning"]["dhcp"]["range"].update(start="10.77.0.1", end="10.77.0.9"),
        "hpcforge:provisioning.dhcp.range: 10.77.0.1-10.77.0.9 covers the gateway 10.77.0.1",
    ),
    (
        "DHCP range covering Grendel's address",
        "dev",
        lambda v: v["hpcforge:provisioning"]["dhcp"]["range"].update(start="10.77.0.2", end="10.77.0.9"),
        "hpcforge:provisioning.dhcp.range: 10.77.0.2-10.77.0.9 covers Grendel's own address 10.77.0.2",
    ),
    (
        "host IP equal to a service address",
        "dev",
        lambda v: (
            v["hpcforge:provisioning"]["hosts"][0].update(ip="10.77.0.99", name="vm01")
            or v["hpcforge:devops"]["software"].update(server="10.77.0.99")
        ),
        "hosts.yaml: hosts[0].ip: host 'vm01': 10.77.0.99 is already the software NFS server's address",
    ),
    (
        "host named like a record hpcforge makes",
        "dev",
        lambda v: v["hpcforge:provisioning"]["hosts"][0].update(name="grendel"),
        "hosts.yaml: hosts[0].name: host 'grendel': the name is already Grendel's record",
    ),
    (
        "memory limit below its request",
        "dev",
        lambda v: v["hpcforge:database"].update(memory="2Gi", memoryLimit="1Gi"),
        "hpcforge:database.memoryLimit: 1Gi is below the memory request 2Gi",
    ),
    (
        "MariaDB limit not above the InnoDB buffer pool",
        "dev",
        lambda v: v["hpcforge:database"].update(innodbBufferPoolSize="1G"),
        "hpcforge:database.memoryLimit: 1Gi is not above innodbBufferPoolSize 1G",
    ),
    (
        "renewBefore not shorter than the duration",
        "dev",
        lambda v: v["hpcforge:tls"].update(certificateDuration="720h", renewBefore="720h"),
        "hpcforge:tls.renewBefore: 720h is not shorter than certificateDuration 720h",
    ),
    (
        "two layers in one namespace",
        "dev",
        lambda v: v["hpcforge:provisioning"].update(namespace="slurm"),
        "hpcforge:provisioning.namespace: namespace 'slurm' already belongs to the Slurm layer",
    ),
    (
        "site app in a platform namespace",
        "dev",
        lambda v: v["hpcforge:gitops"]["apps"][0].update(namespace="argocd"),
        "hpcforge:gitops.apps[0].namespace: app 'lab-tools': namespace 'argocd' belongs to the GitOps layer",
    ),
    (
        "one host name for two Ingresses",
        "prod",
        lambda v: v["hpcforge:devops"]["registry"].update(hostname="argocd.hpc.example.org"),
        "hpcforge:devops.registry.hostname: argocd.hpc.example.org is already the host name of hpcforge:gitops.argocd.hostname",
    ),
    (
        "a host name equal to one hpcforge picks itself",
        "dev",
        lambda v: v["hpcforge:devops"]["registry"].update(hostname="argocd.dev.hpc.example.org"),
        "hpcforge:devops.registry.hostname: argocd.dev.hpc.example.org is already the host name of "
        "hpcforge:gitops.argocd.hostname (default)",
    ),
    (
        "environment kind missing",
        "dev",
        lambda v: v.pop("hpcforge:environmentKind"),
        "hpcforge:environmentKind: required key is missing",
    ),
    (
        "environment kind not one of the two",
        "dev",
        lambda v: v.update({"hpcforge:environmentKind": "prod"}),
        "hpcforge:environmentKind: 'prod' is not allowed (expected 'production' or 'development')",
    ),
]


@pytest.mark.parametrize(("stack", "edit", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_consumer_rule_refuses_by_name(stack: str, edit: Edit, expected: str, tmp_path: Path) -> None:
    messages = _messages(stack, edit, tmp_path)
    assert any(expected in message for message in messages), messages


def test_environment_named_production_is_as_strict_as_its_kind_says(tmp_path: Path) -> None:
    values = config_values("dev")
    values["hpcforge:environment"] = "production"
    assert load_config(raw_config(values)).protection_mode == "none"  # development kind: stated, not guessed
    values["hpcforge:environmentKind"] = "production"
    messages = _messages("dev", lambda v: v.update(values), tmp_path)
    assert any("targetRevision" in m and "prod needs a tag" in m for m in messages)


@pytest.mark.parametrize(("text", "amount"), [("1e3", 1000.0), ("1.5E2", 150.0), ("2.", 2.0), (".5", 0.5), ("4Gi", 4 * 2**30)])
def test_kubernetes_quantity_forms_accepted(text: str, amount: float) -> None:
    assert quantity_value(text) == amount


def test_repeated_cause_counted_not_listed(tmp_path: Path) -> None:
    def edit(values: dict[str, Any]) -> None:
        for host in values["hpcforge:provisioning"]["hosts"]:
            host["image"] = "missing"

    messages = _messages("prod", edit, tmp_path)
    assert len(messages) <= MAX_MESSAGES + 1
    (named,) = [m for m in messages if "unknown image 'missing'" in m]  # one root cause, reported once
    hosts = len(inline_inventories(config_values("prod"))["hpcforge:provisioning"]["hosts"])
    assert f"; {hosts - 1} more keys name image 'missing' too (hosts[1].image, hosts[2].image, hosts[3].image, ...)" in named


def test_unknown_default_image_reported_once(tmp_path: Path) -> None:
    messages = _messages("prod", lambda v: v["hpcforge:provisioning"].update(defaultImage="missing"), tmp_path)
    assert messages == ["hpcforge:provisioning.defaultImage: unknown image 'missing' (known: rocky9-compute, rocky9-service)"]


@pytest.mark.parametrize("value", ["a b", "a#b", "a\nb", "", "'a'"])
def test_slurm_renderer_refuses_unsafe_token(value: str) -> None:
    with pytest.raises(ValueError, match=r"slurm\.conf value"):
        conf_token("SchedulerParameters", value)


@pytest.mark.parametrize(
    ("field", "value"),
    [("domain", "hpc]\n[x"), ("suffix", "dc=x\nldap_uri = ldap://evil"), ("bind_dn", "cn=a\x00")],
)
def test_sssd_renderer_refuses_structure_breaking_value(field: str, value: str) -> None:
    from components.layers.slurm.sssd import SssdSettings, render_sssd_conf

    settings = {"domain": "hpc", "ldap_uri": "ldaps://ldap", "suffix": "dc=x", "bind_dn": "cn=sssd,dc=x", field: value}
    with pytest.raises(ValueError, match=r"sssd\.conf"):
        render_sssd_conf(SssdSettings(**settings), "secret")

"""Tier 1: the pure renderers (config -> text) and small pure helpers, tested directly.

The real-daemon tier loads their output into the real programs; these tests pin down structure.
"""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from components.charts import ChartUse, SyncRetry, application_spec, project_spec
from components.k8s.chunks import MAP_PAYLOAD_LIMIT, PLAIN_LIMIT, plan_parts
from components.layers.database.objects import my_cnf
from components.layers.database.sql import database_sql, grant_sql, user_sql
from components.layers.directory.ldif import BIND_PASSWORD_PLACEHOLDER, render_directory_ldif, sssd_bind_dn
from components.layers.network.config import NetworkAttachment
from components.layers.network.dns import render_corefile, render_hosts_file
from components.layers.network.objects import ipvlan_cni_config
from components.layers.provisioning.grendel import GrendelSecrets, render_grendel_toml, render_inventory
from components.layers.slurm.face import render_join_script
from components.layers.slurm.objects import nodeset_spec
from components.layers.slurm.slurm_conf import (
    bare_metal_slurmd_argv,
    cgroup_conf,
    controller_extra_conf,
    gres_conf,
    nodeset_extra_conf,
    partition_line,
)
from components.layers.slurm.sssd import SssdSettings, render_sssd_conf
from components.site.loader import load_config
from components.site.root import PlatformConfig
from components.versions import Charts
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.fixture(scope="module")
def dev() -> PlatformConfig:
    return load_config(raw_config(config_values("dev")))


# --- Slurm ------------------------------------------------------------------------------------------


def test_controller_extra_conf_is_typed_settings_and_partitions(prod: PlatformConfig) -> None:
    text = controller_extra_conf(prod.slurm, accounting=True)
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    params = dict(line.split("=", 1) for line in lines if not line.startswith("PartitionName="))
    assert params["SchedulerType"] == "sched/backfill"
    assert params["SelectTypeParameters"] == "CR_Core_Memory"
    assert params["PriorityWeightFairshare"] == "100000"  # from Pulumi.prod.yaml
    assert params["SlurmdTimeout"] == "600"
    assert params["AccountingStorageEnforce"] == "associations,limits,qos,safe"
    assert params["GresTypes"] == "gpu"
    partitions = [line for line in lines if line.startswith("PartitionName=")]
    assert [p.split()[0] for p in partitions] == [f"PartitionName={p.name}" for p in prod.slurm.partitions]
    assert "PartitionName=gpu Nodes=gpu-a100,gpu-h100 Default=NO" in text
    assert "QOS=h100" in text and "OverSubscribe=FORCE:2" in text


def test_accounting_lines_only_with_accounting(prod: PlatformConfig) -> None:
    text = controller_extra_conf(prod.slurm, accounting=False)
    assert "AccountingStorageEnforce" not in text and "AccountingStorageTRES" not in text


def test_partition_line_defaults(dev: PlatformConfig) -> None:
    line = partition_line(dev.slurm.partitions[0])
    assert line == "PartitionName=debug Nodes=cpu,vm Default=YES MaxTime=1:00:00 OverSubscribe=NO PriorityTier=1 State=UP"


def test_gres_and_cgroup(prod: PlatformConfig, dev: PlatformConfig) -> None:
    gres = gres_conf(prod.slurm)
    assert gres is not None
    lines = gres.splitlines()[1:]
    assert lines[0] == "NodeName=gpu-a100-[0-7] Name=gpu Type=a100 File=/dev/nvidia[0-7]"
    assert lines[1:] == [
        f"NodeName=gpu-h100-[0-3] Name=gpu Type=h100 File=/dev/nvidia{i} Cores={'0-47' if i < 4 else '48-95'}" for i in range(8)
    ]
    assert gres_conf(dev.slurm) is None
    cgroup = cgroup_conf(prod.slurm)
    assert "CgroupPlugin=cgroup/v2" in cgroup and "ConstrainDevices=yes" in cgroup and "IgnoreSystemd=yes" in cgroup


def test_nodeset_gpus_agree_in_limits_and_gres(prod: PlatformConfig) -> None:
    h100 = prod.slurm.nodeset("gpu-h100")
    assert h100 is not None
    spec = nodeset_spec(h100, node_selector={"hpcforge.io/pool": "gpu-h100"})
    assert spec["slurmd"]["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert "Gres=gpu:h100:8" in spec["extraConf"].split()
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
    assert spec["workloadDisruptionProtection"] is True
    assert spec["template"]["spec"]["nodeSelector"] == {"hpcforge.io/pool": "gpu-h100"}
    a100 = prod.slurm.nodeset("gpu-a100")
    assert a100 is not None and "Gres=gpu:a100:8" in nodeset_extra_conf(a100)


def test_nodeset_extra_conf_has_no_spaces_inside_values(prod: PlatformConfig) -> None:
    for nodeset in prod.slurm.nodesets:
        for item in nodeset_extra_conf(nodeset).split():
            key, _, value = item.partition("=")
            assert key and value, item


def test_bare_metal_command_line(prod: PlatformConfig) -> None:
    nodeset = prod.slurm.nodeset("cpu-bm")
    assert nodeset is not None
    argv = bare_metal_slurmd_argv(nodeset, "10.10.0.102:6817", node_name="cn001")
    assert argv == [
        "slurmd",
        "-Z",
        "--conf-server",
        "10.10.0.102:6817",
        "--conf",
        "Features=cpu-bm,baremetal,avx512 Weight=10",
        "-N",
        "cn001",
    ]


# --- identity ---------------------------------------------------------------------------------------


def _ldif_entries(text: str) -> dict[str, dict[str, list[str]]]:
    entries: dict[str, dict[str, list[str]]] = {}
    for block in text.strip().split("\n\n"):
        attrs: dict[str, list[str]] = {}
        for line in block.splitlines():
            name, _, value = line.partition(": ")
            if name.endswith(":"):
                name, value = name[:-1], base64.b64decode(value).decode()
            attrs.setdefault(name, []).append(value)
        entries[attrs.pop("dn")[0]] = attrs
    return entries


def test_ldif_has_tree_groups_users_and_bind_account(prod: PlatformConfig) -> None:
    entries = _ldif_entries(render_directory_ldif(prod.directory))
    suffix = prod.directory.suffix
    dns = list(entries)
    assert dns[:4] == [suffix, f"ou=People,{suffix}", f"ou=Groups,{suffix}", f"ou=Services,{suffix}"]
    bind = entries[sssd_bind_dn(suffix)]
    assert bind["userPassword"] == [BIND_PASSWORD_PLACEHOLDER]
    assert any("allow (read, search, compare)" in aci and sssd_bind_dn(suffix) in aci for aci in entries[suffix]["aci"])
    alice = entries[f"uid=alice,ou=People,{suffix}"]
    assert alice["uidNumber"] == ["10001"] and alice["gidNumber"] == ["5000"]
    assert alice["homeDirectory"] == ["/home/alice"] and alice["loginShell"] == ["/bin/bash"]
    assert "nsAccount" in alice["objectClass"] and alice["nsSshPublicKey"][0].startswith("ssh-ed25519 ")
    carol = entries[f"uid=carol,ou=People,{suffix}"]
    assert "nsAccount" not in carol["objectClass"] and "nsSshPublicKey" not in carol
    llm = entries[f"cn=proj-llm,ou=Groups,{suffix}"]
    assert llm["memberUid"] == ["dave", "erin"] and llm["gidNumber"] == ["6003"]
    assert entries[f"uid=frank,ou=People,{suffix}"]["loginShell"] == ["/bin/zsh"]


def test_ldif_is_deterministic(prod: PlatformConfig) -> None:
    assert render_directory_ldif(prod.directory) == render_directory_ldif(prod.directory)


def test_sssd_conf_points_at_the_directory_over_ldaps() -> None:
    settings = SssdSettings(
        domain="hpc", ldap_uri="ldaps://dirsrv:3636", suffix="dc=hpc,dc=org", bind_dn="uid=sssd,ou=Services,dc=hpc,dc=org"
    )
    text = render_sssd_conf(settings, "s3cret")
    import configparser

    parser = configparser.ConfigParser()
    parser.read_string(text)
    domain = parser["domain/hpc"]
    assert parser["sssd"]["domains"] == "hpc"
    assert domain["ldap_uri"] == "ldaps://dirsrv:3636"
    assert domain["ldap_tls_reqcert"] == "demand" and domain["ldap_tls_cacert"].endswith("ca.crt")
    assert domain["ldap_default_authtok"] == "s3cret"
    assert domain["ldap_user_search_base"].startswith("ou=People,dc=hpc,dc=org")


def test_grant_sql_is_limited_to_the_database() -> None:
    spec = {"privileges": ["ALL PRIVILEGES"], "database": "slurm_acct_db", "table": "*", "username": "slurm", "host": "%"}
    assert grant_sql(spec) == "GRANT ALL PRIVILEGES ON `slurm_acct_db`.* TO 'slurm'@'%';"
    assert database_sql({"name": "slurm_acct_db", "characterSet": "utf8mb4"}) == (
        "CREATE DATABASE IF NOT EXISTS `slurm_acct_db` CHARACTER SET = utf8mb4;"
    )
    assert user_sql({"name": "slurm", "host": "%"}, "p'w") == "CREATE USER IF NOT EXISTS 'slurm'@'%' IDENTIFIED BY 'p\\'w';"


def test_mariadb_tuning_for_slurmdbd(prod: PlatformConfig) -> None:
    cnf = my_cnf(prod.database)
    assert "innodb_buffer_pool_size=4096M" in cnf and "innodb_lock_wait_timeout=900" in cnf


# --- provisioning -----------------------------------------------------------------------------------


def test_grendel_toml_has_every_section(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    text = render_grendel_toml(prod.provisioning, prod.domain, GrendelSecrets(api_secret="api", root_password_hash="$2a$10$x"))
    document = tomllib.loads(text)
    for section in ("provision", "dhcp", "dns", "tftp", "pxe", "api", "client", "bmc", "discovery"):
        assert section in document, section
    assert document["dhcp"]["subnets"][0]["gateway"] == "10.20.0.1/23"
    assert document["dhcp"]["mtu"] == 9000 and document["dhcp"]["lease_time"] == "24h"
    assert document["dhcp"]["domain_search"] == ["hpc.example.org"]
    assert document["dns"]["listen"] == "10.20.0.2:53"
    assert document["api"]["secret"] == "api" and document["provision"]["root_password"] == "$2a$10$x"


def test_inventory_in_grendel_format(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    hosts_json, images_json = render_inventory(prod.provisioning, prod.domain, "http://10.20.0.2/repo/hpcforge")
    hosts = json.loads(hosts_json)
    images = {image["name"]: image for image in json.loads(images_json)}
    assert len(hosts) == len(prod.provisioning.hosts)
    cn001 = hosts[0]
    assert cn001["name"] == "cn001" and cn001["provision"] is True
    assert cn001["interfaces"][0] == {
        "ifname": "",
        "mac": "0c:c4:7a:10:00:01",
        "ip": "10.20.1.1/23",
        "fqdn": "cn001.hpc.example.org",
        "bmc": False,
        "vlan": "",
    }
    assert cn001["interfaces"][1]["bmc"] is True and cn001["interfaces"][1]["fqdn"] == "cn001-bmc.hpc.example.org"
    assert "nodeset:cpu-bm" in cn001["tags"]
    # Compute hosts boot a per-nodeset image whose command line says where the join script is.
    assert cn001["boot_image"] == "rocky9-compute--cpu-bm"
    assert images["rocky9-compute--cpu-bm"]["cmdline"].endswith("hpcforge.join=http://10.20.0.2/repo/hpcforge/join-cpu-bm.sh")
    io01 = next(h for h in hosts if h["name"] == "io01")
    assert io01["boot_image"] == "rocky9-service"


def test_inventory_round_trips_through_the_documented_json(prod: PlatformConfig) -> None:
    assert prod.provisioning is not None
    hosts_json, _ = render_inventory(prod.provisioning, prod.domain, None)
    hosts = json.loads(hosts_json)
    assert json.loads(json.dumps(hosts)) == hosts
    by_name = {host.name: host for host in prod.provisioning.hosts}
    for record in hosts:
        host = by_name[record["name"]]
        assert record["interfaces"][0]["mac"] == host.mac and record["interfaces"][0]["ip"].split("/")[0] == host.ip


def test_join_script(tmp_path: Path, prod: PlatformConfig) -> None:
    script = render_join_script(prod.slurm, "cpu-bm", "10.10.0.102")
    assert script.startswith("#!/bin/sh\n")
    assert "exec slurmd -Z --conf-server 10.10.0.102:6817 --conf 'Features=cpu-bm,baremetal,avx512 Weight=10'" in script
    path = tmp_path / "join.sh"
    path.write_text(script)
    result = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


# --- network, DNS, charts, chunks ---------------------------------------------------------------------


def test_ipvlan_attachment_config() -> None:
    static = NetworkAttachment.model_validate({"name": "prov", "namespace": "p", "master": "bond1", "mtu": 9000})
    config = json.loads(ipvlan_cni_config(static))
    assert config["type"] == "ipvlan" and config["master"] == "bond1" and config["mode"] == "l2"
    assert config["ipam"] == {"type": "static"} and config["capabilities"] == {"ips": True} and config["mtu"] == 9000
    pool = NetworkAttachment.model_validate(
        {
            "name": "data",
            "namespace": "p",
            "master": "eth2",
            "ipam": {"type": "whereabouts", "range": "10.5.0.0/24", "exclude": ["10.5.0.0/28"]},
        }
    )
    ipam = json.loads(ipvlan_cni_config(pool))["ipam"]
    assert ipam == {"type": "whereabouts", "range": "10.5.0.0/24", "exclude": ["10.5.0.0/28"]}


def test_corefile_and_hosts() -> None:
    corefile = render_corefile(["hpc.example.org"], ["10.0.0.2"], listen_port=1053)
    assert "hpc.example.org:1053 {" in corefile and "hosts /etc/coredns/zones/hpc.example.org.hosts hpc.example.org" in corefile
    assert "forward . 10.0.0.2" in corefile
    hosts = render_hosts_file("hpc.example.org", {"b": "10.0.0.10", "a": "10.0.0.9"})
    assert hosts.splitlines()[1:] == ["10.0.0.9 a.hpc.example.org a", "10.0.0.10 b.hpc.example.org b"]


def test_application_spec_pins_and_syncs() -> None:
    use = ChartUse("cert-manager", Charts.CERT_MANAGER, "cert-manager")
    spec = application_spec(use, {"crds": {"enabled": True}}, project="p", retry=SyncRetry())
    assert spec["source"] == {
        "repoURL": "quay.io/jetstack/charts",
        "chart": "cert-manager",
        "targetRevision": "v1.21.1",
        "helm": {"releaseName": "cert-manager", "valuesObject": {"crds": {"enabled": True}}},
    }
    assert spec["syncPolicy"]["automated"] == {"prune": True, "selfHeal": True}
    assert spec["syncPolicy"]["retry"] == {"limit": 5, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}


def test_project_allows_exactly_the_planned_charts() -> None:
    uses = [ChartUse("a", Charts.METALLB, "metallb-system"), ChartUse("b", Charts.SLURM_OPERATOR, "slinky")]
    spec = project_spec(uses, "x")
    assert spec["sourceRepos"] == ["ghcr.io/slinkyproject/charts", "https://metallb.github.io/metallb"]
    assert [d["namespace"] for d in spec["destinations"]] == ["metallb-system", "slinky"]


@pytest.mark.parametrize("size", [1000, 3_000_000])
def test_chunked_files_reassemble(tmp_path: Path, size: int) -> None:
    import random

    rng = random.Random(size)
    text = "".join(f"{rng.random():.12f} host{i}\n" for i in range(size // 20))
    data_maps, binary_maps, script = plan_parts({"hosts.json": text})
    for index, (data, binary) in enumerate(zip(data_maps, binary_maps, strict=True)):
        folder = tmp_path / "chunks" / f"{index:02d}"
        folder.mkdir(parents=True)
        for key, value in data.items():
            (folder / key).write_text(value)
        for key, value in binary.items():
            (folder / key).write_bytes(base64.b64decode(value))
            assert len(value) <= MAP_PAYLOAD_LIMIT
    target = tmp_path / "out"
    target.mkdir()
    script = script.replace("/chunks/", f"{tmp_path}/chunks/")
    subprocess.run(["/bin/sh", "-ec", f'TARGET="{target}"\n{script}'], check=True, timeout=60)
    assert (target / "hosts.json").read_text() == text
    if len(text) > PLAIN_LIMIT:
        assert len(binary_maps) >= 1 and gzip.decompress(b"".join(base64.b64decode(v) for m in binary_maps for v in m.values()))


def test_nodesets_tolerate_their_pool_taints(prod: PlatformConfig) -> None:
    cpu = prod.slurm.nodeset("cpu")
    assert cpu is not None
    spec = nodeset_spec(cpu, node_selector={}, pool_taints=("dedicated",))
    assert spec["template"]["spec"]["tolerations"] == [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    a100 = prod.slurm.nodeset("gpu-a100")
    assert a100 is not None  # already tolerates nvidia.com/gpu: not added twice
    assert len(nodeset_spec(a100, node_selector={}, pool_taints=("nvidia.com/gpu",))["template"]["spec"]["tolerations"]) == 1

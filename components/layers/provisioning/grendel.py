"""Grendel renderers (pure): grendel.toml, the host inventory and boot images (Grendel's JSON
formats), and the join script that makes a bare-metal host a Slurm dynamic node."""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from typing import Any

import tomli_w

from ...ground.hosts import Host
from .config import DATA_DIR, REPO_DIR, BootImage, ProvisioningConfig

JOIN_DIR = "hpcforge"
"""Folder under Grendel's repo (served at http://<grendel>/repo/hpcforge/) holding join scripts."""
API_SOCKET = "/var/run/grendel/grendel-api.socket"
NODESET_TAG_PREFIX = "nodeset:"


@dataclass(frozen=True)
class GrendelSecrets:
    api_secret: str
    root_password_hash: str


def render_grendel_toml(config: ProvisioningConfig, domain: str, secrets: GrendelSecrets) -> str:
    """grendel.toml: every section Grendel reads; holds secrets, so it only goes into a Secret."""
    ip = config.grendel_ip
    dns_servers = list(config.dhcp.dns_servers) or [ip]
    domain_search = list(config.dhcp.domain_search) or [domain]
    document: dict[str, Any] = {
        "dbpath": f"{DATA_DIR}/grendel.db",
        "loggers": {"cli": "on", "tftp": "on", "dhcp": "on", "dns": "on", "provision": "on", "api": "on", "pxe": "on"},
        "admin_ssh_pubkeys": list(config.admin_ssh_public_keys),
        "provision": {
            # The HTTP endpoint (iPXE scripts, kernels, images, join scripts) also serves the
            # cluster-side Service when exposed, so it listens on every address of the pod.
            "listen": "0.0.0.0:80",
            "token_ttl": 3600,
            "root_password": secrets.root_password_hash,
            "default_image": config.default_image or "",
            "repo_dir": REPO_DIR,
        },
        "dhcp": {
            # DHCP answers broadcasts: it listens on every address of the pod.
            "listen": "0.0.0.0:67",
            "lease_time": config.dhcp.lease_time,
            "dns_servers": dns_servers,
            "domain_search": domain_search,
            "mtu": config.dhcp.mtu,
            "proxy_only": False,
            "router_octet4": 0,
            "gateway": config.gateway,
            "subnets": dhcp_subnets(config, dns_servers, domain_search),
        },
        "dns": {"listen": f"{ip}:53", "ttl": 86400},
        "tftp": {"listen": f"{ip}:69"},
        "pxe": {"listen": f"{ip}:4011"},
        "api": {"secret": secrets.api_secret, "socket_path": API_SOCKET},
        "client": {"api_endpoint": API_SOCKET, "insecure": False},
        "bmc": {"user": "", "password": ""},
        "discovery": {"user": "", "password": "", "domain": domain},
    }
    return tomli_w.dumps(document)


def dhcp_subnets(config: ProvisioningConfig, dns_servers: list[str], domain_search: list[str]) -> list[dict[str, Any]]:
    """grendel.toml `[dhcp] subnets`: one per network, keyed by its gateway with the prefix length.

    Grendel picks the entry whose gateway prefix contains a host's address and hands out that gateway,
    DNS, search domains and MTU (grendel internal/config/config.go, pkg/model/nic.go).
    """
    entries = [(config.gateway, config.prefix_length, config.dhcp.mtu)]
    entries += [(extra.gateway, int(extra.subnet.rsplit("/", 1)[1]), extra.mtu or config.dhcp.mtu) for extra in config.subnets]
    if config.bmc_network is not None:
        entries.append((config.bmc_network.gateway, int(config.bmc_network.subnet.rsplit("/", 1)[1]), config.dhcp.mtu))
    return [
        {"gateway": f"{gateway}/{prefix}", "dns": ",".join(dns_servers), "domainSearch": ",".join(domain_search), "mtu": str(mtu)}
        for gateway, prefix, mtu in entries
    ]


def join_image_name(image: str, nodeset: str) -> str:
    return f"{image}--{nodeset}"


def join_script_name(nodeset: str) -> str:
    return f"join-{nodeset}.sh"


def _interface(
    mac: str, ip: str, prefix: int, fqdn: str, *, bmc: bool, vlan: int | None, mtu: int | None, ifname: str
) -> dict[str, Any]:
    nic: dict[str, Any] = {
        "ifname": ifname,
        "mac": mac,
        "ip": f"{ip}/{prefix}",
        "fqdn": fqdn,
        "bmc": bmc,
        "vlan": str(vlan) if vlan is not None else "",
    }
    if mtu is not None:
        nic["mtu"] = mtu
    return nic


def host_record(
    host: Host,
    config: ProvisioningConfig,
    domain: str,
    boot_image: str,
    prefix: int | None = None,
    bmc_prefix: int | None = None,
) -> dict[str, Any]:
    """A host in Grendel's format. Without `prefix`, each address gets the prefix of its network; a given
    `prefix` also serves the BMC unless `bmc_prefix` is given (as in `_host_json`)."""
    if prefix is None:
        prefix = config.prefix_of(host.ip)
        if host.bmc is not None and bmc_prefix is None:
            bmc_prefix = config.prefix_of(host.bmc.ip, bmc=True)
    if bmc_prefix is None:
        bmc_prefix = prefix
    interfaces = [
        _interface(
            host.mac, host.ip, prefix, f"{host.name}.{domain}", bmc=False, vlan=host.vlan, mtu=host.mtu, ifname=host.ifname
        )
    ]
    if host.bmc is not None:
        interfaces.append(
            _interface(
                host.bmc.mac, host.bmc.ip, bmc_prefix, f"{host.name}-bmc.{domain}", bmc=True, vlan=None, mtu=None, ifname=""
            )
        )
    tags = list(host.tags) + ([f"{NODESET_TAG_PREFIX}{host.nodeset}"] if host.nodeset else [])
    tags += [f"{kind}:{value}" for kind, value in (("switch", host.switch), ("block", host.block)) if value]
    return {"name": host.name, "provision": host.provision, "boot_image": boot_image, "tags": tags, "interfaces": interfaces}


def render_inventory(config: ProvisioningConfig, domain: str, join_base_url: str | None) -> tuple[str, str]:
    """(hosts.json, images.json) in Grendel's formats.

    Hosts that join Slurm boot a per-nodeset variant of their image whose kernel command line
    carries `hpcforge.join=<url of the nodeset's join script>`; the image's `hpcforge-join`
    service fetches and runs it after boot.
    """
    images = {image.name: image for image in config.images}
    image_records: dict[str, dict[str, Any]] = {}
    hosts: list[str] = []
    for image in config.images:
        image_records[image.name] = _image_record(image, image.name, None)
    prefix = config.prefix_length
    # One network (the common case): one prefix; several, or BMCs apart: each address's own network.
    single = not config.subnets and config.bmc_network is None
    default_image = config.default_image or ""
    for host in config.hosts:
        base = images[host.image or default_image]
        boot = base.name
        # `base.joins_slurm and host.nodeset` is ProvisioningConfig.joins_slurm(host), without its lookups.
        if join_base_url is not None and host.nodeset is not None and base.joins_slurm:
            boot = join_image_name(base.name, host.nodeset)
            if boot not in image_records:
                image_records[boot] = _image_record(base, boot, f"{join_base_url}/{join_script_name(host.nodeset)}")
        if single:
            hosts.append(_host_json(host, domain, boot, prefix))
        else:
            bmc_prefix = config.prefix_of(host.bmc.ip, bmc=True) if host.bmc is not None else None
            hosts.append(_host_json(host, domain, boot, config.prefix_of(host.ip), bmc_prefix))
    return "[" + ",".join(hosts) + "]", json.dumps(list(image_records.values()), indent=1)


# What json.dumps writes for a string (ensure_ascii): the C escaper itself, without the encoder's per-call setup
# (for a list, a new iterencode closure each time: most of _host_json's cost at 100,000 hosts).
_dump = encode_basestring_ascii


def _host_json(host: Host, domain: str, boot_image: str, prefix: int, bmc_prefix: int | None = None) -> str:
    """`json.dumps(host_record(...), separators=(",", ":"))`, written directly (a test compares them):
    100,000 hosts without building 300,000 dicts. Host names, MACs, IPs and the domain are
    validated to characters JSON writes as they are; the free-form values go through the encoder."""
    tags = [*host.tags, f"{NODESET_TAG_PREFIX}{host.nodeset}"] if host.nodeset else host.tags
    ifname = _dump(host.ifname) if host.ifname else '""'
    vlan = host.vlan if host.vlan is not None else ""
    mtu = f',"mtu":{host.mtu}}}' if host.mtu is not None else "}"
    if host.switch is not None or host.block is not None:
        tags = [*tags, *([f"switch:{host.switch}"] if host.switch else ()), *([f"block:{host.block}"] if host.block else ())]
    nic = (
        f'{{"ifname":{ifname},"mac":"{host.mac}","ip":"{host.ip}/{prefix}",'
        f'"fqdn":"{host.name}.{domain}","bmc":false,"vlan":"{vlan}"{mtu}'
    )
    if host.bmc is not None:
        nic += (
            f',{{"ifname":"","mac":"{host.bmc.mac}","ip":"{host.bmc.ip}/{prefix if bmc_prefix is None else bmc_prefix}",'
            f'"fqdn":"{host.name}-bmc.{domain}","bmc":true,"vlan":""}}'
        )
    provision = "true" if host.provision else "false"
    return (
        f'{{"name":"{host.name}","provision":{provision},"boot_image":{_dump(boot_image)},'
        f'"tags":[{",".join(map(_dump, tags))}],"interfaces":[{nic}]}}'
    )


def _image_record(image: BootImage, name: str, join_url: str | None) -> dict[str, Any]:
    cmdline = image.cmdline
    if join_url is not None:
        cmdline = f"{cmdline} hpcforge.join={join_url}".strip()
    return {
        "name": name,
        "kernel": image.kernel,
        "initrd": list(image.initrd),
        "liveimg": image.liveimg or "",
        "cmdline": cmdline,
    }

"""Relations between values that each look fine alone: address plans, DNS names, resource sizes,
certificate timing and namespace ownership.

Called once from `PlatformConfig`'s cross-layer check; every problem names the key the user must
change (the second of two colliding keys, with the first one in the message).
"""

from __future__ import annotations

import ipaddress
import re
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ...ground.base import PathPart, ProblemCollector, go_duration_seconds, quantity_value

if TYPE_CHECKING:
    from ...layers.provisioning.config import ProvisioningConfig
    from ..model import PlatformModel

# Namespaces of the platform's own layers (components/layers/*.py, components/charts.py).
PLATFORM_NAMESPACES = {
    "kube-system": "the platform (sealed-secrets, Multus)",
    "argocd": "the GitOps layer (Argo CD)",
    "cert-manager": "the Certificates layer",
    "metallb-system": "the Network layer (MetalLB)",
    "traefik": "the Network layer (Traefik)",
    "site-dns": "the Network layer (site DNS)",
    "mariadb-system": "the Database layer (mariadb-operator)",
    "database": "the Database layer (MariaDB)",
    "directory": "the Directory layer (389ds)",
    "slinky": "the Slurm layer (slurm-operator)",
    "kueue-system": "the Batch layer (Kueue)",
    "appwrapper-system": "the Batch layer (AppWrapper)",
    "argo": "the DevOps layer (Argo Workflows)",
    "registry": "the DevOps layer (registry)",
    "monitoring": "the Observability layer (kube-prometheus-stack)",
    "gpu-operator": "the GPU layer (NVIDIA GPU Operator)",
    "nvidia-network-operator": "the RDMA layer (NVIDIA Network Operator)",
    "backups": "the Backups layer (key export)",
    "site-apps": "the GitOps layer (the app-of-apps root's Applications)",
}


def mysql_size_bytes(text: str) -> int:
    """Bytes of a MariaDB size option (`4096M`, `1G`, `65536`): K, M, G are powers of 1024."""
    factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    return int(text.rstrip("KMG")) * factor


def check_relations(cfg: PlatformModel, problems: ProblemCollector) -> None:
    _check_addresses(cfg, problems)
    _check_dns_names(cfg, problems)
    _check_sizes(cfg, problems)
    _check_certificates(cfg, problems)
    _check_namespaces(cfg, problems)
    _check_hostnames(cfg, problems)


# --- address plan ------------------------------------------------------------------------------------


def _service_addresses(cfg: PlatformModel) -> Iterator[tuple[list[PathPart], str, str]]:
    """(key, address, what it is) of every single address the site's services are reached at."""
    net = cfg.network
    if net.ingress.address:
        yield ["network", "ingress", "address"], net.ingress.address, "the ingress"
    if net.dns.enabled and net.dns.address:
        yield ["network", "dns", "address"], net.dns.address, "the site DNS service"
    if cfg.slurm.login.address:
        yield ["slurm", "login", "address"], cfg.slurm.login.address, "the login service"
    service = cfg.slurm.controller.service
    if service is not None and service.address:
        yield ["slurm", "controller", "service", "address"], service.address, "slurmctld's service"
    prov = cfg.provisioning
    if prov is not None and prov.enabled:
        yield ["provisioning", "address"], prov.grendel_ip, "Grendel's provisioning address"
        yield ["provisioning", "gateway"], prov.gateway, "the provisioning gateway"
    if cfg.devops is not None and re.fullmatch(r"[0-9.]+", cfg.devops.software.server):
        yield ["devops", "software", "server"], cfg.devops.software.server, "the software NFS server"
    for index, upstream in enumerate(net.dns.upstreams):
        yield ["network", "dns", "upstreams", index], upstream, "an upstream DNS server"


def _check_addresses(cfg: PlatformModel, problems: ProblemCollector) -> None:
    # Pairs that NetworkConfig and PlatformConfig already report (login/DNS against the ingress).
    reported = {("the ingress", "the site DNS service"), ("the ingress", "the login service"),
                ("the site DNS service", "the login service"),
                ("the provisioning gateway", "Grendel's provisioning address")}  # fmt: skip
    seen: dict[str, str] = {}
    for path, address, what in _service_addresses(cfg):
        owner = seen.get(address)
        if owner is not None and owner != what and (owner, what) not in reported:
            problems.add(path, f"{address} is already {owner}'s address; every service needs its own")
        seen.setdefault(address, what)
    prov = cfg.provisioning
    if prov is None or not prov.enabled:
        return
    if prov.gateway == prov.grendel_ip:
        problems.add(["provisioning", "gateway"], f"{prov.gateway} is Grendel's own address; the gateway is another host")
    # Each DHCP dynamic range (the main one and each extra subnet's) against the addresses it must not hand out.
    dynamic: list[tuple[list[PathPart], Any, list[tuple[str, str]]]] = [
        (
            ["provisioning", "dhcp", "range"],
            prov.dhcp.range,
            [(prov.gateway, "the gateway"), (prov.grendel_ip, "Grendel's own address")],
        )
    ]
    for index, extra in enumerate(prov.subnets):
        dynamic.append((["provisioning", "subnets", index, "range"], extra.range, [(extra.gateway, "the subnet's gateway")]))
    for path, dhcp_range, reserved in dynamic:
        if dhcp_range is None:
            continue
        first, last = ipaddress.IPv4Address(dhcp_range.start), ipaddress.IPv4Address(dhcp_range.end)
        for address, what in reserved:
            if first <= ipaddress.IPv4Address(address) <= last:
                problems.add(
                    path, f"{dhcp_range.start}-{dhcp_range.end} covers {what} {address}; DHCP would hand it to another machine"
                )
    services = {address: what for path, address, what in _service_addresses(cfg) if path[0] != "provisioning"}
    _check_host_addresses(prov, services, problems)


def _check_host_addresses(prov: ProvisioningConfig, services: dict[str, str], problems: ProblemCollector) -> None:
    """No host's address (its NIC's or BMC's) is a service's."""
    if services.keys().isdisjoint([host.ip for host in prov.hosts] + [host.bmc.ip for host in prov.hosts if host.bmc]):
        return  # no host address is a service's: the loop below would say nothing
    for index, host in enumerate(prov.hosts):
        addresses: list[tuple[str, str | None]] = [("ip", host.ip), ("bmc", host.bmc.ip if host.bmc else None)]
        for key, host_address in addresses:
            if host_address is not None and host_address in services:
                where: list[PathPart] = (
                    ["provisioning", "hosts", index, key] if key == "ip" else ["provisioning", "hosts", index, "bmc", "ip"]
                )
                problems.add(where, f"host {host.name!r}: {host_address} is already {services[host_address]}'s address")


# --- DNS names -------------------------------------------------------------------------------------------


def _check_dns_names(cfg: PlatformModel, problems: ProblemCollector) -> None:
    """The records hpcforge writes into the site zone (PlatformModel.dns_records) must not collide."""
    prov = cfg.provisioning
    if prov is None or not prov.enabled:
        return
    # Generated record name -> the host whose BMC it names ("" for Grendel's); the words only for a collision.
    generated: dict[str, str] = {"grendel": ""}
    generated.update((f"{host.name}-bmc", host.name) for host in prov.hosts if host.bmc is not None)
    names = {host.name for host in prov.hosts}
    if not names.isdisjoint(generated):
        for index, host in enumerate(prov.hosts):
            if host.name in generated:
                owner = generated[host.name]
                record = f"the BMC record of host {owner!r}" if owner else "Grendel's record"
                problems.add(
                    ["provisioning", "hosts", index, "name"],
                    f"host {host.name!r}: the name is already {record} in the site zone {cfg.domain}",
                )
    for zone_index, zone in enumerate(cfg.network.dns.zones):
        if zone.name != cfg.domain:
            continue
        for name in zone.hosts:
            if name in names or name in generated:
                problems.add(
                    ["network", "dns", "zones", zone_index, "hosts", name],
                    f"{name}.{zone.name} is also a record hpcforge makes from the provisioning inventory; rename one",
                )


# --- sizes -------------------------------------------------------------------------------------------------


def _check_sizes(cfg: PlatformModel, problems: ProblemCollector) -> None:
    db = cfg.database
    if quantity_value(db.memory_limit) < quantity_value(db.memory):
        problems.add(["database", "memoryLimit"], f"{db.memory_limit} is below the memory request {db.memory}")
    pool = mysql_size_bytes(db.innodb_buffer_pool_size)
    if quantity_value(db.memory_limit) <= pool:
        problems.add(
            ["database", "memoryLimit"],
            f"{db.memory_limit} is not above innodbBufferPoolSize {db.innodb_buffer_pool_size}: MariaDB would be "
            "OOM-killed once the buffer pool fills; raise the limit or shrink the pool",
        )
    login = cfg.slurm.login
    if quantity_value(login.memory_limit) < quantity_value(login.memory):
        problems.add(["slurm", "login", "memoryLimit"], f"{login.memory_limit} is below the memory request {login.memory}")


# --- certificates -------------------------------------------------------------------------------------------


def _check_certificates(cfg: PlatformModel, problems: ProblemCollector) -> None:
    tls = cfg.tls
    duration = go_duration_seconds(tls.certificate_duration)
    renew = go_duration_seconds(tls.renew_before)
    # cert-manager v1.21.1's webhook (internal/apis/certmanager/validation/certificate.go ValidateDuration)
    # refuses a Certificate whose duration is under 1h, whose renewBefore is under 5m, or whose renewBefore
    # is not shorter than its duration (policies/admission/certmanager/certificate.py validate_duration).
    if duration < 3600:
        problems.add(["tls", "certificateDuration"], f"{tls.certificate_duration} is shorter than cert-manager's minimum of 1h")
    if renew < 300:
        problems.add(
            ["tls", "renewBefore"],
            f"{tls.renew_before} is shorter than cert-manager's minimum of 5m: cert-manager refuses the certificates",
        )
    if renew >= duration:
        problems.add(
            ["tls", "renewBefore"],
            f"{tls.renew_before} is not shorter than certificateDuration {tls.certificate_duration}: "
            "cert-manager refuses the certificates",
        )
    if go_duration_seconds(tls.ca.duration) < duration:
        problems.add(
            ["tls", "ca", "duration"],
            f"{tls.ca.duration} is shorter than the certificates it issues ({tls.certificate_duration})",
        )


# --- namespaces ------------------------------------------------------------------------------------------------


def _check_namespaces(cfg: PlatformModel, problems: ProblemCollector) -> None:
    """One owner per namespace: a layer's namespace is never another layer's or a site app's."""
    owners: dict[str, str] = dict(PLATFORM_NAMESPACES)
    layers: list[tuple[list[PathPart], str, str]] = [(["slurm", "namespace"], cfg.slurm.namespace, "the Slurm layer")]
    if cfg.provisioning is not None:
        layers.append((["provisioning", "namespace"], cfg.provisioning.namespace, "the Provisioning layer (Grendel)"))
    if cfg.devops is not None:
        layers.append((["devops", "namespace"], cfg.devops.namespace, "the DevOps layer"))
    for path, namespace, owner in layers:
        if namespace in owners:
            problems.add(path, f"namespace {namespace!r} already belongs to {owners[namespace]}; pick another")
        else:
            owners[namespace] = owner
    teams = {team.namespace: f"the Batch layer (team {team.namespace})" for team in (cfg.batch.teams if cfg.batch else ())}
    for index, app in enumerate(cfg.gitops.apps):
        taken_by = owners.get(app.namespace) or teams.get(app.namespace)
        if taken_by is not None:
            problems.add(
                ["gitops", "apps", index, "namespace"],
                f"app {app.name!r}: namespace {app.namespace!r} belongs to {taken_by}; "
                "a site app deploys into a namespace of its own",
            )
    if cfg.batch is not None and cfg.batch.sample_namespace and cfg.batch.sample_namespace in owners:
        problems.add(
            ["batch", "sampleNamespace"],
            f"namespace {cfg.batch.sample_namespace!r} belongs to {owners[cfg.batch.sample_namespace]}; pick another",
        )


# --- Ingress host names -------------------------------------------------------------------------------------


_MAY_HOLD_HOSTNAME: dict[type, bool] = {}


def _model_classes(annotation: Any) -> set[type] | None:  # noqa: PLR0911 (one return per kind of annotation)
    """The model classes (with their subclasses) a field's annotation admits; None when it cannot tell."""
    if annotation is Any or annotation is object or isinstance(annotation, typing.TypeVar | typing.ForwardRef | str):
        return None
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return set()
    if origin is typing.Annotated:
        return _model_classes(typing.get_args(annotation)[0])
    if origin is None:
        if annotation is None or annotation is Ellipsis:
            return set()
        if not isinstance(annotation, type):
            return None
        if not issubclass(annotation, BaseModel):
            return set()
        found: set[type] = set()
        todo: list[type] = [annotation]
        while todo:
            cls = todo.pop()
            if cls not in found:
                found.add(cls)
                todo += cls.__subclasses__()
        return found
    found = set()
    for arg in typing.get_args(annotation):
        inner = _model_classes(arg)
        if inner is None:
            return None
        found |= inner
    return found


def _may_hold_hostname(cls: type) -> bool:
    """Whether a model of this class can hold a `hostname` field at any depth (by its annotations;
    True when unsure), so that `_hostnames` skips inventories of 100,000 hosts and users."""
    known = _MAY_HOLD_HOSTNAME.get(cls)
    if known is not None:
        return known
    _MAY_HOLD_HOSTNAME[cls] = True  # while deciding (a model that contains itself): assume it may
    result = False
    for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
        if (info.alias or name) == "hostname":
            result = True
            break
        classes = _model_classes(info.annotation)
        if classes is None or any(_may_hold_hostname(inner) for inner in classes):
            result = True
            break
    _MAY_HOLD_HOSTNAME[cls] = result
    return result


def _hostnames(model: Any, path: list[PathPart]) -> Iterator[tuple[list[PathPart], str]]:
    if isinstance(model, BaseModel):
        if not _may_hold_hostname(type(model)):
            return
        for name, info in type(model).model_fields.items():
            value = getattr(model, name)
            key = info.alias or name
            if key == "hostname" and isinstance(value, str):
                yield [*path, key], value
            elif isinstance(value, BaseModel | tuple):
                yield from _hostnames(value, [*path, key])
    elif isinstance(model, tuple):
        for index, item in enumerate(model):
            if isinstance(item, tuple) or (isinstance(item, BaseModel) and _may_hold_hostname(type(item))):
                yield from _hostnames(item, [*path, index])


def _check_hostnames(cfg: PlatformModel, problems: ProblemCollector) -> None:
    """One host name, one Ingress: Traefik routes a host to one backend only.

    The host names hpcforge picks itself (components/platform.py: `argocd.<domain>` when
    gitops.argocd.hostname is null, `ldap.<domain>` when the directory is exposed) count too.
    """
    seen: dict[str, list[PathPart]] = {}
    if cfg.gitops.argocd.hostname is None:
        seen[f"argocd.{cfg.domain}"] = ["gitops", "argocd", "hostname (default)"]
    if cfg.directory.expose:
        seen[f"ldap.{cfg.domain}"] = ["directory", "expose (ldap.<domain>)"]
    for path, hostname in _hostnames(cfg, []):
        if hostname in seen:
            first = ".".join(str(p) for p in seen[hostname])
            problems.add(path, f"{hostname} is already the host name of hpcforge:{first}; each Ingress needs its own")
        seen.setdefault(hostname, path)

"""The base documents a case mutates (the stack files and a generated site, with their inventories) and the
oracle's rules: which keys hold names, which may hold line breaks or negative numbers.
"""

from __future__ import annotations

import re
from typing import Any

from components.ground.yamlv3 import load_document
from components.paths import PROJECT_ROOT

from .cases import PathT, render_path


def base_config(stack: str) -> dict[str, Any]:
    """A stack's config with its inventories (hosts, users, groups) inline, so they mutate like config;
    `apply` writes them back to inventory files."""
    if stack == "site":
        from ..sitegen import generate_site

        return generate_site(hosts=20, nodesets=6, users=10)
    from components.site.inventory import KINDS, read_yaml_file

    document = load_document((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text())
    config: dict[str, Any] = document["config"]
    for kind in KINDS:
        section = config.get(f"hpcforge:{kind.section}")
        if isinstance(section, dict) and "inventory" in section:
            inventory, _ = read_yaml_file(PROJECT_ROOT / section.pop("inventory")["file"], "inventory")
            section.update(inventory)
    return config


_BASES: dict[str, dict[str, Any]] = {}


def cached_base(stack: str) -> dict[str, Any]:
    if stack not in _BASES:
        _BASES[stack] = base_config(stack)
    return _BASES[stack]


def leaves(value: Any, path: PathT = ()) -> list[tuple[PathT, Any]]:
    found: list[tuple[PathT, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found += leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:3]):  # the first items stand for the rest (inventories are long)
            found += leaves(item, (*path, index))
    else:
        found.append((path, value))
    return found


def containers(value: Any, path: PathT = ()) -> list[tuple[PathT, Any]]:
    found: list[tuple[PathT, Any]] = []
    if isinstance(value, dict):
        found.append((path, value))
        for key, item in value.items():
            found += containers(item, (*path, key))
    elif isinstance(value, list):
        found.append((path, value))
        for index, item in enumerate(value[:2]):
            found += containers(item, (*path, index))
    return found


# Keys whose values are names that Kubernetes, Slurm, Linux or DNS restrict: a space, an upper-case
# letter, '=' or a leading '-' is never accepted by the consumer.
NAME_KEYS = {
    "name", "namespace", "pool", "nodeset", "nodesets", "attachment", "master", "storageClass", "node",
    "clusterName", "primaryGroup", "groups", "flavor", "clusterQueue", "sampleNamespace", "defaultImage",
    "lookupUser", "testPartition", "interfaces", "features", "domain", "hostname", "qos",
}  # fmt: skip
# Names that may hold upper-case letters: Linux interface names, Slurm node features (case-sensitive
# words in slurm.conf `Features=`, e.g. HighMem).
CASE_KEYS = {"master", "interfaces", "features"}
# Strings that may legitimately hold a line break: command arguments and inline scripts.
MULTILINE_KEYS = {"command", "inline", "args"}
# Integer keys whose consumer takes negative values.
SIGNED_KEYS = {"value"}
IPV4 = re.compile(r"^(\d{1,3}\.){3}\d{1,3}$")
QUANTITY_KEYS = {"cpu", "memory", "memoryLimit", "size", "cpuPerNode", "memoryPerNode"}


def key_of(path: PathT) -> str:
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return ""


def single_owner(path: PathT) -> bool:
    """Addresses that belong to exactly one machine or service: a second user of one is always wrong.

    DNS records and upstream resolvers may name any address (two names for one host, a gateway that
    also resolves), and a DHCP range's ends (the main range's and each extra subnet's) are judged by the
    range rules (a range of one address is a range), so those are `either`.
    """
    text = render_path(path)
    return not any(part in text for part in ("dns.zones", "dns.upstreams", "range.start", "range.end"))


def namespace_kind(path: PathT) -> str:
    """layer (a layer's own namespace), app (a site app's), or other (team, sample, attachment)."""
    text = render_path(path)
    if text in ("hpcforge:slurm.namespace", "hpcforge:provisioning.namespace", "hpcforge:devops.namespace"):
        return "layer"
    return "app" if text.startswith("hpcforge:gitops.apps") else "other"


def is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


INVENTORY_KEYS = {("hpcforge:provisioning", "hosts"): "provisioning", ("hpcforge:directory", "users"): "directory",
                  ("hpcforge:directory", "groups"): "directory"}  # fmt: skip
"""Lists that `apply` writes to inventory files (YAML 1.2, read by yaml-rs), not to the stack file."""


def in_inventory(path: PathT) -> bool:
    return tuple(path[:2]) in INVENTORY_KEYS

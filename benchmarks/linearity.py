"""Whether validation grows linearly with each list-valued section: `python -m benchmarks.linearity [--scale F]`.

For each section of the stack config that holds a list (MetalLB pools and their addresses, DNS zones and records,
the site's ranges, hosts, provisioning subnets and boot images, users, groups, Slurm nodesets, partitions, accounts,
switches and reservations, GitOps apps, batch teams, NFS exports, alert receivers, node pools, BGP peers), it writes
a prod-like site (benchmarks/sitegen.py) with N entries in that section, then with 10 N, and times
`load_config` (reading the inventory files and validating the whole config; the fastest of --repeat runs, Python's
garbage collector off as in the program; CPU time, as the machine may be shared). It prints, per section, the two times, their ratio, and the ratio of what
the section adds over the site without it (t(10 N) - t0) / (t(N) - t0): linear means at most 12x (10x and noise).
Every config must be accepted, at both sizes (a refused one is reported, not timed).

A benchmark, not a test: it reports, it does not assert (tests/benchmarks/test_linearity.py runs it at small sizes).
"""

from __future__ import annotations

import argparse
import copy
import gc
import ipaddress
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .sitegen import generate_site, write_config

LINEAR = 12.0
"""Growing a section 10x may cost at most this much more (10x, and noise)."""
NOISE_SECONDS = 0.02
"""Below this added time at N, the marginal ratio is noise: the verdict says to run it at a larger --scale."""

Config = dict[str, Any]


def _address(base: str, index: int) -> str:
    return str(ipaddress.IPv4Address(int(ipaddress.IPv4Address(base)) + index))


def _grow_addresses(config: Config, n: int) -> None:
    config["hpcforge:network"]["pools"].append({"name": "floating", "addresses": [_address("10.30.0.0", i) for i in range(n)]})


def _grow_pools(config: Config, n: int) -> None:
    config["hpcforge:network"]["pools"] += [{"name": f"float-{i}", "addresses": [_address("10.31.0.0", i)]} for i in range(n)]


def _grow_zone_records(config: Config, n: int) -> None:
    zone = config["hpcforge:network"]["dns"]["zones"][0]
    zone["hosts"] = {**zone.get("hosts", {}), **{f"rec{i}": _address("10.32.0.0", i) for i in range(n)}}


def _grow_zones(config: Config, n: int) -> None:
    config["hpcforge:network"]["dns"]["zones"] += [{"name": f"zone{i}.example.net"} for i in range(n)]


def _grow_site_ranges(config: Config, n: int) -> None:
    config["hpcforge:network"]["siteRanges"] += [f"{_address('10.128.0.0', 256 * i)}/24" for i in range(n)]


def _grow_bgp_peers(config: Config, n: int) -> None:
    config["hpcforge:network"]["advertisement"] = {
        "mode": "bgp",
        "peers": [
            {"name": f"router-{i}", "address": _address("10.33.0.0", i), "peerAsn": 65000, "myAsn": 64512} for i in range(n)
        ],
    }


def _grow_subnets(config: Config, n: int) -> None:
    config["hpcforge:provisioning"]["subnets"] = [
        {
            "subnet": f"{_address('172.16.0.0', 256 * i)}/24",
            "gateway": _address("172.16.0.1", 256 * i),
            "range": {"start": _address("172.16.0.200", 256 * i), "end": _address("172.16.0.250", 256 * i)},
        }
        for i in range(n)
    ]


def _grow_images(config: Config, n: int) -> None:
    images = config["hpcforge:provisioning"]["images"]
    images += [{**images[0], "name": f"image-{i}"} for i in range(n)]


def _grow_groups(config: Config, n: int) -> None:
    config["hpcforge:directory"]["groups"] += [{"name": f"extra{i}", "gidNumber": 40000 + i} for i in range(n)]


def _grow_partitions(config: Config, n: int) -> None:
    config["hpcforge:slurm"]["partitions"] += [{"name": f"extra-{i}", "nodesets": ["cpu"]} for i in range(n)]


def _grow_accounts(config: Config, n: int) -> None:
    config["hpcforge:slurm"]["accounts"]["accounts"] += [{"name": f"extra{i}", "parent": "science"} for i in range(n)]


def _grow_switches(config: Config, n: int) -> None:
    topology = config["hpcforge:slurm"]["topology"]
    spine = next(switch for switch in topology["switches"] if switch["name"] == "spine")
    spine["switches"] = [*spine["switches"], *(f"leaf{i}" for i in range(n))]
    topology["switches"] += [{"name": f"leaf{i}", "nodes": [f"leaf{i}-n[01-40]"]} for i in range(n)]


def _grow_reservations(config: Config, n: int) -> None:
    config["hpcforge:slurm"]["reservations"] += [
        {"name": f"maint-{i}", "startTime": "2027-02-01T06:00:00", "duration": "1:00:00"} for i in range(n)
    ]


def _grow_apps(config: Config, n: int) -> None:
    apps = config["hpcforge:gitops"]["apps"]
    apps += [{**apps[0], "name": f"app-{i}", "namespace": f"app-{i}", "path": f"apps/{i}"} for i in range(n)]


def _grow_teams(config: Config, n: int) -> None:
    config["hpcforge:batch"]["teams"] += [{"namespace": f"team-x{i}", "clusterQueue": "research"} for i in range(n)]


def _grow_exports(config: Config, n: int) -> None:
    exports = config["hpcforge:storage"]["nfsExports"]
    exports += [
        {"name": f"extra{i}", "server": "nfs01.hpc.example.org", "export": f"/export/extra{i}", "mountPath": f"/extra/{i}"}
        for i in range(n)
    ]


def _grow_receivers(config: Config, n: int) -> None:
    receivers = config["hpcforge:observability"]["receivers"]
    receivers += [{**receivers[0], "name": f"team-{i}"} for i in range(n)]


def _grow_node_pools(config: Config, n: int) -> None:
    config["hpcforge:nodePools"] += [
        {
            "name": f"extra-{i}",
            "labels": {"hpcforge.io/pool": f"extra-{i}"},
            "nodes": 1,
            "cpuPerNode": "8",
            "memoryPerNode": "32Gi",
        }
        for i in range(n)
    ]


@dataclass(frozen=True)
class Section:
    label: str
    n: int
    """Entries at the smaller size (10 n at the larger), at --scale 1."""
    grow: Callable[[Config, int], None] | None = None
    """Adds n entries to a prod-like site (None: the site generator's own axis, `site`)."""
    site: str = ""
    """`hosts`, `users` or `nodesets`: generate the site with n of them instead."""


SECTIONS = (
    Section("network.pools[].addresses", 300, _grow_addresses),
    Section("network.pools", 100, _grow_pools),
    Section("network.dns.zones[].hosts", 1000, _grow_zone_records),
    Section("network.dns.zones", 100, _grow_zones),
    Section("network.siteRanges", 100, _grow_site_ranges),
    Section("network.advertisement.peers", 50, _grow_bgp_peers),
    Section("provisioning.hosts", 1000, site="hosts"),
    Section("provisioning.subnets", 50, _grow_subnets),
    Section("provisioning.images", 100, _grow_images),
    Section("directory.users", 3000, site="users"),
    Section("directory.groups", 1000, _grow_groups),
    Section("slurm.nodesets", 50, site="nodesets"),
    Section("slurm.partitions", 100, _grow_partitions),
    Section("slurm.accounts.accounts", 300, _grow_accounts),
    Section("slurm.topology.switches", 300, _grow_switches),
    Section("slurm.reservations", 100, _grow_reservations),
    Section("gitops.apps", 100, _grow_apps),
    Section("batch.teams", 100, _grow_teams),
    Section("storage.nfsExports", 100, _grow_exports),
    Section("observability.receivers", 100, _grow_receivers),
    Section("nodePools", 100, _grow_node_pools),
)

BASE_SITE = {"hosts": 100, "users": 100, "nodesets": 4}


def site_config(section: Section, n: int) -> Config:
    """The prod-like site with `n` entries in the section."""
    sizes = dict(BASE_SITE)
    if section.site:
        sizes[section.site] = max(n, 1) if section.site != "nodesets" else 4 + n
    config = generate_site(hosts=sizes["hosts"], nodesets=sizes["nodesets"], users=sizes["users"])
    if section.grow is not None:
        section.grow(config, n)
    return config


def time_load(config: Config, folder: Path, repeat: int) -> tuple[float, str | None]:
    """(fastest `load_config` in seconds, the first problem when refused) of a config written with its inventories."""
    from components.site.loader import ConfigError, load_config
    from offline.program.stackfile import read_stack_file

    path = write_config(folder / "Pulumi.linearity.yaml", config)
    raw = dict(read_stack_file(path, name="linearity").config)
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        started = time.process_time()
        try:
            load_config(raw, folder, "linearity")
        except ConfigError as error:
            return 0.0, error.messages[0]
        finally:
            gc.enable()
        best = min(best, time.process_time() - started)
    return best, None


@dataclass(frozen=True)
class Row:
    label: str
    n: int
    small: float
    large: float
    base: float
    refused: str | None = None

    @property
    def ratio(self) -> float:
        return self.large / self.small if self.small else float("inf")

    @property
    def added_ratio(self) -> float:
        added = self.small - self.base
        return (self.large - self.base) / added if added > 0 else float("inf")

    @property
    def verdict(self) -> str:
        if self.refused:
            return "REFUSED"
        if self.small - self.base < NOISE_SECONDS:
            return "linear" if self.large - self.base < LINEAR * NOISE_SECONDS else "too small to tell (raise --scale)"
        return "linear" if self.added_ratio <= LINEAR else "NOT LINEAR"


def measure(section: Section, scale: float, repeat: int, base: float, folder: Path) -> Row:
    n = max(1, round(section.n * scale))
    small, refused = time_load(site_config(section, n), folder, repeat)
    if refused is not None:
        return Row(section.label, n, 0.0, 0.0, base, f"at {n}: {refused}")
    large, refused = time_load(site_config(section, 10 * n), folder, repeat)
    return Row(section.label, n, small, large, base, None if refused is None else f"at {10 * n}: {refused}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.linearity", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every section's N (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (the fastest counts)")
    parser.add_argument("--only", action="append", default=[], help="run only these sections (labels)")
    args = parser.parse_args(argv)
    sections = [s for s in SECTIONS if not args.only or s.label in args.only]
    rows: list[Row] = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="hpcforge-linearity-") as tmp:
        folder = Path(tmp)
        time_load(
            copy.deepcopy(generate_site(hosts=BASE_SITE["hosts"], nodesets=BASE_SITE["nodesets"], users=BASE_SITE["users"])),
            folder,
            1,
        )  # imports, caches
        base, refused = time_load(
            copy.deepcopy(generate_site(hosts=BASE_SITE["hosts"], nodesets=BASE_SITE["nodesets"], users=BASE_SITE["users"])),
            folder,
            args.repeat,
        )
        if refused is not None:
            print(f"the base site is refused: {refused}", file=sys.stderr)
            return 2
        for section in sections:
            rows.append(measure(section, args.scale, args.repeat, base, folder))
            print(f"measured {section.label}", file=sys.stderr)
    linear = sum(row.verdict == "linear" for row in rows)
    print(f"{linear} of {len(rows)} sections linear (10x the entries costs at most {LINEAR:.0f}x the time they add)\n")
    header = f"{'section':<30}{'N':>7}{'t(N) s':>9}{'t(10N) s':>10}{'ratio':>8}{'added':>8}  verdict"
    print(header)
    print("-" * len(header))
    for row in rows:
        if row.refused:
            print(f"{row.label:<30}{row.n:>7}{'':>35}  REFUSED {row.refused[:200]}")
            continue
        print(
            f"{row.label:<30}{row.n:>7}{row.small:>9.3f}{row.large:>10.3f}{row.ratio:>7.1f}x{row.added_ratio:>7.1f}x  {row.verdict}"
        )
    print(
        f"\n(t0, the site without the added entries: {base:.3f} s; ratio: t(10N)/t(N); added: (t(10N)-t0)/(t(N)-t0); "
        f"fastest of {args.repeat} runs; load average {load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `--query-gpu` / `--query-compute-apps` rows a quoted `nvidia-smi -q` implies, for the fixtures whose `[q]` is a
published capture and whose `[gpus]` / `[apps]` rows are derived from it (their headers say so; the tests compare
the committed rows with what this module reads from `[q]`).

`nvidia-smi -q` prints one block per GPU, headed `GPU <PCI bus id>`, in nvidia-smi's index order; below it
`Key : Value` lines, nested four spaces per level under section lines (`ECC Errors`, `Volatile`, ...). What is read:

- index: the block's place; name: `Product Name`; pci.bus_id: the block's header;
- memory.used: `FB Memory Usage` / `Used`, without its ` MiB` (what `nounits` prints);
- ecc.errors.uncorrected.volatile.total: the sum of `ECC Errors` / `Volatile` entries whose name has
  `Uncorrectable` (SRAM parity, SRAM SEC-DED, DRAM); `[N/A]` when none is a number (ECC disabled);
- retired_pages.pending: `Retired Pages` / `Pending Page Blacklist`, `[N/A]` for `N/A`;
- compute apps: each `Process ID` under `Processes`, with its `Name` and `Used GPU Memory` (without ` MiB`).

That the CSV prints these very numbers is an assumption (NVIDIA documents the fields, not this equivalence);
`[N/A]` is how the published CSV captures print a value `-q` shows as `N/A`.
"""

from __future__ import annotations

import re

_GPU = re.compile(r"^GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)$")
GPU_FIELDS = ["index", "name", "pci.bus_id", "memory.used", "ecc.errors.uncorrected.volatile.total", "retired_pages.pending"]
APP_FIELDS = ["gpu_bus_id", "pid", "process_name", "used_memory"]


def blocks(q: str) -> list[tuple[str, list[tuple[tuple[str, ...], str]]]]:
    """Each GPU's bus id and its `(section path + key, value)` entries, in the order printed."""
    found: list[tuple[str, list[tuple[tuple[str, ...], str]]]] = []
    path: list[str] = []
    for line in q.splitlines():
        header = _GPU.match(line)
        if header:
            found.append((header[1], []))
            path = []
            continue
        if not found or not line.startswith("    ") or not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 4 - 1
        key, colon, value = line.strip().partition(":")
        del path[depth:]
        if colon:
            found[-1][1].append(((*path, key.strip()), value.strip()))
        path.append(key.strip())
    return found


def _value(entries: list[tuple[tuple[str, ...], str]], *path: str) -> str:
    values = [value for key, value in entries if key == path]
    if len(values) != 1:
        raise ValueError(f"{' / '.join(path)}: {len(values)} values")
    return values[0]


def _csv(value: str) -> str:
    return "[N/A]" if value == "N/A" else value


def _mib(value: str) -> str:
    if not value.endswith(" MiB"):
        raise ValueError(f"not a MiB value: {value!r}")
    return value.removesuffix(" MiB")


def gpu_rows(q: str) -> list[dict[str, str]]:
    rows = []
    for index, (bus, entries) in enumerate(blocks(q)):
        uncorrectable = [v for k, v in entries if k[:2] == ("ECC Errors", "Volatile") and "Uncorrectable" in k[-1]]
        counts = [int(v) for v in uncorrectable if v.isdigit()]
        rows.append(
            {
                "index": str(index),
                "name": _value(entries, "Product Name"),
                "pci.bus_id": bus,
                "memory.used": _mib(_value(entries, "FB Memory Usage", "Used")),
                "ecc.errors.uncorrected.volatile.total": str(sum(counts)) if counts else "[N/A]",
                "retired_pages.pending": _csv(_value(entries, "Retired Pages", "Pending Page Blacklist")),
            }
        )
    return rows


def app_rows(q: str) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for bus, entries in blocks(q):
        for key, value in entries:
            if key == ("Processes", "Process ID"):
                rows.append({"gpu_bus_id": bus, "pid": value})
            elif key[:2] == ("Processes", "Process ID") and key[2:] == ("Name",):
                rows[-1]["process_name"] = value
            elif key[:2] == ("Processes", "Process ID") and key[2:] == ("Used GPU Memory",):
                rows[-1]["used_memory"] = _mib(value)
    return rows


def csv_section(name: str, fields: list[str], rows: list[dict[str, str]]) -> str:
    """A fixture's `[gpus]` / `[apps]` section: the field names, then one line per row (`, ` between values)."""
    return "".join(f"{line}\n" for line in [f"[{name}]", ", ".join(fields), *(", ".join(r[f] for f in fields) for r in rows)])


def fixture(provenance: str, q: str) -> str:
    """A quoted fixture: PROVENANCE (its `#` lines), the derived `[gpus]` and `[apps]`, then `[q]` and Q unchanged."""
    return provenance + csv_section("gpus", GPU_FIELDS, gpu_rows(q)) + csv_section("apps", APP_FIELDS, app_rows(q)) + "[q]\n" + q


if __name__ == "__main__":
    # python tests/fakes/smi_q.py PROVENANCE Q > FIXTURE: PROVENANCE holds the header's `#` lines, Q the quoted
    # `nvidia-smi -q` output (e.g. `git show COMMIT:PATH > Q` in a clone of the source). Bytes in, bytes out.
    import sys

    with open(sys.argv[1], encoding="utf-8", newline="") as head, open(sys.argv[2], encoding="utf-8", newline="") as body:
        sys.stdout.write(fixture(head.read(), body.read()))

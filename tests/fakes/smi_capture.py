"""Reading nvidia-smi captures in the format of utkuozdemir/nvidia_gpu_exporter (internal/captures/collect.sh).

That collector runs read-only nvidia-smi commands on a real GPU machine and writes one file: a header, then one
section per command, each written as (collect.sh `section()`):

    \\n\\n
    ################################################################################   (80 '#')
    # <label>                        e.g. "idle :: query (-q)"
    # $ nvidia-smi <args>            (absent for the derived field list; a few sections add more "# " lines)
    ################################################################################
    <the command's stdout and stderr, as printed>
    [\\n# (exit code: N)\\n            only when the command failed]

The fixtures under tests/fixtures/nvidia-smi/captures/ are such files with some sections left out and every kept
section byte for byte (their README says which). This module finds the sections and answers what the fake
nvidia-smi needs from them: the valid query fields (from the `--help-query-*` text nvidia-smi printed) and the
recorded CSV tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RULE = "#" * 80
_HEADER = re.compile(r"^" + RULE + r"\n# (?P<label>[^\n]*)\n(?P<meta>(?:# [^\n]*\n)*)" + RULE + r"\n", re.M)
_EXIT = re.compile(r"\n# \(exit code: (?P<code>[0-9]+)\)\n$")
# A field in `--help-query-*`: a line of quoted names ("pci.bus_id" or "gpu_bus_id") after an empty line.
_FIELD_LINE = re.compile(r'^"[^"]+"(?: or "[^"]+")*$')
_UNIT = re.compile(r"^(?P<name>.*?) \[(?P<unit>[^\]]+)\]$")


@dataclass(frozen=True)
class Section:
    label: str
    command: str | None
    output: str
    exit_code: int


def sections(text: str) -> dict[str, Section]:
    """The capture's sections by label ("capabilities :: help-query-gpu", "idle :: query (-q)", ...)."""
    found: dict[str, Section] = {}
    headers = list(_HEADER.finditer(text))
    for number, header in enumerate(headers):
        end = headers[number + 1].start() if number + 1 < len(headers) else len(text)
        body = text[header.end() : end]
        if number + 1 < len(headers):
            if not body.endswith("\n\n"):
                raise ValueError(f"section {header['label']!r} does not end with the collector's two newlines")
            body = body[:-2]
        exit_code = 0
        failed = _EXIT.search(body)
        if failed:
            exit_code = int(failed["code"])
            body = body[: failed.start()] + "\n"
        commands = [line[4:] for line in header["meta"].splitlines() if line.startswith("# $ ")]
        found[header["label"]] = Section(header["label"], commands[0] if commands else None, body, exit_code)
    return found


def query_fields(help_text: str) -> dict[str, str]:
    """Every field name a `--help-query-*` text lists, mapped to the first name of its line (the one nvidia-smi's
    CSV header prints): {"pci.bus_id": "pci.bus_id", "gpu_bus_id": "pci.bus_id", ...}."""
    names: dict[str, str] = {}
    previous_blank = False
    for line in help_text.splitlines():
        if previous_blank and _FIELD_LINE.match(line):
            quoted = re.findall(r'"([^"]+)"', line)
            for name in quoted:
                names.setdefault(name, quoted[0])
        previous_blank = not line.strip()
    return names


@dataclass(frozen=True)
class Table:
    """A recorded `--format=csv` answer: column names (without units), their units, and the rows' values."""

    columns: list[str]
    units: dict[str, str]
    rows: list[list[str]]


def csv_table(output: str) -> Table:
    lines = [line for line in output.splitlines() if line.strip()]
    columns: list[str] = []
    units: dict[str, str] = {}
    for cell in lines[0].split(", "):
        match = _UNIT.match(cell.strip())
        name = match["name"] if match else cell.strip()
        columns.append(name)
        if match:
            units[name] = match["unit"]
    rows = []
    for line in lines[1:]:
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(columns):
            raise ValueError(f"a recorded CSV row has {len(values)} values for {len(columns)} columns: {line[:80]}")
        rows.append(values)
    return Table(columns, units, rows)


def without_unit(value: str, unit: str | None) -> str:
    """`--format=csv,nounits`: nvidia-smi's -h says "nounits - don't print units for numerical values"; a value
    recorded as "19818 MiB" under "memory.used [MiB]" prints as "19818". Anything else ([N/A], ...) is unchanged."""
    if unit and value.endswith(" " + unit):
        return value[: -len(unit) - 1]
    return value


# What the fixtures keep of a capture: the collector's header, the version, the help texts the fake reads field
# names from, the GPU list, and per state (idle, then under load) `-q`, the `--query-gpu` CSV and the
# `--query-compute-apps` CSV.
KEPT = (
    "nvidia_gpu_exporter GPU capture",
    "capabilities :: version",
    "capabilities :: help-query-gpu",
    "capabilities :: help-query-compute-apps",
    "capabilities :: list (-L)",
    *(
        f"{state} :: {what}"
        for state in ("idle", "load")
        for what in ("query (-q)", "query-gpu (csv, what the exporter parses)", "query-compute-apps (per-process)")
    ),
)
END = "\n\n" + RULE + "\n# end of excerpt\n" + RULE + "\n"


def kept_labels(labels: set[str], kept: tuple[str, ...] = KEPT) -> tuple[str, ...]:
    """KEPT, less the load state's sections where the capture has none (the collector's "load: none")."""
    if any(label.startswith("load :: ") for label in labels):
        return kept
    return tuple(label for label in kept if not label.startswith("load :: "))


def excerpt(text: str, provenance: str, kept: tuple[str, ...] = KEPT) -> str:
    """PROVENANCE (comment lines), then the capture's sections named in KEPT exactly as they are in TEXT (each with
    the two newlines the collector writes after it), then an end marker, so the last kept section ends like the
    others. The left-out sections are listed in the provenance by the caller."""
    headers = list(_HEADER.finditer(text))
    labels = {header["label"] for header in headers}
    kept = kept_labels(labels, kept)
    missing = set(kept) - labels
    if missing:
        raise ValueError(f"the capture has no section {sorted(missing)}")
    if any(not line.startswith("# ") for line in provenance.splitlines()):
        raise ValueError("every provenance line starts with '# '")
    chunks = []
    for number, header in enumerate(headers):
        if header["label"] in kept:
            end = headers[number + 1].start() if number + 1 < len(headers) else len(text)
            chunks.append(text[header.start() : end].removesuffix("\n\n"))
    return provenance.rstrip("\n") + "\n" + "\n\n".join(chunks) + END


def left_out(text: str, kept: tuple[str, ...] = KEPT) -> list[str]:
    return [header["label"] for header in _HEADER.finditer(text) if header["label"] not in kept]


if __name__ == "__main__":
    # python tests/fakes/smi_capture.py CAPTURE PROVENANCE_FILE > FIXTURE (see tests/fixtures/nvidia-smi/README.md, "captures/")
    import sys

    with open(sys.argv[1], encoding="utf-8", newline="") as source, open(sys.argv[2], encoding="utf-8") as note:
        capture = source.read()
        header = note.read().rstrip("\n") + "\n# left out: " + "; ".join(left_out(capture)) + "\n"
    sys.stdout.write(excerpt(capture, header))

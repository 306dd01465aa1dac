"""What loading the config costs with big inventory files: `python -m benchmarks.inventory_load STACK_FILE [--repeat N]`.

STACK_FILE is a stack generated with its inventory files, e.g.
`python -m benchmarks.scale --generate /tmp/site/Pulumi.site-100k.yaml --hosts 100000 --nodesets 500 --users 100000`.
In this process, it times (CPU and wall clock, median of --repeat runs):

- `read_yaml_file` of each inventory file;
- `load_config` of the stack as it is (the happy path: yaml-rs, then validation);
- `load_config` with the first host's tag written `1_000` (a string in YAML 1.2's core schema, a number to
  yaml-rs): validation refuses the number, the hosts file is read again with the core schema's strings
  put back and the config validated again (components/site/inventory_numbers.py); then the same
  with the last host's tag (libyaml's events are walked to the end of the file);
- `load_config` with one host's name written `12` (a number in both readings): refused after the same
  second reading, with the message naming the file and the path.

Python's garbage collector is off while timing, as in the program (`__main__.py`). It prints the figures and the load average before and after (the machine may be shared). A benchmark:
it reports, it does not assert.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from components.paths import PROJECT_ROOT


def _timed(action: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    cpu: list[float] = []
    wall: list[float] = []
    result: Any = None
    for _ in range(repeat):
        result = None
        gc.collect()
        gc.disable()
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            result = action()
        except Exception as error:  # a refused config is a result here
            result = error
        cpu.append(time.process_time() - started_cpu)
        wall.append(time.perf_counter() - started)
        gc.enable()
    return statistics.median(cpu), statistics.median(wall), result


def _outcome(result: Any) -> str:
    messages = getattr(result, "messages", None)
    if messages is not None:
        return f"refused: {messages[0][:150]}" + (f" (+{len(messages) - 1} more)" if len(messages) > 1 else "")
    return "accepted" if not isinstance(result, Exception) else f"{type(result).__name__}: {result}"


def _replace_last(text: str, old: str, new: str) -> str:
    at = text.rfind(old)
    return text if at < 0 else text[:at] + new + text[at + len(old) :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stack_file", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    from components.site.inventory import read_yaml_file
    from components.site.loader import load_config
    from offline.program.stackfile import read_stack_file

    stack = read_stack_file(args.stack_file, name="bench")
    raw = dict(stack.config)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    files = []
    for section in ("provisioning", "directory", "slurm"):
        reference = json.loads(raw.get(f"hpcforge:{section}", "{}")).get("inventory") or {}
        if reference.get("file"):
            files.append(reference["file"])
    for name in files:
        path = Path(name) if Path(name).is_absolute() else PROJECT_ROOT / name
        cpu, wall, _ = _timed(partial(read_yaml_file, path, path.name), args.repeat)
        print(f"read_yaml_file {path.name} ({path.stat().st_size / 1e6:.1f} MB): {cpu:.2f} s CPU, {wall:.2f} s wall")

    cpu, wall, result = _timed(lambda: load_config(raw, PROJECT_ROOT), args.repeat)
    print(f"load_config as generated: {cpu:.2f} s CPU, {wall:.2f} s wall; {_outcome(result)}")
    result = None

    hosts_name = next((name for name in files if name.endswith(".hosts.yaml") or name.endswith("hosts.yaml")), None)
    if hosts_name is None:
        print("no hosts file: variants skipped")
        return 0
    hosts_path = Path(hosts_name) if Path(hosts_name).is_absolute() else PROJECT_ROOT / hosts_name
    text = hosts_path.read_text()
    variants = {
        "one tag `1_000` (a string in YAML 1.2)": text.replace("tags: [compute,", "tags: [1_000,", 1),
        "the last host's tag `1_000`": _replace_last(text, "tags: [compute,", "tags: [1_000,"),
        "one host named `12` (a number)": re.sub(r"- name: \S+", "- name: 12", text, count=1),
    }
    with tempfile.TemporaryDirectory() as directory:
        for label, variant in variants.items():
            assert variant != text, label
            path = Path(directory) / hosts_path.name
            path.write_text(variant)
            changed = {key: value.replace(hosts_name, str(path)) for key, value in raw.items()}
            cpu, wall, result = _timed(partial(load_config, changed, PROJECT_ROOT), args.repeat)
            print(f"load_config with {label}: {cpu:.2f} s CPU, {wall:.2f} s wall; {_outcome(result)}")
            result = None
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

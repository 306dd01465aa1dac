"""How the report names things: a resource as people know it (`ConfigMap slurm/slurm-config`, `ClusterQueue research`),
what changed about it in a few words, a slurm.conf change with its renames (`partition gpu renamed to gpu-all`), and a
named entity with what changed about it (`bob: uidNumber 10002 → 20002`).

Values that may be secret (an LDIF attribute or a JSON key that says password, secret, key or token) are named,
never shown.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .plan import MISSING, Change, diff_values
from .slurm_conf import slurm_conf_items

ARROW = "→"
SECRET_WORDS = re.compile(r"password|passwd|secret|token|key$|credential", re.I)
NAMED_LINES = ("PartitionName", "NodeName", "NodeSet")
"""slurm.conf lines keyed by their name (offline/diff/slurm_conf.py slurm_conf_items)."""


def short(value: Any, limit: int = 60) -> str:
    if value is MISSING or value is None:
        return "(none)"
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def resource_name(change: Change) -> str:
    """`Kind namespace/name` for a Kubernetes object, `Kind name` when cluster-scoped, else the type's last part and
    the Pulumi name (`Command evidence-slurm-nodes`, `RandomPassword slurm-jwt`)."""
    inputs = change.inputs
    if change.type == "kubernetes:helm.sh/v4:Chart":
        return f"Helm chart {inputs.get('namespace') or '-'}/{inputs.get('chart') or change.name}"
    metadata = inputs.get("metadata") if isinstance(inputs.get("metadata"), dict) else None
    if change.type.startswith("kubernetes:") and isinstance(inputs.get("kind"), str) and metadata:
        name = str(metadata.get("name") or change.name)
        namespace = metadata.get("namespace")
        kind = str(inputs["kind"]) + (" patch" if change.type.endswith("Patch") else "")
        return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
    return f"{change.type.rpartition(':')[2] or change.type} {change.name}"


# --- slurm.conf -------------------------------------------------------------------------------------------------


def _params(line: str) -> dict[str, str]:
    """`PartitionName=gpu Nodes=a MaxTime=1` -> {'Nodes': 'a', 'MaxTime': '1'} (the name itself left out)."""
    out: dict[str, str] = {}
    for token in line.split()[1:]:
        key, _, value = token.partition("=")
        out[key] = value
    return out


def conf_changes(old: dict[str, str], new: dict[str, str], keys: list[str] | None = None) -> list[str]:
    """What changed between two `slurm_conf_items` maps, in words; a named line removed and another added with the
    same parameters is a rename. `keys`: only these (default: every key that differs)."""
    wanted = sorted(keys if keys is not None else {k for k in set(old) | set(new) if old.get(k) != new.get(k)})
    removed = [k for k in wanted if k in old and k not in new and k.partition("=")[0] in NAMED_LINES]
    added = [k for k in wanted if k in new and k not in old and k.partition("=")[0] in NAMED_LINES]
    out: list[str] = []
    renamed: set[str] = set()
    for gone in removed:
        kind = gone.partition("=")[0]
        twin = next(
            (k for k in added if k.partition("=")[0] == kind and k not in renamed and _params(new[k]) == _params(old[gone])), None
        )
        if twin is not None:
            renamed |= {gone, twin}
            out.append(f"{kind} {gone.partition('=')[2]} renamed to {twin.partition('=')[2]}")
    for key in wanted:
        if key in renamed:
            continue
        kind, _, name = key.partition("=")
        if kind in NAMED_LINES:
            if key not in new:
                out.append(f"{kind} {name} removed")
            elif key not in old:
                out.append(f"{kind} {name} added")
            else:
                a, b = _params(old[key]), _params(new[key])
                parts = [
                    f"{p} {a.get(p, '(unset)')} {ARROW} {b.get(p, '(unset)')}"
                    for p in sorted(set(a) | set(b))
                    if a.get(p) != b.get(p)
                ]
                out.append(f"{kind} {name}: {', '.join(parts)}")
        else:
            out.append(f"{key} {old.get(key, '(unset)')} {ARROW} {new.get(key, '(unset)')}")
    return out


def slurm_conf_changes(old_text: str, new_text: str) -> list[str]:
    return conf_changes(slurm_conf_items(old_text), slurm_conf_items(new_text))


# --- what changed about a resource --------------------------------------------------------------------------------


def _text_lines(field_text: list[str]) -> tuple[int, int]:
    plus = sum(1 for line in field_text if line.startswith("+") and not line.startswith("+++"))
    minus = sum(1 for line in field_text if line.startswith("-") and not line.startswith("---"))
    return plus, minus


def what_changed(change: Change, limit: int = 3) -> str:
    """A few words on what changed: slurm.conf settings by name, rendered files by their line counts, fields by path."""
    if change.op in ("create", "delete"):
        return "created" if change.op == "create" else "deleted"
    parts: list[str] = []
    for f in change.fields:
        if f.path == "spec.extraConf" and change.kind == "Controller":
            parts += [f"slurm.conf {c}" for c in slurm_conf_changes(str(f.old or ""), str(f.new or ""))] or [
                "slurm.conf comments"
            ]
        elif f.text:
            plus, minus = _text_lines(f.text)
            name = f.path.split(".", 1)[1] if f.path.startswith(("data.", "stringData.")) else f.path
            parts.append(f"{name}: +{plus} -{minus} lines")
        elif SECRET_WORDS.search(f.path.rpartition(".")[2]) or "[secret" in str(f.old) + str(f.new):
            parts.append(f"{f.path} (secret, not shown)")
        else:
            parts.append(f"{f.path}: {short(f.old)} {ARROW} {short(f.new)}")
    if change.renamed:
        parts.insert(0, f"successor {change.renamed[1]} of {change.renamed[0]}")
    shown = parts[:limit]
    if len(parts) > limit:
        shown.append(f"and {len(parts) - limit} more")
    return "; ".join(shown)


# --- named entities (users, groups, hosts, accounts, QOS, Kubernetes nodes) -------------------------------------------


def _ldif(entry: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in entry.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith(" "):
            out.setdefault(key, []).append(value.lstrip(": ").strip())
    return out


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return MISSING


def entity_changes(old: str, new: str, limit: int = 6) -> list[str]:
    """What changed between two records of one entity (a JSON record or an LDIF entry), one item each."""
    a, b = _json(old), _json(new)
    out: list[str] = []
    if a is MISSING or b is MISSING:
        was_entry, now_entry = _ldif(old), _ldif(new)
        for attr in sorted(set(was_entry) | set(now_entry)):
            was, now = was_entry.get(attr, []), now_entry.get(attr, [])
            if was == now:
                continue
            if SECRET_WORDS.search(attr):
                out.append(f"{attr} changed (not shown)")
            elif len(was) <= 1 and len(now) <= 1:
                out.append(f"{attr} {was[0] if was else '(none)'} {ARROW} {now[0] if now else '(none)'}")
            else:
                out += [f"+{attr} {v}" for v in now if v not in was] + [f"-{attr} {v}" for v in was if v not in now]
    else:
        for path, x, y in diff_values(a, b):
            hidden = SECRET_WORDS.search(path.rpartition(".")[2])
            out.append(f"{path} changed (not shown)" if hidden else f"{path} {short(x, 40)} {ARROW} {short(y, 40)}")
    if len(out) > limit:
        out = [*out[:limit], f"and {len(out) - limit} more"]
    return out

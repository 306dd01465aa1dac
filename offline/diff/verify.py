"""`./hpcforge diff --verify PREDICTION.json --observed DIR`: after `pulumi up`, was each predicted effect seen?

The prediction is the JSON report the deploy workflow wrote before the update (`--json`); its `predictions` are
claims that the cluster can confirm or refute, made from the plan and the impact (`predictions` below):

- `controller-pod`: the slurmctld pod (`<Controller>-controller-0`, slurm-operator v1.2.1
  api/v1beta1/controller_keys.go:25) is recreated (`expected: true`, a singleton-restart verdict) or not (`false`,
  a reload: the reconfigure sidecar runs `scontrol reconfigure`);
- `slurm-config`: a slurm.conf setting has its new value in `scontrol show config`;
- `partition`: a partition exists or not afterwards, with its new MaxTime;
- `jobs`: running jobs continue (`expected: continue`: a restart, a reconfigure, a drain that waits), or end (a
  change whose verdict says jobs are killed or lost), in some partitions or on some nodes or everywhere;
- `pods`: the pods of a NodeSet roll (or of a workload) are recreated.

The observations, one JSON (or text) file each in DIR, as the deploy workflow collects them (.github/workflows/
deploy.yml, scripts/ci/collect_cluster.sh): `deploy.json` (`started_at`, `finished_at`: Unix seconds; required),
`pods.json` (`kubectl get pods -A -o json`), `slurm-objects.json` (the NodeSets and Controllers with their status),
`scontrol-config.json` (`scontrol show config --json`), `scontrol-config.txt` (`scontrol show config`: BOOT_TIME,
when slurmctld last (re)started), `partitions.json` (`scontrol show partitions --json`), `squeue-before.json` and
`squeue-after.json` (`squeue --json` before and after the update; squeue keeps ended jobs MinJobAge seconds, 300 by
default), `sacct.json` (`sacct --json` from the start of the update; optional). A claim whose file is missing is
`unchecked`.

Verdicts: `seen`, `not seen` (the cluster shows otherwise: the rule is wrong, or the deploy did something else),
`unchecked`, and `unpredicted`: something the cluster shows that no claim predicted (the slurmctld pod recreated,
jobs that ended abnormally, pods recreated). Exit 0 when every checked claim was seen and nothing is unpredicted, 1
otherwise, 2 when the input cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .effects import Impact
from .plan import Plan
from .slurm_conf import slurm_conf_items

ENDED_BY_CHANGE = frozenset({"CANCELLED", "NODE_FAIL", "FAILED", "PREEMPTED", "BOOT_FAIL", "REQUEUED", "REVOKED"})
"""Job states that an update can cause (a job that COMPLETED or hit its TIMEOUT ended by itself)."""
KILL_WORDS = re.compile(r"\b(killed|are lost|is lost|requeued|cancel)", re.I)
SLURMCTLD_WORDS = re.compile(r"slurmctld|slurm\.conf|Slurm config|reconfigure", re.I)


class VerifyError(ValueError):
    """The prediction or the observations cannot be read."""


# --- predictions (written into the report before the deploy) ------------------------------------------------------------


def _controller(plan: Plan) -> dict[str, Any]:
    for r in plan.head_resources or plan.base_resources:
        inputs = r.get("inputs") or {}
        if inputs.get("kind") == "Controller" and str(inputs.get("apiVersion", "")).startswith("slinky.slurm.net/"):
            return dict(inputs)
    return {}


def _conf_claims(plan: Plan) -> tuple[list[dict[str, Any]], list[str]]:
    """slurm-config and partition claims from the Controller's extraConf; the partitions that go away."""
    claims: list[dict[str, Any]] = []
    gone: list[str] = []
    for change in plan.changes:
        if change.kind != "Controller":
            continue
        old = slurm_conf_items(str((change.old_inputs.get("spec") or {}).get("extraConf") or ""))
        new = slurm_conf_items(str((change.new_inputs.get("spec") or {}).get("extraConf") or ""))
        for key in sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k)):
            kind, _, name = key.partition("=")
            if kind == "PartitionName":
                params = dict(token.partition("=")[::2] for token in new.get(key, "").split()[1:])
                claim: dict[str, Any] = {"claim": "partition", "name": name, "exists": key in new}
                if key in new and "MaxTime" in params:
                    claim["max_time"] = params["MaxTime"]
                claims.append(claim)
                if key not in new:
                    gone.append(name)
            elif kind not in ("NodeName", "NodeSet") and key in new:
                claims.append({"claim": "slurm-config", "key": key, "value": new[key]})
    return claims, gone


def predictions(plan: Plan, impact: Impact) -> list[dict[str, Any]]:
    """What the cluster should show after the deploy, from the plan and its impact (module docstring)."""
    labels = {c.label: c for c in plan.changes}
    controller = _controller(plan)
    name = str((controller.get("metadata") or {}).get("name") or "slurm")
    namespace = str((controller.get("metadata") or {}).get("namespace") or "slurm")
    claims: list[dict[str, Any]] = []
    restart: bool | None = None
    ends: list[dict[str, Any]] = []
    about_slurmctld = False
    conf, gone = _conf_claims(plan)
    for number, effect in enumerate(impact.effects, start=1):
        changes = [labels[r] for r in effect.resources if r in labels]
        kinds = {c.kind for c in changes}
        if SLURMCTLD_WORDS.search(effect.what) and kinds & {"Controller", "ConfigMap"}:
            about_slurmctld = True
            if effect.severity == "reload" and restart is None:
                restart = False
            elif effect.severity == "singleton-restart":
                restart = True
        if KILL_WORDS.search(effect.what):
            scope = {"nodes": list(effect.nodes), "partitions": [p for p in gone if p in effect.what]}
            ends.append({"claim": "jobs", "expected": "end", "scope": scope, "because": [number]})
        if effect.severity == "rolling-drain" and "NodeSet" in kinds:
            for drain in impact.drains:
                if drain.kind == "roll" and f"NodeSet {drain.nodeset}:" in effect.what:
                    claims.append({"claim": "pods", "namespace": namespace, "pods": list(drain.nodes), "because": [number]})
    if restart is not None:
        claims.append({"claim": "controller-pod", "namespace": namespace, "pod": f"{name}-controller-0", "expected": restart})
    claims += conf
    if ends:
        claims += ends
    elif about_slurmctld or impact.drains:
        claims.append({"claim": "jobs", "expected": "continue", "scope": {"nodes": [], "partitions": []}})
    for index, claim in enumerate(claims, start=1):
        claim["id"] = f"P{index}"
        claim["text"] = describe(claim)
    return claims


def describe(claim: dict[str, Any]) -> str:
    kind = claim["claim"]
    if kind == "controller-pod":
        return f"the slurmctld pod {claim['pod']} is {'recreated' if claim['expected'] else 'not recreated (reconfigured in place)'}"
    if kind == "slurm-config":
        return f"slurm.conf {claim['key']} = {claim['value']} in force"
    if kind == "partition":
        exists = "exists" if claim["exists"] else "is gone"
        return f"partition {claim['name']} {exists}" + (f" with MaxTime {claim['max_time']}" if "max_time" in claim else "")
    if kind == "jobs":
        scope = claim["scope"]
        where = " on " + ",".join(scope["nodes"]) if scope["nodes"] else ""
        where += " in partition " + ",".join(scope["partitions"]) if scope["partitions"] else ""
        return f"running jobs{where or ''} {'end' if claim['expected'] == 'end' else 'continue'}"
    if kind == "pods":
        return f"pods {','.join(claim['pods'])} recreated"
    return kind


# --- observations -------------------------------------------------------------------------------------------------------


def _load(folder: Path, name: str) -> Any:
    path = folder / name
    if not path.is_file():
        return None
    text = path.read_text()
    if name.endswith(".txt"):
        return text
    try:
        return json.loads(text)
    except ValueError as error:
        raise VerifyError(f"{name}: not JSON ({error})") from None


def _time(value: Any) -> float | None:
    """Unix seconds from a number, a Slurm number object or an RFC 3339 / ISO time."""
    if isinstance(value, dict):
        value = value.get("number") if value.get("set", True) and not value.get("infinite") else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    return None


def _pod_started(pod: dict[str, Any], container: str | None = None) -> float | None:
    """When the pod's (or the container's) current process started: a recreated pod or a restarted container."""
    times = [_time((pod.get("metadata") or {}).get("creationTimestamp"))]
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if container is None or status.get("name") == container:
            times.append(_time(((status.get("state") or {}).get("running") or {}).get("startedAt")))
    found = [t for t in times if t is not None]
    return max(found) if found else None


def _boot_time(text: str | None) -> float | None:
    match = re.search(r"^BOOT_TIME\s*=\s*(\S+)", text or "", re.M)
    return _time(match.group(1)) if match else None


def _jobs(data: Any) -> dict[int, dict[str, Any]]:
    if data is None:
        return {}
    jobs = data.get("jobs") if isinstance(data, dict) else None
    if not isinstance(jobs, list):
        raise VerifyError("squeue/sacct JSON without a list of jobs")
    out = {}
    for job in jobs:
        state = job.get("job_state") if "job_state" in job else (job.get("state") or {}).get("current")
        states = [state] if isinstance(state, str) else list(state or [])
        out[int(job["job_id"])] = {"state": states, "partition": job.get("partition", ""), "nodes": job.get("nodes", "")}
    return out


def ended_jobs(before: Any, after: Any, sacct: Any = None) -> dict[int, str]:
    """Jobs running (or pending) before the update that ended by something else than themselves: id -> state."""
    old, new, accounted = _jobs(before), _jobs(after), _jobs(sacct)
    out = {}
    for job_id, job in old.items():
        if not {"RUNNING", "PENDING", "SUSPENDED"} & set(job["state"]):
            continue
        later = (new.get(job_id) or accounted.get(job_id) or {}).get("state")
        if later is None:
            out[job_id] = "gone (state unknown: no sacct.json)"
        elif ENDED_BY_CHANGE & set(later):
            out[job_id] = "+".join(later)
    return out


# --- the check --------------------------------------------------------------------------------------------------------


def _normal(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, dict) and "number" in value:
        return str(value.get("number"))
    return str(value)


def _config_value(config: dict[str, Any], key: str) -> Any:
    for k, v in config.items():
        if k.lower() == key.lower():
            return v
    return None


def _minutes(text: str) -> int | None:
    """Slurm's time format (`[days-]hours:minutes:seconds`, `minutes`, UNLIMITED) in minutes."""
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    minutes = {1: lambda: parts[0], 2: lambda: parts[0] * 60 + parts[1], 3: lambda: parts[0] * 60 + parts[1]}[len(parts)]()
    return minutes + (int(days) * 1440 if days else 0)


def check(claims: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """Each claim with its verdict and what was seen, then the unpredicted observations."""
    deploy = _load(folder, "deploy.json")
    if not isinstance(deploy, dict) or _time(deploy.get("started_at")) is None:
        raise VerifyError("deploy.json with started_at (when the update began, Unix seconds) is required")
    started = float(_time(deploy["started_at"]) or 0)
    pods = _load(folder, "pods.json")
    pod_items = {f"{(p.get('metadata') or {}).get('namespace')}/{(p.get('metadata') or {}).get('name')}": p for p in (pods or {}).get("items", [])}
    config_json = _load(folder, "scontrol-config.json")
    config = (config_json or {}).get("slurm_conf") if isinstance(config_json, dict) else None
    boot = _boot_time(_load(folder, "scontrol-config.txt"))
    partitions_json = _load(folder, "partitions.json")
    partitions = {p.get("name"): p for p in (partitions_json or {}).get("partitions", [])} if partitions_json else None
    before, after = _load(folder, "squeue-before.json"), _load(folder, "squeue-after.json")
    ended = ended_jobs(before, after, _load(folder, "sacct.json")) if before is not None and after is not None else None
    results: list[dict[str, Any]] = []
    explained_jobs: set[int] = set()
    explained_pods: set[str] = set()
    for claim in claims:
        verdict, seen = "unchecked", "no data"
        kind = claim["claim"]
        if kind == "controller-pod":
            key = f"{claim['namespace']}/{claim['pod']}"
            explained_pods.add(key)
            pod = pod_items.get(key)
            if pod is not None:
                when = _pod_started(pod, "slurmctld")
                recreated = when is not None and when >= started
                verdict = "seen" if recreated == claim["expected"] else "not seen"
                seen = f"pod {'recreated' if recreated else 'not recreated'}" + (f"; BOOT_TIME {'moved' if boot >= started else 'unchanged'}" if boot else "")
        elif kind == "slurm-config" and config is not None:
            value = _config_value(config, claim["key"])
            got = _normal(value) if value is not None else "(not shown by scontrol show config)"
            wanted = claim["value"]
            same = got == wanted or got.split()[0:1] == wanted.split()[0:1] or got.replace(" ", "") == wanted.replace(" ", "")
            verdict = ("seen" if same else "not seen") if value is not None else "unchecked"
            seen = f"{claim['key']} = {got}"
        elif kind == "partition" and partitions is not None:
            found = partitions.get(claim["name"])
            verdict = "seen" if (found is not None) == claim["exists"] else "not seen"
            seen = f"partition {claim['name']} {'exists' if found is not None else 'absent'}"
            if found is not None and "max_time" in claim:
                shown = ((found.get("maximums") or {}).get("time") or {})
                minutes = None if shown.get("infinite") else shown.get("number")
                if minutes != _minutes(claim["max_time"]):
                    verdict = "not seen"
                seen += f", MaxTime {minutes if minutes is not None else 'UNLIMITED'} min"
        elif kind == "jobs" and ended is not None:
            scope = claim["scope"]
            hit = {j: s for j, s in ended.items() if _in_scope(j, before, scope)}
            explained_jobs |= set(hit) if claim["expected"] == "end" else set()
            verdict = "seen" if bool(hit) == (claim["expected"] == "end") else "not seen"
            seen = ", ".join(f"job {j} {s}" for j, s in sorted(hit.items())) or "no job ended"
        elif kind == "pods" and pods is not None:
            keys = [f"{claim['namespace']}/{p}" for p in claim["pods"]]
            explained_pods |= set(keys)
            fresh = [k for k in keys if k in pod_items and (_pod_started(pod_items[k]) or 0) >= started]
            verdict = "seen" if len(fresh) == len(keys) else "not seen"
            seen = f"{len(fresh)} of {len(keys)} recreated"
        results.append({**claim, "verdict": verdict, "seen": seen})
    results += _unpredicted(claims, started, pod_items, ended, explained_jobs, explained_pods)
    return results


def _in_scope(job_id: int, before: Any, scope: dict[str, Any]) -> bool:
    job = _jobs(before).get(job_id) or {}
    if scope.get("partitions") and job.get("partition") not in scope["partitions"]:
        return False
    if scope.get("nodes"):
        from ..live.slurm_json import expand

        return bool(set(expand(str(job.get("nodes") or ""))) & set(scope["nodes"]))
    return True


def _unpredicted(
    claims: list[dict[str, Any]],
    started: float,
    pods: dict[str, dict[str, Any]],
    ended: dict[int, str] | None,
    explained_jobs: set[int],
    explained_pods: set[str],
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    continuing = any(c["claim"] == "jobs" and c["expected"] == "continue" for c in claims)
    for job_id, state in sorted((ended or {}).items()):
        if job_id not in explained_jobs and not continuing:
            out.append({"id": "-", "claim": "unpredicted", "text": f"job {job_id} ended", "verdict": "unpredicted", "seen": state})
    for key, pod in sorted(pods.items()):
        when = _pod_started(pod)
        if key not in explained_pods and when is not None and when >= started and key.partition("/")[0] == "slurm":
            out.append({"id": "-", "claim": "unpredicted", "text": f"pod {key} recreated", "verdict": "unpredicted", "seen": "started during the deploy"})
    return out


# --- the command ----------------------------------------------------------------------------------------------------------


def render(results: list[dict[str, Any]], markdown: bool = False) -> str:
    counts = {v: sum(1 for r in results if r["verdict"] == v) for v in ("seen", "not seen", "unchecked", "unpredicted")}
    summary = "Verify: " + ", ".join(f"{n} {v}" for v, n in counts.items())
    rows = [[r["id"], r["verdict"], r["text"], r["seen"]] for r in results]
    if markdown:
        lines = [f"### {summary}", "", "| id | verdict | predicted | seen |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(row[i]) for row in [["id", "verdict", "predicted", "seen"], *rows]) for i in range(4)]
    lines = [summary, "  " + "  ".join(h.ljust(w) for h, w in zip(["id", "verdict", "predicted", "seen"], widths, strict=True)).rstrip()]
    lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def run_verify(args: argparse.Namespace) -> int:
    try:
        try:
            prediction = json.loads(args.verify.read_text())
        except (OSError, ValueError) as error:
            raise VerifyError(f"{args.verify.name}: not a JSON report ({error})") from None
        if not isinstance(prediction, dict) or not isinstance(prediction.get("predictions"), list):
            raise VerifyError(f"{args.verify.name}: no predictions (write it with `./hpcforge diff ... --json FILE`)")
        results = check(prediction["predictions"], args.observed)
    except VerifyError as error:
        print(f"error: --verify: {error}", file=sys.stderr)
        return 2
    if args.format == "json":
        text = json.dumps({"format": "hpcforge-verify/1", "stack": prediction.get("stack"), "results": results}, indent=1) + "\n"
    else:
        text = render(results, markdown=args.format == "markdown")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    bad = [r for r in results if r["verdict"] in ("not seen", "unpredicted")]
    return 1 if bad else 0

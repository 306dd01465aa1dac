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
when slurmctld last (re)started or re-executed itself for a reconfigure), `partitions.json` (`scontrol show partitions
--json`), `jobs-before.json` and `jobs-after.json` (`scontrol show jobs --json` before and after the update;
slurmctld keeps an ended job MinJobAge seconds, 300 by default; `squeue --json` does not list a job whose partition
was removed, so `squeue-before.json`/`squeue-after.json` are only the fallback), `sacct.json` (`sacct --json` from the
start of the update; optional, for jobs already purged). A claim whose file is missing is `unchecked`.

Verdicts: `seen`, `not seen` (the cluster shows otherwise: the rule is wrong, or the deploy did something else),
`unchecked`, and `unpredicted`: something the cluster shows that no claim predicted (the slurmctld pod recreated,
jobs that ended abnormally, pods recreated). Exit 0 when every checked claim was seen and nothing is unpredicted, 1
otherwise, 2 when the input cannot be read.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..live.slurm_json import expand
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
        return (
            f"the slurmctld pod {claim['pod']} is {'recreated' if claim['expected'] else 'not recreated (reconfigured in place)'}"
        )
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


@dataclass
class Observed:
    """What DIR holds (module docstring), read once."""

    started: float
    pods: dict[str, dict[str, Any]] | None
    config: dict[str, Any] | None
    boot: float | None
    partitions: dict[str, Any] | None
    before: Any
    ended: dict[int, str] | None

    @classmethod
    def read(cls, folder: Path) -> Observed:
        deploy = _load(folder, "deploy.json")
        started = _time(deploy.get("started_at")) if isinstance(deploy, dict) else None
        if started is None:
            raise VerifyError("deploy.json with started_at (when the update began, Unix seconds) is required")
        pods = _load(folder, "pods.json")
        items = None
        if pods is not None:
            items = {
                f"{(p.get('metadata') or {}).get('namespace')}/{(p.get('metadata') or {}).get('name')}": p
                for p in pods.get("items", [])
            }
        config = _load(folder, "scontrol-config.json")
        partitions = _load(folder, "partitions.json")
        before = _load(folder, "jobs-before.json") or _load(folder, "squeue-before.json")
        after = _load(folder, "jobs-after.json") or _load(folder, "squeue-after.json")
        ended = ended_jobs(before, after, _load(folder, "sacct.json")) if before is not None and after is not None else None
        return cls(
            started,
            items,
            config.get("slurm_conf") if isinstance(config, dict) else None,
            _boot_time(_load(folder, "scontrol-config.txt")),
            {p.get("name"): p for p in partitions.get("partitions", [])} if isinstance(partitions, dict) else None,
            before,
            ended,
        )

    def since_start(self, when: float | None) -> bool:
        """Whether `when` is during the deploy; Kubernetes and BOOT_TIME give whole seconds, so the second the
        deploy started counts."""
        return when is not None and when >= math.floor(self.started)

    def recreated(self, key: str, container: str | None = None) -> bool | None:
        pod = (self.pods or {}).get(key)
        if pod is None:
            return None
        return self.since_start(_pod_started(pod, container))


def _controller_pod(claim: dict[str, Any], seen: Observed) -> tuple[str, str]:
    recreated = seen.recreated(f"{claim['namespace']}/{claim['pod']}", "slurmctld")
    if recreated is None:
        return "unchecked", "no such pod in pods.json" if seen.pods is not None else "no pods.json"
    boot = "" if seen.boot is None else f"; BOOT_TIME {'moved' if seen.since_start(seen.boot) else 'unchanged'}"
    return (
        "seen" if recreated == claim["expected"] else "not seen"
    ), f"pod {'recreated' if recreated else 'not recreated'}{boot}"


def _slurm_config(claim: dict[str, Any], seen: Observed) -> tuple[str, str]:
    if seen.config is None:
        return "unchecked", "no scontrol-config.json"
    value = _config_value(seen.config, claim["key"])
    if value is None:
        return "unchecked", f"{claim['key']} is not shown by scontrol show config"
    got, wanted = _normal(value), claim["value"]
    same = got.replace(" ", "") == wanted.replace(" ", "") or got.split(" ")[0] == wanted
    return ("seen" if same else "not seen"), f"{claim['key']} = {got}"


def _partition(claim: dict[str, Any], seen: Observed) -> tuple[str, str]:
    if seen.partitions is None:
        return "unchecked", "no partitions.json"
    found = seen.partitions.get(claim["name"])
    verdict = "seen" if (found is not None) == claim["exists"] else "not seen"
    text = f"partition {claim['name']} {'exists' if found is not None else 'absent'}"
    if found is not None and "max_time" in claim:
        shown = (found.get("maximums") or {}).get("time") or {}
        minutes = None if shown.get("infinite") else shown.get("number")
        if minutes != _minutes(claim["max_time"]):
            verdict = "not seen"
        text += f", MaxTime {'UNLIMITED' if minutes is None else f'{minutes} min'}"
    return verdict, text


def _jobs_claim(claim: dict[str, Any], seen: Observed) -> tuple[str, str, set[int]]:
    if seen.ended is None:
        return "unchecked", "no jobs-before.json and jobs-after.json", set()
    hit = {j: s for j, s in seen.ended.items() if _in_scope(j, seen.before, claim["scope"])}
    verdict = "seen" if bool(hit) == (claim["expected"] == "end") else "not seen"
    return verdict, ", ".join(f"job {j} {s}" for j, s in sorted(hit.items())) or "no job ended", set(hit)


def _pods(claim: dict[str, Any], seen: Observed) -> tuple[str, str]:
    if seen.pods is None:
        return "unchecked", "no pods.json"
    keys = [f"{claim['namespace']}/{p}" for p in claim["pods"]]
    fresh = [k for k in keys if seen.recreated(k)]
    return ("seen" if len(fresh) == len(keys) else "not seen"), f"{len(fresh)} of {len(keys)} recreated"


def check(claims: list[dict[str, Any]], folder: Path) -> list[dict[str, Any]]:
    """Each claim with its verdict and what was seen, then the unpredicted observations."""
    seen = Observed.read(folder)
    results: list[dict[str, Any]] = []
    explained_jobs: set[int] = set()
    explained_pods: set[str] = set()
    for claim in claims:
        kind = claim["claim"]
        if kind == "controller-pod":
            explained_pods.add(f"{claim['namespace']}/{claim['pod']}")
            verdict, text = _controller_pod(claim, seen)
        elif kind == "slurm-config":
            verdict, text = _slurm_config(claim, seen)
        elif kind == "partition":
            verdict, text = _partition(claim, seen)
        elif kind == "jobs":
            verdict, text, hit = _jobs_claim(claim, seen)
            explained_jobs |= hit
        elif kind == "pods":
            explained_pods |= {f"{claim['namespace']}/{p}" for p in claim["pods"]}
            verdict, text = _pods(claim, seen)
        else:
            verdict, text = "unchecked", f"unknown claim {kind!r}"
        results.append({**claim, "verdict": verdict, "seen": text})
    results += _unpredicted(seen, explained_jobs, explained_pods)
    return results


def _in_scope(job_id: int, before: Any, scope: dict[str, Any]) -> bool:
    job = _jobs(before).get(job_id) or {}
    if scope.get("partitions") and job.get("partition") not in scope["partitions"]:
        return False
    if scope.get("nodes"):
        return bool(set(expand(str(job.get("nodes") or ""))) & set(scope["nodes"]))
    return True


def _unpredicted(seen: Observed, explained_jobs: set[int], explained_pods: set[str]) -> list[dict[str, Any]]:
    """Jobs ended and Slurm pods recreated during the deploy that no claim accounts for."""
    out: list[dict[str, Any]] = []
    for job_id, state in sorted((seen.ended or {}).items()):
        if job_id not in explained_jobs:
            out.append(
                {"id": "-", "claim": "unpredicted", "text": f"job {job_id} ended", "verdict": "unpredicted", "seen": state}
            )
    for key in sorted(seen.pods or {}):
        if key not in explained_pods and key.partition("/")[0] == "slurm" and seen.recreated(key):
            out.append(
                {
                    "id": "-",
                    "claim": "unpredicted",
                    "text": f"pod {key} recreated",
                    "verdict": "unpredicted",
                    "seen": "started during the deploy",
                }
            )
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
    lines = [
        summary,
        "  " + "  ".join(h.ljust(w) for h, w in zip(["id", "verdict", "predicted", "seen"], widths, strict=True)).rstrip(),
    ]
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

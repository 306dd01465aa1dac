"""A chart's `kubeVersion` constraint against the target Kubernetes version, as Helm checks it.

Helm's install action (also run by `helm.v4.Chart` and `helm template`) refuses a chart whose
`Chart.yaml` `kubeVersion` the cluster does not satisfy: "chart requires kubeVersion: X which is
incompatible with Kubernetes Y" (helm pkg/action/install.go, chartutil.IsCompatibleRange). The
constraint syntax is Masterminds/semver v3's: `||` between alternatives, `,` or spaces between
conditions that must all hold, operators `=`, `!=`, `>`, `<`, `>=`, `<=`, `~` (patch-level range),
`^` (up to the next major), and `x`/`X`/`*` wildcards. A `-0` prerelease suffix (`>= 1.19.0-0`) only
lets prereleases in: the target is a release, so prerelease parts are ignored here.
"""

from __future__ import annotations

import re

_CONDITION = re.compile(
    r"(!=|>=|<=|=>|=<|>|<|=|~>|~|\^)?\s*v?([0-9xX*]+)(?:\.([0-9xX*]+))?(?:\.([0-9xX*]+))?(?:-[0-9A-Za-z.-]+)?"
)
_WILD = {"x", "X", "*"}


class KubeVersionError(ValueError):
    """A `kubeVersion` constraint that does not parse."""


def _parts(version: str) -> tuple[int, int, int]:
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?", version.strip())
    if not match:
        raise KubeVersionError(f"not a Kubernetes version: {version!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _condition_holds(op: str, raw: tuple[str | None, str | None, str | None], version: tuple[int, int, int]) -> bool:  # noqa: PLR0911 (one return per constraint operator of Helm's semver)
    given = [p for p in raw if p is not None]
    wild = next((i for i, p in enumerate(given) if p in _WILD), len(given))
    fixed = tuple(int(p) for p in given[:wild])
    if op in ("", "=") and wild < 3:
        return version[: len(fixed)] == fixed  # `1.33`, `1.x`: every version with that prefix
    bound = (*fixed, *(0,) * (3 - len(fixed)))
    if op in ("~", "~>"):
        upper = (bound[0] + 1, 0, 0) if len(fixed) <= 1 else (bound[0], bound[1] + 1, 0)
        return bound <= version < upper
    if op == "^":
        upper = (bound[0] + 1, 0, 0) if bound[0] > 0 else (0, bound[1] + 1, 0)
        return bound <= version < upper
    if op in ("", "="):
        return version == bound
    if op == "!=":
        return version[: len(fixed)] != fixed
    if op in (">=", "=>"):
        return version >= bound
    if op in ("<=", "=<"):
        return version[: len(fixed)] <= fixed if wild < 3 else version <= bound
    if op == ">":
        return version[: len(fixed)] > fixed if wild < 3 else version > bound
    return version < bound  # "<"


def satisfies(constraint: str, kubernetes_version: str) -> bool:
    """Whether `kubernetes_version` (`1.33`, `v1.33.0`) meets a chart's `kubeVersion` constraint."""
    version = _parts(kubernetes_version)
    for alternative in constraint.split("||"):
        text = alternative.strip()
        conditions = []
        position = 0
        while position < len(text):
            if text[position] in " ,":
                position += 1
                continue
            match = _CONDITION.match(text, position)
            if not match or match.end() == position:
                raise KubeVersionError(f"kubeVersion {constraint!r} does not parse at {text[position:]!r}")
            conditions.append(match)
            position = match.end()
        if not conditions:
            raise KubeVersionError(f"kubeVersion {constraint!r} has an empty alternative")
        if all(_condition_holds(m.group(1) or "", (m.group(2), m.group(3), m.group(4)), version) for m in conditions):
            return True
    return False

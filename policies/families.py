"""The rule families per policy pack: what each pack under policies/<pack>/ serves (see docs/policies.md).

Kept out of `policies.rules` so that importing a helper of that package (or an admission reproduction, which uses
those helpers) does not load every family, and the security family (which includes the admission rules) does not
import itself back through the package.
"""

from __future__ import annotations

from .admission import rules as admission
from .rules import gitops, security, slurm
from .rules.rule import Rule

FAMILIES: dict[str, tuple[Rule, ...]] = {
    "gitops-drift": gitops.RULES,
    "security": (*security.RULES, *admission.RULES),
    "slurm-contract": slurm.RULES,
}
"""Rules per pack directory name: the security pack serves the admission rules too (policies/admission/rules.py)."""

ALL_RULES: tuple[Rule, ...] = (*FAMILIES["gitops-drift"], *FAMILIES["security"], *FAMILIES["slurm-contract"])

__all__ = ["ALL_RULES", "FAMILIES"]

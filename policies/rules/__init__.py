"""Policy rules as plain typed functions, one module per family (see docs/policies.md).

Each family module exports `RULES`; the packs under policies/<pack>/ only assemble them (through
policies/framework.py) and the unit tests call them directly.
"""

from __future__ import annotations

from . import gitops, security, slurm
from .rule import ResourceRule, Rule, StackRule

FAMILIES: dict[str, tuple[Rule, ...]] = {
    "gitops-drift": gitops.RULES,
    "security": security.RULES,
    "slurm-contract": slurm.RULES,
}
"""Rules per pack directory name."""

ALL_RULES: tuple[Rule, ...] = (*gitops.RULES, *security.RULES, *slurm.RULES)

__all__ = ["ALL_RULES", "FAMILIES", "ResourceRule", "Rule", "StackRule", "gitops", "security", "slurm"]

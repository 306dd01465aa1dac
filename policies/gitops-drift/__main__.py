"""Policy pack `hpcforge-gitops-drift`: GitOps and drift.

Only assembles the rules of policies/rules/gitops/ (see docs/policies.md). The Pulumi CLI starts a pack
as `python -u -m pulumi.policy <engine-address> .` with this directory as working directory, so the
repository root (two levels up) is put on sys.path to import the `policies` package.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from policies.framework import serve
from policies.rules import gitops

serve(
    "hpcforge-gitops-drift",
    gitops.RULES,
    description=gitops.__doc__.splitlines()[0] if gitops.__doc__ else "hpcforge-gitops-drift",
)

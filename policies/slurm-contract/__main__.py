"""Policy pack `hpcforge-slurm-contract`: the Slurm/Kubernetes contract.

Only assembles the rules of policies/rules/slurm/ (see docs/policies.md). The Pulumi CLI starts a pack
as `python -u -m pulumi.policy <engine-address> .` with this directory as working directory, so the
repository root (two levels up) is put on sys.path to import the `policies` package.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from policies.framework import serve
from policies.rules import slurm

serve(
    "hpcforge-slurm-contract",
    slurm.RULES,
    description=slurm.__doc__.splitlines()[0] if slurm.__doc__ else "hpcforge-slurm-contract",
)

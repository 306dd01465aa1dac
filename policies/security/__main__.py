"""Policy pack `hpcforge-security`: security.

Only assembles the rules of policies/rules/security/ and the admission rules of policies/admission/ (policies/families.py,
see docs/policies.md). The Pulumi CLI starts a pack
as `python -u -m pulumi.policy <engine-address> .` with this directory as working directory, so the
repository root (two levels up) is put on sys.path to import the `policies` package.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from policies.families import FAMILIES
from policies.framework import serve
from policies.rules import security

serve(
    "hpcforge-security",
    FAMILIES["security"],
    description=security.__doc__.splitlines()[0] if security.__doc__ else "hpcforge-security",
)

"""Policy pack `hpcforge-security`: security.

Only assembles the rules of policies/rules/security/ (see docs/policies.md). The Pulumi CLI starts a pack
as `python -u -m pulumi.policy <engine-address> .` with this directory as working directory, so the
repository root (two levels up) is put on sys.path to import the `policies` package.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from policies.framework import serve
from policies.rules import security

serve(
    "hpcforge-security", security.RULES, description=security.__doc__.splitlines()[0] if security.__doc__ else "hpcforge-security"
)

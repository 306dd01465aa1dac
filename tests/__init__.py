"""The tests; their folders mirror the source (tests/components/..., tests/offline/..., tests/scripts/...).

`python -m pytest` run from inside tests/ puts this folder on sys.path, where tests/offline/ and tests/scripts/
would stand for the project's own offline/ and scripts/; the project is imported from the repository root only.
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

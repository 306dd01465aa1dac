"""`python -m offline {preview,render,check}`: run hpcforge without a cluster (see offline/cli.py)."""

import gc
import sys

from .cli import main

code = main()
# The process ends here. Python's finalization would run the cyclic collector over everything still
# alive (the recorded stack, the SDK's and pydantic's objects), which all goes with the process anyway:
# ~0.5 s of each command at a 100,000-host site (docs/performance.md). Frozen objects are not
# collected; the streams are still flushed and everything else is released as before.
gc.freeze()
sys.exit(code)

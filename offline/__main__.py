"""`./hpcforge COMMAND`: run hpcforge without a cluster (offline/cli.py hands each command to offline/<job>/command.py)."""

import gc
import sys

# A command is one short process, like the program's own (whose __main__.py switches the collector
# off for it): the collector stays off. Switched back on after the program (the offline engine hands
# back the collector as it found it), its first collections walked the millions of objects the
# program had allocated, for the few cycles among them: ~0.45 s of `render` and of `check` at a
# 100,000-host site (docs/performance.md), for memory that goes with the process anyway.
gc.disable()

from .cli import main  # noqa: E402 (after the collector is off: imports allocate too)

code = main()
# The process ends here. Python's finalization would run the cyclic collector over everything still
# alive (the recorded stack, the SDK's and pydantic's objects), which all goes with the process anyway:
# ~0.5 s of each command at a 100,000-host site (docs/performance.md). Frozen objects are not
# collected; the streams are still flushed and everything else is released as before.
gc.freeze()
sys.exit(code)

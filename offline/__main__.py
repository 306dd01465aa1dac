"""`python -m offline {preview,render,check}`: run hpcforge without a cluster (see offline/cli.py)."""

import sys

from .cli import main

sys.exit(main())

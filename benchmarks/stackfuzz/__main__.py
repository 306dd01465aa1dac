"""`python -m benchmarks.stackfuzz`: runs the cases and prints the table (see the package's docstring)."""

from __future__ import annotations

import argparse
import time

from benchmarks import stackfuzz

from .cases import BAD_CLASSES, Outcome
from .runner import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.stackfuzz", description=(stackfuzz.__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--show", type=int, default=5, help="examples shown per bad outcome")
    parser.add_argument("--progress", type=int, default=0, metavar="N",
                        help="print each bad outcome as it happens, and a line every N cases")  # fmt: skip
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def report(done: int, outcome: Outcome) -> None:
        if outcome.verdict in BAD_CLASSES:
            print(f"[{done}] {outcome.verdict}: {outcome.mutation.describe()}\n      {outcome.detail[:600]}", flush=True)
        if args.progress and done % args.progress == 0:
            print(f"[{done}] {time.perf_counter() - started:.0f} s", flush=True)

    tally = run(args.cases, args.seed, report if args.progress else None)
    print(f"{len(tally.outcomes)} mutated stack files (seed {args.seed}) in {time.perf_counter() - started:.0f} s\n")
    print(tally.table(args.show))
    bad = sum(tally.counts().get(verdict, 0) for verdict in BAD_CLASSES)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

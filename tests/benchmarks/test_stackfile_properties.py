"""Property-based suite: mutated stack files are refused by name or accepted rightly, never crash.

Hypothesis generates mutations of `Pulumi.dev.yaml`, `Pulumi.prod.yaml` and a generated example
site (benchmarks/stackfuzz/ describes each kind and its oracle) with a fixed seed; each file is
read as the Pulumi CLI reads it, run through the real program under the mock engine, its objects
are rendered and checked against the Kubernetes, CRD and chart schemas (../shared). No case may
end as a traceback, a crash after preview, a wrongly accepted file or a refusal that names no key.
`python -m benchmarks.stackfuzz --cases N` runs the same suite longer and prints the table.
"""

from __future__ import annotations

import pytest

from benchmarks.stackfuzz import BAD_CLASSES, run

CASES = 300
SEED = 14
MAX_CPU_SECONDS = 10


@pytest.mark.program
@pytest.mark.timeout(1800)
def test_mutated_stack_files_never_crash_nor_pass_wrongly() -> None:
    tally = run(CASES, SEED)
    table = tally.table(show=10)
    print(table)
    counts = tally.counts()
    assert len(tally.outcomes) >= CASES, table
    assert all(counts.get(verdict, 0) == 0 for verdict in BAD_CLASSES), table
    # A bound, not a benchmark: CPU time, which does not grow when other jobs share the machine (wall time
    # does: a 3 s case took 20 s on a loaded 2-core machine). The slowest cases are valid ones (the whole
    # program under the mock engine, rendering and the schema tier): about 3 s of CPU.
    slowest = max(outcome.cpu_seconds for outcome in tally.outcomes)
    assert slowest < MAX_CPU_SECONDS, table

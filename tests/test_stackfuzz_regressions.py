"""Cases the long stack-file fuzzer (`python -m benchmarks.stackfuzz`) found wrong, kept as regressions.

Each is the mutation the fuzzer printed, judged the fuzzer's way (read as the Pulumi CLI reads it,
the real program under the mock engine, rendering, schemas); the comment says what it was before the fix.
"""

from __future__ import annotations

import pytest

from benchmarks.stackfuzz import BAD_CLASSES, Mutation, Raw, judge

CASES = [
    # traceback: OSError "File name too long" from the prolog file check (seed 1).
    Mutation("dev", "raw-yaml", ("hpcforge:slurm", "prolog", 0, "file"), Raw("9" * 5000), "either"),
    # wrongly accepted: GPU health thresholds and the NCCL floor had no upper bound (seed 1).
    Mutation("prod", "number", ("hpcforge:gpu", "health", "epilogMaxMemoryUsedMib"), Raw("9" * 400), "reject"),
    Mutation("site", "number", ("hpcforge:gpu", "health", "epilogMaxMemoryUsedMib"), Raw("0x7fffffffffffffff"), "reject"),
    Mutation("site", "number", ("hpcforge:gpu", "evidence", "minBusBandwidth"), 2**32, "reject"),
]


@pytest.mark.program
@pytest.mark.parametrize("mutation", CASES, ids=[case.describe()[:80] for case in CASES])
def test_fuzzer_finding_is_refused_by_name_or_accepted_rightly(mutation: Mutation) -> None:
    outcome = judge(mutation)
    assert outcome.verdict not in BAD_CLASSES, f"{outcome.verdict}: {outcome.detail}"
    if mutation.expect == "reject":
        assert outcome.verdict == "rejected-by-name", outcome.detail

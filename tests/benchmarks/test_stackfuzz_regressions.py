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
    # wrongly accepted: an extra provisioning subnet's DHCP range covering its gateway (seed 2).
    Mutation(
        "prod",
        "copy-address",
        ("hpcforge:provisioning", "subnets", 0, "gateway"),
        "10.21.0.200",
        "reject",
        other=("hpcforge:provisioning", "subnets", 0, "range", "start"),
    ),
    # wrongly accepted by the oracle's mistake: a DHCP range of one address is a range (seed 3).
    Mutation(
        "prod",
        "copy-address",
        ("hpcforge:provisioning", "subnets", 0, "range", "start"),
        "10.21.0.250",
        "either",
        other=("hpcforge:provisioning", "subnets", 0, "range", "end"),
    ),
    # wrongly accepted: `true` for a number (a float field took it as 1.0) (seed 2).
    Mutation("site", "type-swap", ("hpcforge:gpu", "evidence", "minBusBandwidth"), True, "reject"),
    # wrongly accepted by the oracle's mistake: an upper-case Linux interface name is valid (seed 2).
    Mutation("dev", "bad-name", ("hpcforge:network", "attachments", 0, "master"), "ETH1X", "either"),
    Mutation("site", "bad-name", ("hpcforge:slurm", "topology", "switches", 0, "name"), "SPINEX", "either"),
    Mutation("site", "bad-name", ("hpcforge:slurm", "nodesets", 1, "features", 0), "BAREMETALX", "either"),
    # inventory files as whole files (seed 2 onwards: `inventory-text` mutations).
    Mutation("prod", "inventory-text", ("hpcforge:provisioning", "inventory"), "a BOM and a comment", "either"),
    Mutation("dev", "inventory-text", ("hpcforge:directory", "inventory"), "a tab before an entry", "reject"),
    Mutation("site", "inventory-text", ("hpcforge:provisioning", "inventory"), "a set", "reject"),
    Mutation("prod", "inventory-text", ("hpcforge:directory", "inventory"), "an entry repeated by an alias", "reject"),
    # wrongly accepted by the oracle's mistake: an inventory file is YAML 1.2, an unquoted date is a string (seed 1).
    Mutation("site", "raw-yaml", ("hpcforge:directory", "users", 0, "fullName"), Raw("2025-03-01T10:00:00Z"), "either"),
]


@pytest.mark.program
@pytest.mark.parametrize("mutation", CASES, ids=[case.describe()[:80] for case in CASES])
def test_fuzzer_finding_is_refused_by_name_or_accepted_rightly(mutation: Mutation) -> None:
    outcome = judge(mutation)
    assert outcome.verdict not in BAD_CLASSES, f"{outcome.verdict}: {outcome.detail}"
    if mutation.expect == "reject":
        assert outcome.verdict == "rejected-by-name", outcome.detail

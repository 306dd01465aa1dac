"""k8s.io/apimachinery as policies/rules/apimachinery.py reproduces it (the one copy the admission reproductions
share): a resource quantity's value (pkg/api/resource v0.36.2 quantity_test.go `TestQuantityParse`, its negative
and `+` variants, its invalid inputs and `TestJSONWhitespace`, replayed; and the answers of that ParseQuantity and
Quantity.UnmarshalJSON, run on the edge inputs below), IsDNS1123Subdomain (its table is in
tests/policies/admission/test_admission_slinky.py, run against Go's regexp there) and an aggregate error's message."""

from __future__ import annotations

import pytest

from policies.rules import apimachinery as am

# TestQuantityParse: (input, value as numerator, denominator) from the table's expected decQuantity(v, scale)
# = v * 10**scale, and maxAllowed (2**63 - 1) for the capped binary values.
QUANTITY_PARSE = [
    ("0", 0, 1),
    ("0n", 0, 1),
    ("0u", 0, 1),
    ("0m", 0, 1),
    ("0Ki", 0, 1),
    ("0k", 0, 1),
    ("0Mi", 0, 1),
    ("0M", 0, 1),
    ("0Gi", 0, 1),
    ("0G", 0, 1),
    ("0Ti", 0, 1),
    ("0T", 0, 1),
    ("1", 1, 1),
    ("1Ki", 1024, 1),
    ("8Ki", 8192, 1),
    ("7Mi", 7340032, 1),
    ("6Gi", 6442450944, 1),
    ("5Ti", 5497558138880, 1),
    ("4Pi", 4503599627370496, 1),
    ("3Ei", 3458764513820540928, 1),
    ("10Ti", 10995116277760, 1),
    ("100Ti", 109951162777600, 1),
    ("5n", 1, 200000000),
    ("4u", 1, 250000),
    ("3m", 3, 1000),
    ("9", 9, 1),
    ("8k", 8000, 1),
    ("50k", 50000, 1),
    ("7M", 7000000, 1),
    ("6G", 6000000000, 1),
    ("5T", 5000000000000, 1),
    ("40T", 40000000000000, 1),
    ("300T", 300000000000000, 1),
    ("2P", 2000000000000000, 1),
    ("1E", 1000000000000000000, 1),
    ("1E-3", 1, 1000),
    ("1e3", 1000, 1),
    ("1E6", 1000000, 1),
    ("1e9", 1000000000, 1),
    ("1E12", 1000000000000, 1),
    ("1e15", 1000000000000000, 1),
    ("1E18", 1000000000000000000, 1),
    ("1e14", 100000000000000, 1),
    ("1e13", 10000000000000, 1),
    ("1e3", 1000, 1),
    ("100.035k", 100035, 1),
    ("0.001", 1, 1000),
    ("0.0005k", 1, 2),
    ("0.005", 1, 200),
    ("0.05", 1, 20),
    ("0.5", 1, 2),
    ("0.00050k", 1, 2),
    ("0.00500", 1, 200),
    ("0.05000", 1, 20),
    ("0.50000", 1, 2),
    ("0.5e0", 1, 2),
    ("0.5e-1", 1, 20),
    ("0.5e-2", 1, 200),
    ("0.5e0", 1, 2),
    ("10.035M", 10035000, 1),
    ("1.2e3", 1200, 1),
    ("1.3E+6", 1300000, 1),
    ("1.40e9", 1400000000, 1),
    ("1.53E12", 1530000000000, 1),
    ("1.6e15", 1600000000000000, 1),
    ("1.7E18", 1700000000000000000, 1),
    ("9.01", 901, 100),
    ("8.1k", 8100, 1),
    ("7.123456M", 7123456, 1),
    ("6.987654321G", 6987654321, 1),
    ("5.444T", 5444000000000, 1),
    ("40.1T", 40100000000000, 1),
    ("300.2T", 300200000000000, 1),
    ("2.5P", 2500000000000000, 1),
    ("1.01E", 1010000000000000000, 1),
    ("3.001n", 1, 250000000),
    ("1.1E-9", 1, 500000000),
    ("0.0000000001", 1, 1000000000),
    ("0.0000000005", 1, 1000000000),
    ("0.00000000050", 1, 1000000000),
    ("0.5e-9", 1, 1000000000),
    ("0.9n", 1, 1000000000),
    ("0.00000012345", 31, 250000000),
    ("0.00000012354", 31, 250000000),
    ("9Ei", 9223372036854775807, 1),
    ("9223372036854775807Ki", 9223372036854775807, 1),
    ("12E", 12000000000000000000, 1),
    ("100.035Ki", 2560896, 25),
    ("0.5Mi", 524288, 1),
    ("0.05Gi", 268435456, 5),
    ("0.025Ti", 137438953472, 5),
    ("0.000000000001Ki", 1, 500000000),
    (".001", 1, 1000),
    (".0001k", 1, 10),
    ("1.", 1, 1),
    ("1.G", 1000000000, 1),
]

INVALID = ["", "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 "]

FORMAT_WRONG = am.ERR_FORMAT_WRONG
# What apimachinery v0.36.2's ParseQuantity answers (value, or error) on inputs the upstream table leaves out:
# no digit at all (read as 0 where its int64 path takes it, an error where its inf.Dec path does), an exponent
# that int32() wraps, a value far below 1n, a capped negative binary value, suffixes it refuses.
GO_ANSWERS: list[tuple[str, tuple[int, int] | str]] = [
    ("Ki", (0, 1)),
    ("Ti", (0, 1)),
    ("Pi", am.ERR_NUMERIC),
    ("Ei", am.ERR_NUMERIC),
    (".", (0, 1)),
    ("+", (0, 1)),
    ("-.", (0, 1)),
    (".e-9", (0, 1)),
    (".e-10", am.ERR_NUMERIC),
    (".Ki", (0, 1)),
    ("1e4294967296", (1, 1)),
    ("1e-100000", (1, 10**9)),
    ("-1e-100000", (-1, 10**9)),
    ("-9Ei", (-(2**63 - 1), 1)),
    ("1e", am.ERR_SUFFIX),
    ("1K", am.ERR_SUFFIX),
    ("1Mi3", am.ERR_SUFFIX),
    ("1e+3", (1000, 1)),
    ("\t1", FORMAT_WRONG),
    ("99999999999999999999", (99999999999999999999, 1)),
    ("-0.0000000001Ei", (-115292150460684698, 10**9)),
]
# Quantity.UnmarshalJSON of a JSON string as Go's encoding/json writes it: white space written as it is
# trimmed, an escaped character (a control character, U+2028, <, >, &) left as an escape: no quantity.
GO_JSON_ANSWERS: list[tuple[object, tuple[int, int] | None]] = [
    (" 1", (1, 1)),
    ("1 ", (1, 1)),
    (1, (1, 1)),
    (10, (10, 1)),
    (-1, (-1, 1)),
    (" 1 ", (1, 1)),
    ("\u00a01\u3000", (1, 1)),
    ("\t1", None),
    ("\u20281", None),
    ("1<", None),
    (1.5, (3, 2)),
    (1e16, (10**16, 1)),
    (True, None),
    (None, None),
    ([1], None),
]


@pytest.mark.parametrize(("text", "numerator", "denominator"), QUANTITY_PARSE)
def test_quantity_parse_table(text: str, numerator: int, denominator: int) -> None:
    want = am.compare((numerator, denominator), (0, 1))
    assert am.compare(am.parse_quantity(text), (numerator, denominator)) == 0
    assert am.compare(am.parse_quantity("+" + text), (numerator, denominator)) == 0
    assert am.compare(am.parse_quantity("-" + text), (-numerator, denominator)) == 0
    assert am.compare(am.parse_quantity("-" + text), (0, 1)) == -want


@pytest.mark.parametrize("text", INVALID)
def test_quantity_parse_invalid(text: str) -> None:
    with pytest.raises(am.QuantityError):
        am.parse_quantity(text)


@pytest.mark.parametrize(("text", "answer"), GO_ANSWERS)
def test_quantity_parse_as_go_answers(text: str, answer: tuple[int, int] | str) -> None:
    if isinstance(answer, str):
        with pytest.raises(am.QuantityError) as refused:
            am.parse_quantity(text)
        assert str(refused.value) == answer
    else:
        assert am.compare(am.parse_quantity(text), answer) == 0


@pytest.mark.parametrize(("value", "answer"), GO_JSON_ANSWERS)
def test_quantity_from_json(value: object, answer: tuple[int, int] | None) -> None:
    found = am.quantity(value)
    if answer is None:
        assert found is None
    else:
        assert found is not None and am.compare(found, answer) == 0


def test_huge_exponent_not_evaluated() -> None:
    """Beyond 10**10000 the exact value is not computed: not a quantity here (Go keeps it as an exponent)."""
    assert am.quantity("1e10000") == (10**10000, 1)
    assert am.quantity("1e10001") is None


def test_aggregate_message() -> None:
    """errors.go aggregate.Error: "" for none, one message as it is, else each once in order within [...]."""
    assert am.aggregate_message([]) == ""
    assert am.aggregate_message(["a"]) == "a"
    assert am.aggregate_message(["a", "a"]) == "a"
    assert am.aggregate_message(["b", "a", "b"]) == "[b, a]"


def test_dns1123_subdomain_counts_bytes() -> None:
    """Go's len is the byte count: a 127-character name of 2-byte characters is over 253 (and refused by the
    regexp too)."""
    assert am.is_dns1123_subdomain("a" * 253) == []
    assert am.is_dns1123_subdomain("é" * 127) == ["must be no more than 253 characters", am.DNS1123_SUBDOMAIN_ERROR]

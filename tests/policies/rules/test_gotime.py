"""Go's time.ParseDuration as policies/rules/gotime.py reproduces it (the one copy admission/slinky and
admission/mariadb share): Go's own src/time/time_test.go tables (`parseDurationTests`, `parseDurationErrorTests`,
go1.19.8), then Go itself (Debian's golang-go) on the same inputs and more, value and error message alike."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from policies.rules import gotime
from tests.helpers import go_answers, go_program, require_binaries

NS, US, MS, S, MIN, H = 1, 10**3, 10**6, 10**9, 60 * 10**9, 3600 * 10**9
PARSE_DURATION_TESTS = [
    ("0", 0),
    ("5s", 5 * S),
    ("30s", 30 * S),
    ("1478s", 1478 * S),
    ("-5s", -5 * S),
    ("+5s", 5 * S),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * S),
    ("5.6s", 5 * S + 600 * MS),
    ("5.s", 5 * S),
    (".5s", 500 * MS),
    ("1.0s", 1 * S),
    ("1.00s", 1 * S),
    ("1.004s", 1 * S + 4 * MS),
    ("1.0040s", 1 * S + 4 * MS),
    ("100.00100s", 100 * S + 1 * MS),
    ("10ns", 10 * NS),
    ("11us", 11 * US),
    ("12µs", 12 * US),
    ("12μs", 12 * US),
    ("13ms", 13 * MS),
    ("14s", 14 * S),
    ("15m", 15 * MIN),
    ("16h", 16 * H),
    ("3h30m", 3 * H + 30 * MIN),
    ("10.5s4m", 4 * MIN + 10 * S + 500 * MS),
    ("-2m3.4s", -(2 * MIN + 3 * S + 400 * MS)),
    ("1h2m3s4ms5us6ns", 1 * H + 2 * MIN + 3 * S + 4 * MS + 5 * US + 6 * NS),
    ("39h9m14.425s", 39 * H + 9 * MIN + 14 * S + 425 * MS),
    ("52763797000ns", 52763797000 * NS),
    ("0.3333333333333333333h", 20 * MIN),
    ("9007199254740993ns", (1 << 53) + 1),
    ("9223372036854775807ns", (1 << 63) - 1),
    ("9223372036854775.807us", (1 << 63) - 1),
    ("9223372036s854ms775us807ns", (1 << 63) - 1),
    ("-9223372036854775808ns", -(1 << 63)),
    ("-9223372036854775.808us", -(1 << 63)),
    ("-9223372036s854ms775us808ns", -(1 << 63)),
    ("-2562047h47m16.854775808s", -(1 << 63)),
    ("0.100000000000000000000h", 6 * MIN),
    ("0.830103483285477580700h", 49 * MIN + 48 * S + 372539827 * NS),
]
PARSE_DURATION_ERROR_TESTS = [
    "",
    "3",
    "-",
    "s",
    ".",
    "-.",
    ".s",
    "+.s",
    "1d",
    "9223372036854775810ns",
    "9223372036854775808ns",
    "-9223372036854775809ns",
    "9223372036854776us",
    "3000000h",
    "9223372036854775.808us",
    "9223372036854ms775us808ns",
]


@pytest.mark.parametrize(("text", "want"), PARSE_DURATION_TESTS)
def test_parse_duration_table(text: str, want: int) -> None:
    assert gotime.parse_duration(text) == want


@pytest.mark.parametrize("text", PARSE_DURATION_ERROR_TESTS)
def test_parse_duration_error_table(text: str) -> None:
    """time_test.go checks that the message quotes the input; for these ASCII inputs Go's quote is JSON's."""
    with pytest.raises(gotime.GoError, match=json.dumps(text).replace(".", r"\.").replace("+", r"\+")):
        gotime.parse_duration(text)


def test_quote() -> None:
    """time's `quote`: `"` and `\\` escaped, each byte of a non-ASCII or control rune as `\\xNN`."""
    assert gotime.quote('a"b\\c') == '"a\\"b\\\\c"'
    assert gotime.quote("1µs\x01\x7f") == '"1\\xc2\\xb5s\\x01\x7f"'
    assert gotime.quote(b"\xe2\x82x") == '"\\xe2\\x82x"'  # invalid UTF-8: one byte at a time
    with pytest.raises(gotime.GoError) as refused:
        gotime.parse_duration("1é")
    assert str(refused.value) == 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'


def test_parse_duration_sums_as_go_does() -> None:
    """Go sums the parts in a uint64: two parts of 1<<63 wrap to 0, which Go returns without an error."""
    assert gotime.parse_duration("9223372036854775808ns9223372036854775808ns") == 0
    assert gotime.parse_duration("-9223372036854775808ns9223372036854775808ns") == 0
    with pytest.raises(gotime.GoError, match="invalid duration"):
        gotime.parse_duration("9223372036854775808ns1ns")


GO_ORACLE = """package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var s string
		json.Unmarshal(in.Bytes(), &s)
		d, err := time.ParseDuration(s)
		message := ""
		if err != nil {
			message = err.Error()
		}
		b, _ := json.Marshal(map[string]interface{}{"ns": int64(d), "err": message})
		fmt.Println(string(b))
	}
}
"""

OTHER_INPUTS = [
    *["1.5", "1 s", "1s ", " 1s", "\x85\x85", "\xffff", '1x"y', "1\\s", "1µx", "1é", "1\x01s", "µ", "1\ufffd", "1\ud800s"],
    *["9223372036854775808ns9223372036854775808ns", "-9223372036854775808ns9223372036854775808ns"],
    *["9223372036854775808ns1ns", "1" + "0" * 5000 + "ns", "0." + "9" * 5000 + "s", "+5", "-5", "007", "1_0"],
    *["0.5m", "1m0.000000001s", "59s", "1m", "1e3s", "1.2.3s", "1..s", "-+1s", "1h-1m", "99999999999999999999"],
    *[f"{n}h" for n in (0, 1, 720, 2562047, 2562048, 10**12)],  # hpcforge's backups.maxRetention around the limit
]


def test_parse_duration_agrees_with_go(tmp_path: Path) -> None:
    """Value, or error message, of Go's own time.ParseDuration on the tables, the inputs above (quoting, overflow
    and the uint64 sum, a 5,000-digit number) and seeded random strings over digits, units, signs, quotes and
    non-ASCII."""
    require_binaries("go")
    program = go_program(tmp_path, GO_ORACLE, "go-parse-duration")
    rng = random.Random(31)
    alphabet = '0123456789.+-hmsnuµμ é"\\\x01'
    inputs = [t for t, _ in PARSE_DURATION_TESTS] + PARSE_DURATION_ERROR_TESTS + OTHER_INPUTS
    inputs += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(1000)]
    for value, go in zip(inputs, go_answers(program, inputs), strict=True):
        try:
            ours, message = gotime.parse_duration(value), ""
        except gotime.GoError as error:
            ours, message = 0, str(error)
        assert (ours, message) == (go["ns"], go["err"]), value


# Go src/time/time_test.go durationTests: Duration.String (cert-manager's and MetalLB's messages print durations so).
SHOWN = [
    (0, "0s"),
    (1, "1ns"),
    (1100, "1.1\u00b5s"),
    (2200 * 10**3, "2.2ms"),
    (3300 * 10**6, "3.3s"),
    (4 * 60 * 10**9 + 5 * 10**9, "4m5s"),
    (4 * 60 * 10**9 + 5001 * 10**6, "4m5.001s"),
    (5 * 3600 * 10**9 + 6 * 60 * 10**9 + 7001 * 10**6, "5h6m7.001s"),
    (8 * 60 * 10**9 + 1, "8m0.000000001s"),
    ((1 << 63) - 1, "2562047h47m16.854775807s"),
    (-(1 << 63), "-2562047h47m16.854775808s"),
]


@pytest.mark.parametrize(("nanoseconds", "shown"), SHOWN)
def test_format_duration_prints_as_go_does(nanoseconds: int, shown: str) -> None:
    assert gotime.format_duration(nanoseconds) == shown

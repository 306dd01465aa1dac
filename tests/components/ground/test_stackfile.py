"""Stack files are read with gopkg.in/yaml.v3's rules, as the Pulumi CLI reads them (components/ground/yamlv3.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from components.ground.yamlv3 import Timestamp, go_json_float, resolve_plain
from offline.program.stackfile import StackFileError, parse_stack_text, read_stack_file
from tests.helpers import REPO

# (plain scalar, value yaml.v3 resolves it to); resolve.go line numbers on the v3 branch.
SCALARS = [
    ("true", True),  # lines 52-53: only true/True/TRUE and false/False/FALSE are booleans
    ("False", False),
    ("yes", "yes"),
    ("no", "no"),
    ("NO", "NO"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("~", None),  # line 54
    ("null", None),
    ("Null", None),
    ("NULL", None),
    ("nil", "nil"),
    ("30:00", "30:00"),  # lines 165-167: no base-60 numbers
    ("1:00:00", "1:00:00"),
    ("010000", 4096),  # line 192: strconv.ParseInt(plain, 0, 64), a leading 0 is octal
    ("0o17", 15),
    ("0x1F", 31),
    ("0b101", 5),
    ("-0b101", -5),
    ("09", 9.0),  # not octal, then the float regex (line 204)
    ("1_000", 1000),  # line 191: '_' removed
    ("+12", 12),
    ("-7", -7),
    ("9223372036854775807", 2**63 - 1),
    ("18446744073709551615", 2**64 - 1),  # line 200: ParseUint
    ("18446744073709551616", 1.8446744073709552e19),  # then a float
    ("1e3", 1000.0),
    ("1.5", 1.5),
    (".5", 0.5),
    ("1.", 1.0),
    ("1e400", "1e400"),  # ParseFloat range error: stays a string
    ("9" * 5000, "9" * 5000),
    (".inf", float("inf")),
    ("-.Inf", float("-inf")),
    ("0x", "0x"),
    ("1.2.3", "1.2.3"),
    ("10.0.0.1", "10.0.0.1"),
    ("500m", "500m"),
    ("4Gi", "4Gi"),
    ("2025-03-01", Timestamp("2025-03-01")),  # lines 182-189, parseTimestamp
    ("2025-3-1", Timestamp("2025-3-1")),
    ("2025-03-01T10:00:00Z", Timestamp("2025-03-01T10:00:00Z")),
    ("2025-02-30", "2025-02-30"),  # time.Parse refuses the day: a string
    ("2025-03-01x", "2025-03-01x"),
]


@pytest.mark.parametrize(("text", "expected"), SCALARS, ids=[s[0][:20] for s in SCALARS])
def test_plain_scalar_resolves_like_yaml_v3(text: str, expected: object) -> None:
    value = resolve_plain(text)
    assert value == expected
    assert type(value) is type(expected)


# What the program receives: pulumi object.go MarshalString and Go's encoding/json.
PROGRAM_STRINGS = [
    ("hpcforge:a: yes", "yes"),
    ("hpcforge:a: '010000'", "010000"),
    ("hpcforge:a: true", "true"),
    ("hpcforge:a: ~", "null"),
    ("hpcforge:a:", "null"),
    ("hpcforge:a: 1.0", "1"),
    ("hpcforge:a: {b: 1e21, c: 1e-7, d: 0.000001, e: 30:00, f: NO}", '{"b":1e+21,"c":1e-7,"d":0.000001,"e":"30:00","f":"NO"}'),
    ("hpcforge:a: {z: 1, a: [x, '<&>']}", '{"a":["x","\\u003c\\u0026\\u003e"],"z":1}'),
    ("a: 1", "1"),  # a key without namespace gets the project's (workspace/loaders.go)
    ("hpcforge:config:a: 1", "1"),
]


@pytest.mark.parametrize(("line", "expected"), PROGRAM_STRINGS)
def test_config_value_reaches_program_as_cli_string(line: str, expected: str) -> None:
    values, _ = parse_stack_text(f"config:\n  {line}\n", "t.yaml")
    assert values == {"hpcforge:a": expected}


def test_go_json_float_switches_to_exponent_at_1e21() -> None:
    assert go_json_float(1e20) == "100000000000000000000"
    assert go_json_float(1e21) == "1e+21"
    assert go_json_float(1.5e-7) == "1.5e-7"


REFUSED = [
    ("hpcforge:a: 010000", "hpcforge:a: 010000 has a leading zero, so the Pulumi CLI reads it as the octal number 4096"),
    ("hpcforge:a: {gid: 09}", "hpcforge:a.gid: 09 has a leading zero, so the Pulumi CLI reads it as 9.0"),
    ("hpcforge:a: 2025-03-01", "hpcforge:a: 2025-03-01 is an unquoted date"),
    ("hpcforge:a: {when: 2025-03-01 10:00:00}", "hpcforge:a.when: 2025-03-01 10:00:00 is an unquoted date"),
    ("hpcforge:a: !!binary aGVsbG8=", "hpcforge:a: the YAML tag !!binary has no JSON equivalent"),
    ("hpcforge:a: !!set {x, y}", "hpcforge:a: the YAML tag !!set has no JSON equivalent"),
    ("hpcforge:a: {b: !!omap [x: 1]}", "hpcforge:a.b: the YAML tag !!omap"),
    ("hpcforge:a: {2025-03-01: x}", "the mapping key `2025-03-01` is not a string"),
    ("hpcforge:a: {1: x}", "the mapping key `1` is not a string"),
    ("hpcforge:a: {? [x]: y}", "a list or mapping used as a mapping key"),
    ("hpcforge:a: {b: 1, b: 2}", "hpcforge:a: mapping key 'b' already defined at line 2"),
    ("hpcforge:a: [1, .nan]", "hpcforge:a[1]: .nan is not a number JSON can carry"),
    ("hpcforge:a: {b: !!int x}", "hpcforge:a.b: cannot decode !!str `x` as a !!int"),
    ("hpcforge:a: *nowhere", "unknown anchor 'nowhere'"),
    ("a:b:c: 1", "a:b:c: not a configuration key"),
]


@pytest.mark.parametrize(("line", "message"), REFUSED)
def test_stack_file_value_refused_by_name(line: str, message: str) -> None:
    with pytest.raises(StackFileError) as caught:
        parse_stack_text(f"config:\n  {line}\n", "t.yaml")
    assert message in "\n".join(caught.value.messages)


def test_key_given_twice_at_top_level_refused() -> None:
    with pytest.raises(StackFileError, match="mapping key 'hpcforge:domain' already defined at line 2"):
        parse_stack_text("config:\n  hpcforge:domain: a.org\n  hpcforge:domain: b.org\n", "t.yaml")


def test_anchor_bomb_refused_fast() -> None:
    lines = ['    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghijklmnop":
        lines.append(f"    {name}: &{name} [{', '.join(['*' + previous] * 9)}]")
        previous = name
    started = time.perf_counter()
    with pytest.raises(StackFileError, match="excessive aliasing"):
        parse_stack_text("config:\n  hpcforge:x:\n" + "\n".join(lines) + "\n", "t.yaml")
    assert time.perf_counter() - started < 1.0


def test_moderate_aliases_and_merge_keys_expand() -> None:
    text = "config:\n  hpcforge:x:\n    base: &b {p: 1, q: 2}\n    m: {<<: *b, q: 3}\n    n: *b\n"
    values, _ = parse_stack_text(text, "t.yaml")
    assert values["hpcforge:x"] == '{"base":{"p":1,"q":2},"m":{"p":1,"q":3},"n":{"p":1,"q":2}}'


def test_deep_nesting_refused_without_recursion() -> None:
    with pytest.raises(StackFileError, match="nested more than 64 levels deep"):
        parse_stack_text("config:\n  hpcforge:a: " + "[" * 3000 + "]" * 3000 + "\n", "t.yaml")


def test_second_document_refused() -> None:
    with pytest.raises(StackFileError, match="a second YAML document"):
        parse_stack_text("config:\n  hpcforge:a: 1\n---\nconfig: {}\n", "t.yaml")


def test_secure_values_become_placeholders() -> None:
    values, secret = parse_stack_text("config:\n  hpcforge:k:\n    secure: v1:abc\n", "t.yaml")
    assert secret == ["hpcforge:k"]
    assert values["hpcforge:k"] == "offline-placeholder-for-secret-hpcforge-k"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_project_stack_files_read(stack: str) -> None:
    stack_file = read_stack_file(REPO / f"Pulumi.{stack}.yaml")
    assert stack_file.config["hpcforge:environment"] == stack


@pytest.mark.parametrize(
    ("name", "kind", "policy"),
    [("production", "development", "policies/config/dev.json"), ("lab", "production", "policies/config/prod.json")],
)
def test_policy_configuration_follows_environment_kind_not_name(tmp_path: Path, name: str, kind: str, policy: str) -> None:
    from offline.policy.command import policy_config_for

    path = tmp_path / "Pulumi.any.yaml"
    path.write_text(f"config:\n  hpcforge:environment: {name}\n  hpcforge:environmentKind: {kind}\n")
    assert policy_config_for(path) == policy


def test_policy_configuration_without_kind_refused_by_name(tmp_path: Path) -> None:
    from offline.policy.command import policy_config_for

    path = tmp_path / "Pulumi.any.yaml"
    path.write_text("config:\n  hpcforge:environment: production\n")
    with pytest.raises(StackFileError, match="hpcforge:environmentKind: missing"):
        policy_config_for(path)


def test_a_nul_byte_is_refused_naming_its_line_and_column() -> None:
    # libyaml refused it already, with a position in characters from the start ("position 23") and no line.
    with pytest.raises(StackFileError) as caught:
        parse_stack_text("config:\n  hpcforge:a: x\x00y\n", "t.yaml")
    assert caught.value.messages == [
        "t.yaml (line 2): a NUL byte (U+0000) at column 16: YAML does not allow control characters in a file "
        "(YAML 1.2.2, 5.1 c-printable); remove it"
    ]

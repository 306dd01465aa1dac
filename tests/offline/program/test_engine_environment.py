"""The offline engine passes config as the Pulumi CLI does (PULUMI_CONFIG) and refuses what execve would."""

from __future__ import annotations

import errno
import io
import subprocess
from pathlib import Path

import pytest

from offline.policy.packs import PackSpec
from offline.policy.session import check_stack
from offline.program.engine import RecordedStack, run_program
from offline.program.environ import (
    MAX_ARG_STRLEN,
    ArgumentListTooLong,
    exec_refusal,
    go_json_string_map,
    policy_pack_environment,
    program_environment,
)
from offline.program.stackfile import StackFile, read_stack_file
from tests.helpers import REPO

pytestmark = pytest.mark.policy_protocol

PACKS = ("gitops-drift", "security", "slurm-contract")


def test_config_json_is_written_as_go_marshals_a_string_map() -> None:
    # encoding/json: keys sorted, no spaces, HTML-safe escapes for <, > and &, UTF-8 kept as is.
    config = {"b:key": "x<y>&z", "a:key": '{"k": "é"}'}
    assert go_json_string_map(config) == '{"a:key":"{\\"k\\": \\"é\\"}","b:key":"x\\u003cy\\u003e\\u0026z"}'


@pytest.mark.parametrize("extra", [0, 1], ids=["at the limit", "one byte over"])
def test_the_string_limit_is_the_kernels(extra: int) -> None:
    # "X=" + value + NUL: exactly MAX_ARG_STRLEN bytes is allowed, one more is E2BIG.
    value = "a" * (MAX_ARG_STRLEN - 3 + extra)
    env = {"X": value}
    refused = exec_refusal(["/bin/true"], env)
    try:
        subprocess.run(["/bin/true"], env=env, check=True)
        kernel_refused = False
    except OSError as error:
        assert error.errno == errno.E2BIG
        kernel_refused = True
    assert (refused is not None) == kernel_refused == bool(extra)


def test_the_total_limit_is_the_kernels() -> None:
    # Many strings, each under the per-string limit, that together exceed the argv+envp budget.
    env = {f"V{i}": "a" * 100_000 for i in range(80)}
    refusal = exec_refusal(["/bin/true"], env)
    assert refusal is not None and refusal.what == "arguments and environment together"
    with pytest.raises(OSError) as raised:
        subprocess.run(["/bin/true"], env=env, check=True)
    assert raised.value.errno == errno.E2BIG


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_dev_and_prod_config_fit_what_the_cli_passes(stack: str) -> None:
    file = read_stack_file(REPO / f"Pulumi.{stack}.yaml", name=stack)
    program_env = program_environment({}, file.config, file.secret_keys)
    pack_env = policy_pack_environment({}, file.config, organization="o", project="hpcforge", stack=stack, dry_run=True)
    assert exec_refusal(["python"], program_env) is None
    assert exec_refusal(["pulumi-analyzer-policy-python"], pack_env) is None
    assert len(pack_env["PULUMI_CONFIG"]) < MAX_ARG_STRLEN // 4


def _oversized(stack: StackFile) -> StackFile:
    config = dict(stack.config)
    config["hpcforge:padding"] = "x" * MAX_ARG_STRLEN
    return StackFile(name=stack.name, path=stack.path, config=config, secret_keys=stack.secret_keys)


def test_the_program_is_refused_a_config_the_language_host_could_not_pass() -> None:
    stack = _oversized(read_stack_file(REPO / "Pulumi.dev.yaml", name="dev"))
    with pytest.raises(ArgumentListTooLong) as raised:
        run_program(stack, REPO)
    assert raised.value.cli_message.startswith("Problem executing program (could not run language executor): fork/exec ")
    assert raised.value.cli_message.endswith(": argument list too long")
    assert raised.value.refusal.what == "environment variable PULUMI_CONFIG"


def test_policy_packs_are_refused_a_config_the_cli_could_not_pass(dev_stack: RecordedStack) -> None:
    stack = _oversized(read_stack_file(REPO / "Pulumi.dev.yaml", name="dev"))
    specs = [PackSpec(REPO / "policies" / pack, None) for pack in PACKS]
    with pytest.raises(ArgumentListTooLong) as raised:
        check_stack(dev_stack, stack, specs, out=io.StringIO(), err=io.StringIO())
    assert raised.value.cli_message == (
        f'policy pack "{REPO / "policies" / "gitops-drift"}" failed to start: '
        "fork/exec pulumi-analyzer-policy-python: argument list too long"
    )


def test_cli_reports_the_refusal(tmp_path: Path) -> None:
    import yaml

    document = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text())
    document["config"]["hpcforge:padding"] = "x" * MAX_ARG_STRLEN
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump(document))
    completed = subprocess.run(
        [str(REPO / ".venv/bin/python"), "-m", "offline", "preview", "--stack", "dev", "--config", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert completed.returncode == 2
    assert "error: Problem executing program (could not run language executor): fork/exec" in completed.stderr
    assert "(environment variable PULUMI_CONFIG is 13" in completed.stderr and "Linux allows 131,072" in completed.stderr


REMEDIATING_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy


def remediate(args: ResourceValidationArgs):
    if args.resource_type != "kubernetes:core/v1:ConfigMap":
        return None
    props = dict(args.props)
    metadata = dict(props.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), "remediated": "yes"}
    props["metadata"] = metadata
    return props


PolicyPack("{name}", [ResourceValidationPolicy("add-label", "adds a label", remediate=remediate)],
           enforcement_level=EnforcementLevel.REMEDIATE)
"""

COPYING_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationArgs, ResourceValidationPolicy


def remediate(args: ResourceValidationArgs):
    if args.resource_type != "kubernetes:core/v1:ConfigMap":
        return None
    props = dict(args.props)
    metadata = dict(props.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    labels["seen"] = labels.get("remediated", "no")
    metadata["labels"] = labels
    props["metadata"] = metadata
    return props


PolicyPack("{name}", [ResourceValidationPolicy("copy-label", "copies the label", remediate=remediate)],
           enforcement_level=EnforcementLevel.REMEDIATE)
"""

CHECKING_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy


def validate(args: ResourceValidationArgs, report: ReportViolation):
    if args.resource_type == "kubernetes:core/v1:ConfigMap":
        labels = (args.props.get("metadata") or {}).get("labels") or {}
        if labels.get("seen") != "yes":
            report("the copying pack did not see the first remediation")


PolicyPack("{name}", [ResourceValidationPolicy("needs-label", "needs the label", validate=validate)],
           enforcement_level=EnforcementLevel.MANDATORY)
"""


def _pack(tmp_path: Path, name: str, source: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text(f"runtime: python\nversion: 0.0.1\ndescription: {name}\n")
    (folder / "__main__.py").write_text(source.replace("{name}", name))
    return folder


def test_a_remediation_is_seen_by_the_packs_after_it(dev_stack: RecordedStack, tmp_path: Path) -> None:
    # The requests to the packs go out together; a pack that remediates makes the later packs be
    # asked again with the new properties, as the engine applies remediations in pack order.
    first = PackSpec(_pack(tmp_path, "remediating", REMEDIATING_PACK), None)
    copy = PackSpec(_pack(tmp_path, "copying", COPYING_PACK), None)
    check = PackSpec(_pack(tmp_path, "checking", CHECKING_PACK), None)
    in_order = check_stack(dev_stack, None, [first, copy, check], out=io.StringIO(), err=io.StringIO())
    assert [d for d in in_order.diagnostics if d.policy == "needs-label"] == []
    copy_first = check_stack(dev_stack, None, [copy, first, check], out=io.StringIO(), err=io.StringIO())
    assert any(d.policy == "needs-label" for d in copy_first.diagnostics)


def test_policies_judge_the_resources_not_the_stack_config(prod_stack: RecordedStack) -> None:
    # Inventory facts reach the packs through the resources (the Grendel inventory, DNS zones, LDIF,
    # NodeSets), never through PULUMI_CONFIG: the same diagnostics with the config and without it.
    specs = [PackSpec(REPO / "policies" / pack, REPO / "policies" / "config" / "prod.json") for pack in PACKS]
    with_config = check_stack(
        prod_stack, read_stack_file(REPO / "Pulumi.prod.yaml", name="prod"), specs, out=io.StringIO(), err=io.StringIO()
    )
    empty = StackFile(name="prod", path=REPO / "Pulumi.prod.yaml", config={})
    without = check_stack(prod_stack, empty, specs, out=io.StringIO(), err=io.StringIO())
    key = [(d.policy, d.urn, d.message) for d in with_config.diagnostics]
    assert key == [(d.policy, d.urn, d.message) for d in without.diagnostics]
    assert with_config.analyzed == without.analyzed > 0


GO_MARSHAL = """package main

import (
	"encoding/json"
	"io"
	"os"
)

func main() {
	input, _ := io.ReadAll(os.Stdin)
	config := map[string]string{}
	if err := json.Unmarshal(input, &config); err != nil {
		panic(err)
	}
	out, err := json.Marshal(config)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(out)
}
"""


def test_config_json_matches_go_encoding_json(tmp_path: Path) -> None:
    # The CLI builds PULUMI_CONFIG with Go's json.Marshal of a map[string]string; compare with Go
    # itself (Debian's golang-go). Without \\b and \\f: Go writes those as \\u0008/\\u000c before 1.22.
    import json as json_module
    import os as os_module

    from tests.helpers import require_binaries

    go = require_binaries("go")["go"]
    config = {
        "hpcforge:b": "<script>&amp;</script>",
        "hpcforge:A": 'quote " backslash \\ newline \n tab \t ctrl \x01 del \x7f',
        "hpcforge:é": "unicode é 漢字 😀 line\u2028para\u2029end",
        "Z:last": "",
        "hpcforge:json": json_module.dumps({"hosts": [{"name": "cn001", "ip": "10.0.0.1"}]}),
    }
    (tmp_path / "main.go").write_text(GO_MARSHAL)
    env = {**os_module.environ, "GOCACHE": str(tmp_path / "cache"), "GOPATH": str(tmp_path / "gopath"), "GOFLAGS": "-mod=mod"}
    completed = subprocess.run(
        [go, "run", "main.go"],
        cwd=tmp_path,
        input=json_module.dumps(config).encode(),
        capture_output=True,
        env=env,
        check=True,
        timeout=300,
    )
    assert go_json_string_map(config).encode() == completed.stdout

"""docs/configuration.md: generated from the pydantic models, complete, and kept up to date."""

from __future__ import annotations

import enum
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, SecretStr

from components.ground.base import IPv4, K8sName, Quantity, StrictModel
from components.site.root import PlatformConfig
from docs import generate, reference
from tests.helpers import REPO

DOC = REPO / "docs" / "configuration.md"


def run_generator(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "docs.generate", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def table(text: str) -> dict[str, tuple[str, str, str]]:
    """key path -> (type, default, description) of every row of the section tables."""
    rows: dict[str, tuple[str, str, str]] = {}
    for line in text.splitlines():
        match = re.match(r"^\| `(hpcforge:[^`]+)` \| (.*) \|$", line)
        if match is None:
            continue
        cells = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", match.group(2))]
        assert len(cells) == 3, line
        assert match.group(1) not in rows, f"{match.group(1)} is documented twice"
        rows[match.group(1)] = (cells[0], cells[1], cells[2])
    return rows


@pytest.fixture(scope="module")
def rows() -> dict[str, tuple[str, str, str]]:
    return table(DOC.read_text(encoding="utf-8"))


# --- up to date -------------------------------------------------------------------------------------------------


def test_committed_reference_is_up_to_date() -> None:
    result = run_generator("--check", "--only", "reference")
    assert result.returncode == 0, f"{result.stderr}\n(run `make docs` and commit docs/configuration.md)"
    assert DOC.read_text(encoding="utf-8") == generate.render()


def test_output_is_deterministic() -> None:
    first = generate.render()
    assert generate.render() == first
    other_seed = run_generator("--check", "--only", "reference", env={"PYTHONHASHSEED": "12345"})
    assert other_seed.returncode == 0, other_seed.stderr


def test_a_changed_docstring_makes_the_check_fail(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(PlatformConfig.model_fields["domain"], "description", "A docstring edited in the model.")
    assert generate.main(["--check", "--only", "reference"]) == 1
    err = capsys.readouterr().err
    assert "docs/configuration.md is stale: run make docs" in err
    assert (
        "+| `hpcforge:domain` | DNS name: a DNS name of at least two labels (e.g. hpc.example.org) | required | A docstring edited in the model. |"
        in err
    )


def test_a_new_field_makes_the_check_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    class Extended(PlatformConfig):
        site_motd: str = "welcome"
        """Message of the day on the login nodes."""

    text = generate.render(Extended)
    assert "| `hpcforge:siteMotd` | string | `welcome` | Message of the day on the login nodes. |" in text
    assert not generate.check(DOC, text)
    # the same through the default root, as `make docs-check` runs it
    monkeypatch.setattr(generate, "render", lambda root=None: text)
    assert generate.main(["--check", "--only", "reference"]) == 1


def test_stale_file_fails_the_command_line(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text(DOC.read_text(encoding="utf-8").replace("integer (1..64)", "integer (1..8)"), encoding="utf-8")
    result = run_generator("--check", "--output", str(stale))
    assert result.returncode == 1
    assert "is stale: run make docs" in result.stderr and "integer (1..8)" in result.stderr
    missing = run_generator("--check", "--output", str(tmp_path / "absent.md"))
    assert missing.returncode == 1
    written = run_generator("--output", str(stale))
    assert written.returncode == 0 and stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")


# --- complete --------------------------------------------------------------------------------------------------


def reachable_models(root: type[BaseModel]) -> set[type[BaseModel]]:
    """Every model reachable from root through any annotation (independently of the generator)."""
    found: set[type[BaseModel]] = set()

    def visit(tp: Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp in found:
                return
            found.add(tp)
            for info in tp.model_fields.values():
                visit(info.annotation)
            return
        for arg in typing.get_args(tp):
            visit(arg)

    visit(root)
    return found


def test_every_field_of_every_reachable_model_is_documented(rows: dict[str, tuple[str, str, str]]) -> None:
    documented = {source for row in reference.all_rows() for source in row.sources}
    models = reachable_models(PlatformConfig)
    assert len(models) > 30
    missing = [f"{model.__name__}.{name}" for model in models for name in model.model_fields if (model, name) not in documented]
    assert not missing, f"fields missing from the reference: {missing}"
    assert {row.path for row in reference.all_rows()} == set(rows)


def test_one_section_per_top_level_key() -> None:
    text = DOC.read_text(encoding="utf-8")
    headings = re.findall(r"^## (hpcforge:\S+)$", text, re.MULTILINE)
    expected = [f"hpcforge:{info.alias or name}" for name, info in PlatformConfig.model_fields.items()]
    assert headings == expected
    for key in expected:
        assert f"[`{key}`](#{key.replace(':', '').lower()})" in text


def test_keys_are_written_as_users_write_them(rows: dict[str, tuple[str, str, str]]) -> None:
    for path in rows:
        assert re.fullmatch(r"hpcforge:[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*|\[\]|\.<key>)*", path), path
    assert "hpcforge:nodePools[].cpuPerNode" in rows and "hpcforge:gitops.apps[].repoURL" in rows


# --- concrete rows -----------------------------------------------------------------------------------------------


def test_concrete_rows(rows: dict[str, tuple[str, str, str]]) -> None:
    assert rows["hpcforge:network.pools[].addresses"] == (
        "list of string (at least 1 item): one range or a list of ranges; each a CIDR block (10.0.0.0/28), a first-last "
        "range (10.0.0.10-10.0.0.20) or a single IPv4 address",
        "required",
        "Address ranges: `10.0.0.10-10.0.0.20`, CIDRs or single addresses (given to MetalLB as `/32`); no two entries of "
        "any pool may overlap (MetalLB refuses the pool).",
    )
    assert rows["hpcforge:slurm.nodesets[].gpus.count"] == (
        "integer (1..64)",
        "required",
        "GPUs (or MIG devices) per node: the device-plugin limit AND the GRES count.",
    )
    assert rows["hpcforge:slurm.nodesets[].gpus"][:2] == ("object or null", "`null`")
    assert rows["hpcforge:environment"][1] == "required"
    assert rows["hpcforge:slurm"][1] == "required"
    assert rows["hpcforge:delivery"][:2] == ("one of 'pulumi' | 'argocd'", "`pulumi`")
    assert rows["hpcforge:network.advertisement.peers[].peerAsn"][:2] == ("integer (1..4294967295)", "required")
    assert rows["hpcforge:network.ingress.address"][0] == "IPv4 address or null"
    assert rows["hpcforge:network.dns.upstreams"][:2] == ("list of IPv4 address", '`["1.1.1.1", "9.9.9.9"]`')
    assert rows["hpcforge:network.dns.zones[].hosts"][:2] == ("mapping of DNS name to IPv4 address", "`{}`")
    assert rows["hpcforge:nodePools[].memoryPerNode"][0].startswith("Kubernetes quantity")
    assert (
        rows["hpcforge:network.attachments[].master"][0] == "Linux interface name (1 to 15 letters, digits, '_', '.', '-', '@')"
    )
    assert rows["hpcforge:slurm.controller.timeouts.minJobAge"][:2] == ("integer (2..4294967293)", "`300`")
    assert rows["hpcforge:tls.ca.duration"][:2] == ("duration (e.g. 90s, 15m, 2160h)", "`87600h`")


def test_defaults_come_from_the_parent_default(rows: dict[str, tuple[str, str, str]]) -> None:
    # Storage defaults to 10Gi, but the controller's and the database's own defaults override it.
    assert rows["hpcforge:directory.storage.size"][1] == "`10Gi`"
    assert rows["hpcforge:slurm.controller.storage.size"][1] == "`4Gi`"
    assert rows["hpcforge:database.storage.size"][1] == "`20Gi`"
    assert rows["hpcforge:slurm.controller"][1] == "see keys below"


def test_description_falls_back_to_the_class_docstring(rows: dict[str, tuple[str, str, str]]) -> None:
    assert rows["hpcforge:network.ingress"][2] == "Traefik, the site's ingress controller."
    assert rows["hpcforge:network.pools"][2] == "A MetalLB IPAddressPool."
    # a field docstring wins over the class docstring
    assert rows["hpcforge:tls.acme"][2].startswith("When set, ingress hosts may use the public `acme` issuer")


def test_discriminated_union_documents_each_variant(rows: dict[str, tuple[str, str, str]]) -> None:
    ipam = "hpcforge:network.attachments[].ipam"
    assert rows[ipam][0] == "object, one of 2 variants chosen by `type`: 'static' | 'whereabouts'"
    assert rows[ipam][1] == '`{"type": "static"}`'
    assert rows[f"{ipam}.type"][:2] == ("one of 'static' | 'whereabouts'", "required")
    assert rows[f"{ipam}.range"] == ("IPv4 network (CIDR)", "required", "Only with `type: whereabouts`.")
    assert rows[f"{ipam}.gateway"][0] == "IPv4 address or null"


# --- the generator is generic --------------------------------------------------------------------------------------


class _Disk(StrictModel):
    """A local disk."""

    kind: Literal["disk"]
    size: Quantity = "10Gi"


class _Nfs(StrictModel):
    """An NFS export."""

    kind: Literal["nfs"]
    server: IPv4
    """Address of the NFS server."""


class _Limits(StrictModel):
    pods: int = Field(default=10, gt=0, lt=100)
    ratio: float = Field(default=0.5, ge=0, le=1, description="Share of the node.")


class _Speed(enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class _Toy(StrictModel):
    """A model that exercises every shape the generator knows."""

    name: K8sName
    volumes: tuple[Annotated[_Disk | _Nfs, Field(discriminator="kind")], ...] = ()
    limits: _Limits | None = None
    per_team: dict[str, _Limits] = Field(default_factory=dict)
    either: _Disk | _Limits | None = None
    tags: Annotated[list[Annotated[str, Field(min_length=2)]], Field(max_length=3)] = Field(default_factory=list)
    limits_default: _Limits = Field(default_factory=lambda: _Limits(pods=20))
    count_or_name: int | str = 1
    speed: _Speed = _Speed.FAST
    token: SecretStr | None = None


class _ToyRoot(BaseModel):
    toy: _Toy


def test_generator_handles_every_shape() -> None:
    text = generate.render(_ToyRoot)
    toy = table(text)
    assert toy["hpcforge:toy"] == ("object", "required", "A model that exercises every shape the generator knows.")
    assert toy["hpcforge:toy.volumes"][0] == "list of objects, one of 2 variants chosen by `kind`: 'disk' | 'nfs'"
    assert toy["hpcforge:toy.volumes[].kind"][0] == "one of 'disk' | 'nfs'"
    assert toy["hpcforge:toy.volumes[].size"][2] == "Only with `kind: disk`."
    assert toy["hpcforge:toy.volumes[].server"] == (
        "IPv4 address",
        "required",
        "Only with `kind: nfs`. Address of the NFS server.",
    )
    assert toy["hpcforge:toy.limits"][:2] == ("object or null", "`null`")
    assert toy["hpcforge:toy.limits.pods"][:2] == ("integer (> 0, < 100)", "`10`")
    assert toy["hpcforge:toy.limits.ratio"] == ("number (0..1)", "`0.5`", "Share of the node.")
    assert toy["hpcforge:toy.perTeam"][:2] == ("mapping of string to object", "`{}`")
    assert toy["hpcforge:toy.perTeam.<key>.pods"][1] == "`10`"
    assert toy["hpcforge:toy.either"][0] == "object, one of 2 variants or null"
    assert toy["hpcforge:toy.either.size"][2].startswith("Only in the _Disk form (A local disk)")
    assert toy["hpcforge:toy.either.pods"][2] == "Only in the _Limits form."
    assert toy["hpcforge:toy.tags"] == ("list of string (at least 2 characters) (at most 3 items)", "`[]`", "")
    assert toy["hpcforge:toy.limitsDefault.pods"][1] == "`20`"
    assert toy["hpcforge:toy.countOrName"][:2] == ("integer or string", "`1`")
    assert toy["hpcforge:toy.speed"][:2] == ("one of 'fast' | 'slow'", "`fast`")
    assert toy["hpcforge:toy.token"][0].startswith("secret string")


class _Tree(StrictModel):
    """A model that contains itself."""

    label: str
    children: tuple[_Tree, ...] = ()


class _TreeRoot(BaseModel):
    tree: _Tree


def test_recursive_model_is_documented_once() -> None:
    tree = table(generate.render(_TreeRoot))
    assert set(tree) == {"hpcforge:tree", "hpcforge:tree.label", "hpcforge:tree.children"}
    assert tree["hpcforge:tree.children"][0] == "list of objects"


# --- accepted forms ---------------------------------------------------------------------------------------------


def test_every_validated_key_states_its_accepted_form() -> None:
    # A validator the generator cannot name would show as a bare "string" (a @field_validator) or as the
    # function's name (an Annotated validator): it must be described in NAMED_VALIDATORS or FIELD_VALIDATORS.
    assert reference.validators_without_form() == []


def test_a_field_validator_adds_its_form_to_the_type(rows: dict[str, tuple[str, str, str]]) -> None:
    assert "five-field cron schedule" in rows["hpcforge:backups.schedule"][0]
    assert "1024 < first <= last <= 65535" in rows["hpcforge:slurm.controller.srunPortRange"][0]
    assert rows["hpcforge:gpu.health.nvidiaSmi"][0] == "command name or path (letters, digits, '.', '_', '/', '-')"

"""The example backup recipient of Pulumi.prod.yaml (issue 39, item 10): `pulumi up` of a production stack refuses it
before any resource is registered; a preview and the offline runner warn on stderr."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import mocks, settings

from components.errors import InvalidConfigError
from components.layers.backups.config import EXAMPLE_KEY_RECIPIENT_SHA256, certificate_sha256, is_example_key_recipient
from components.site import deploy_guard
from components.site.loader import load_config
from offline.program.engine import ProgramConfigError
from tests.helpers import config_values, raw_config, require_binaries, run_stack, run_stack_file, write_variant
from tests.scripts.backup.test_key_export import make_recipient

EXAMPLE = config_values("prod")["hpcforge:backups"]["keyRecipient"]


def _other_certificate(tmp_path: Path) -> str:
    _, cert = make_recipient(tmp_path, require_binaries("openssl")["openssl"], "officer")
    return cert.read_text()


def test_the_example_certificate_is_known_by_its_fingerprint_as_openssl_prints_it() -> None:
    openssl = require_binaries("openssl")["openssl"]
    printed = subprocess.run(
        [openssl, "x509", "-noout", "-fingerprint", "-sha256"], input=EXAMPLE, capture_output=True, text=True, check=True
    )
    assert printed.stdout.strip().split("=", 1)[1].replace(":", "").lower() == EXAMPLE_KEY_RECIPIENT_SHA256
    assert certificate_sha256(EXAMPLE) == EXAMPLE_KEY_RECIPIENT_SHA256 and is_example_key_recipient(EXAMPLE)


def test_another_certificate_is_not_the_example(tmp_path: Path) -> None:
    assert not is_example_key_recipient(_other_certificate(tmp_path))
    assert certificate_sha256("-----BEGIN CERTIFICATE-----\n@@@\n-----END CERTIFICATE-----\n") is None


def _prod(**backups: Any) -> Any:
    values = config_values("prod")
    values["hpcforge:backups"] = {**values["hpcforge:backups"], **backups}
    return load_config(raw_config(values))


def test_only_a_production_stack_with_the_example_has_a_deploy_problem(tmp_path: Path) -> None:
    (problem,) = deploy_guard.deploy_problems(_prod())
    assert problem.startswith("hpcforge:backups.keyRecipient: this is the repository's EXAMPLE certificate")
    assert deploy_guard.deploy_problems(_prod(keyRecipient=_other_certificate(tmp_path))) == []
    dev = config_values("dev")
    dev["hpcforge:backups"] = {"volume": {}, "keyRecipient": EXAMPLE}
    assert deploy_guard.deploy_problems(load_config(raw_config(dev))) == []


class _Engine:
    """A monitor that is not a mock: the engine of a real `pulumi up` or `pulumi preview`."""


@pytest.mark.parametrize(
    ("dry_run", "monitor", "real"),
    [(False, _Engine(), True), (True, _Engine(), False), (False, object.__new__(mocks.MockMonitor), False)],
    ids=["up", "preview", "mocks"],
)
def test_only_an_update_by_the_real_engine_deploys(
    monkeypatch: pytest.MonkeyPatch, dry_run: bool, monitor: Any, real: bool
) -> None:
    monkeypatch.setattr(settings.SETTINGS, "dry_run", dry_run)
    monkeypatch.setattr(settings.SETTINGS, "monitor", monitor)
    assert deploy_guard.deploying_for_real() is real
    config = _prod()
    if real:
        with pytest.raises(InvalidConfigError) as raised:
            deploy_guard.guard_deploy(config)
        assert raised.value.messages == deploy_guard.deploy_problems(config)
    else:
        stderr = io.StringIO()
        deploy_guard.guard_deploy(config, stderr=stderr)
        assert stderr.getvalue().startswith("warning: hpcforge:backups.keyRecipient: this is the repository's EXAMPLE")
        assert stderr.getvalue().rstrip().endswith("(`pulumi up` refuses this)")


@pytest.mark.parametrize("preview", [False, True], ids=["offline", "offline-preview"])
def test_the_offline_runner_renders_prod_with_a_warning(capfd: pytest.CaptureFixture[str], preview: bool) -> None:
    """The mock engine runs with dry run off unless `--preview`: neither is a deployment."""
    stack = run_stack("prod", preview=preview)
    assert stack.resources
    assert "warning: hpcforge:backups.keyRecipient: this is the repository's EXAMPLE certificate" in capfd.readouterr().err


def test_pulumi_up_of_prod_is_refused_before_any_resource(monkeypatch: pytest.MonkeyPatch) -> None:
    """The program as `pulumi up` runs it (the guard's view of the engine forced to a real update)."""
    monkeypatch.setattr(deploy_guard, "deploying_for_real", lambda: True)
    with pytest.raises(ProgramConfigError) as raised:
        run_stack("prod")
    assert raised.value.registered == 0
    assert "hpcforge:backups.keyRecipient: this is the repository's EXAMPLE certificate" in str(raised.value)


def test_pulumi_up_of_prod_with_the_sites_own_certificate_goes_ahead(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cert = _other_certificate(tmp_path)

    def edit(values: dict[str, Any]) -> None:
        values["hpcforge:backups"]["keyRecipient"] = cert

    path = write_variant(tmp_path, "prod", edit)
    monkeypatch.setattr(deploy_guard, "deploying_for_real", lambda: True)
    assert run_stack_file(path, "prod").resources

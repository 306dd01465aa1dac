"""The Argo CD readiness wait (`pulumi.com/waitFor` on every Application in `argocd` delivery).

The conditions are evaluated here as pulumi-kubernetes evaluates them (provider/pkg/metadata/
overrides.go `ReadyCondition`: a JSON array means all of them; provider/pkg/jsonpath/jsonpath.go
`Parse`/`Matches`: `jsonpath={path}=value`, split on one `=`, the first selected value compared as a
string; nothing selected is not ready), for the dotted paths hpcforge uses."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.charts import WAIT_FOR_ANNOTATION, application_wait_for
from offline.program.engine import RecordedStack


def _ready(annotation: str, obj: dict[str, Any]) -> bool:
    try:
        values = json.loads(annotation)
    except json.JSONDecodeError:
        values = [annotation]
    assert isinstance(values, list) and values
    for expression in values:
        assert expression.startswith("jsonpath="), expression
        raw = expression.removeprefix("jsonpath=")
        parts = raw.replace("==", "\0").split("=")
        assert len(parts) <= 2, expression
        path = parts[0].strip("{}").lstrip("$").lstrip(".")
        current: Any = obj
        for step in path.split("."):
            current = current.get(step) if isinstance(current, dict) else None
        if current is None:
            return False
        if len(parts) == 2 and str(current) != parts[1]:
            return False
    return True


def _application(revision: str, operation_revision: str, *, sync: str = "Synced", phase: str = "Succeeded") -> dict[str, Any]:
    return {
        "status": {
            "health": {"status": "Healthy"},
            "sync": {"status": sync, "revision": revision},
            "operationState": {"phase": phase, "syncResult": {"revision": operation_revision}},
        }
    }


def test_old_healthy_status_during_an_upgrade_is_not_ready() -> None:
    wait = application_wait_for("1.2.1")
    assert not _ready(wait, _application("1.2.0", "1.2.0"))  # before Argo CD refreshes
    assert not _ready(wait, _application("1.2.1", "1.2.0", sync="OutOfSync"))  # refreshed, not synced yet
    assert not _ready(wait, _application("1.2.1", "1.2.1", phase="Running"))
    assert not _ready(wait, {"status": {"health": {"status": "Healthy"}}})  # no sync status at all
    assert _ready(wait, _application("1.2.1", "1.2.1"))
    # What the wait used to be: satisfied by the old version's status.
    assert _ready("jsonpath={.status.health.status}=Healthy", _application("1.2.0", "1.2.0"))


def test_a_revision_with_an_equals_sign_is_refused() -> None:
    with pytest.raises(ValueError, match="contains '='"):
        application_wait_for("1.0=2")


@pytest.mark.program
def test_every_application_waits_for_its_own_target_revision(prod_stack: RecordedStack) -> None:
    apps = [r for r in prod_stack.resources if r.type == "kubernetes:argoproj.io/v1alpha1:Application"]
    charts = [a for a in apps if "chart" in a.inputs["spec"].get("source", {})]
    assert charts, "prod delivers no chart through Argo CD"
    for app in charts:
        target = app.inputs["spec"]["source"]["targetRevision"]
        wait = app.inputs["metadata"]["annotations"][WAIT_FOR_ANNOTATION]
        assert wait == application_wait_for(target), app.name
        assert _ready(wait, _application(target, target)), app.name

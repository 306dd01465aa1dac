"""Adding an admission family is adding a package (policies/admission/families.py): a package that exports a `FAMILY`,
found on policies.admission's path, is picked up by the report, the security pack's rules, the pins, `./hpcforge
admission` and the diff's plan, with nothing else changed."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import policies.admission
from components import versions
from offline.admission.verdicts import run_admission
from offline.diff.base import State
from offline.diff.plan import make_plan
from offline.program.engine import RecordedResource, RecordedStack
from policies.admission import pins, rules
from policies.admission.families import families
from policies.admission.family import Family, Verdict
from policies.admission.report import admission_report
from policies.rules.view import ResourceView, StackView

FAKE_FAMILY = '''
"""fake-operator's webhook (example/fake-operator v1.0.0): a Widget is refused above 3 replicas."""

from dataclasses import dataclass
from typing import Any

from policies.admission.family import Family, Judgement, Pin, mark
from policies.admission.rule import Finding, admission_rule
from policies.rules.knobs import RuleConfig

REPRODUCES = Pin("fake-operator", "1.0.0", ("FAKE_OPERATOR_VERSION",), "example/fake-operator v1.0.0")


@dataclass(frozen=True)
class WidgetVerdict:
    obj: Any

    @property
    def admitted(self):
        return self.obj["spec"]["replicas"] <= 3

    @property
    def reasons(self):
        return () if self.admitted else ("spec.replicas: must be at most 3",)

    def lines(self):
        return [f"  {mark(self.admitted)} Widget {self.obj['metadata']['name']}", *(f"         {r}" for r in self.reasons)]


def widgets(objects):
    return [WidgetVerdict(o) for o in objects if o.get("kind") == "Widget"]


def updated(old, new):
    names = {o["metadata"]["name"] for o in old if o.get("kind") == "Widget"}
    return [v for v in widgets(new) if v.obj["metadata"]["name"] in names]


def judge_widgets(stack, found, config):
    for verdict in widgets(found.objects):
        if not verdict.admitted:
            yield Finding(verdict.obj, "fake-operator refuses Widget " + verdict.obj["metadata"]["name"])


@dataclass(frozen=True)
class WidgetAdmissionConfig(RuleConfig):
    pass


FAMILY = Family(
    name="fakeop",
    order=1000,
    title="fake-operator 1.0.0",
    heading="Widgets (fake-operator 1.0.0):",
    summary="{refused} of {total} Widgets refused",
    judge=lambda objects, cluster: Judgement(widgets(objects)),
    rule=admission_rule(
        "widget-admission", "Every Widget passes fake-operator's webhook.", WidgetAdmissionConfig, judge_widgets, "Fewer."
    ),
    reproduces=(__name__,),
    updates=updated,
)
'''


@pytest.fixture
def fake_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Family]:
    """The package above, `fakeop/`, in a folder of policies.admission's path: nothing else of the project changes."""
    (tmp_path / "fakeop").mkdir()
    (tmp_path / "fakeop" / "__init__.py").write_text(FAKE_FAMILY)
    monkeypatch.setattr(policies.admission, "__path__", [*policies.admission.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    yield importlib.import_module("policies.admission.fakeop").FAMILY
    sys.modules.pop("policies.admission.fakeop", None)


def widget(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "w"},
        "spec": {"replicas": replicas},
    }


def recorded(obj: dict[str, Any]) -> RecordedResource:
    name = obj["metadata"]["name"]
    urn = f"urn:pulumi:dev::hpcforge::kubernetes:example.com/v1:Widget::{name}"
    return RecordedResource(urn, "kubernetes:example.com/v1:Widget", name, "", True, False, "", obj, obj, [])


def test_the_families_are_found_in_the_folder() -> None:
    names = [family.name for family in families()]
    assert names == ["pss", "argocd", "reachability", "slinky", "kueue", "webhooks", "mariadb"]
    assert [family.rule.name for family in families()] == [rule.name for rule in rules.RULES]


def test_every_family_judges_with_the_shared_verdict_type() -> None:
    report = admission_report([widget("w", 1)])
    assert [section.family.name for section in report.sections] == [family.name for family in families()]
    refused = admission_report([{"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "c"}}])
    assert all(isinstance(v, Verdict) for section in refused.sections for v in section.verdicts)
    assert all(isinstance(v, Verdict) for v in refused.verdicts("webhooks")) and refused.refused_in("webhooks")


def test_a_family_package_is_in_the_report(fake_family: Family) -> None:
    assert families()[-1] is fake_family
    report = admission_report([widget("small", 2), widget("big", 5)])
    assert [v.admitted for v in report.verdicts("fakeop")] == [True, False]
    assert report.refused
    lines = report.lines()
    assert lines[lines.index("Widgets (fake-operator 1.0.0):") + 1 :][:3] == [
        "  ok   Widget small",
        "  DENY Widget big",
        "         spec.replicas: must be at most 3",
    ]
    assert lines[-1].endswith(", 1 of 2 Widgets refused.")
    assert not admission_report([widget("small", 2)]).refused


def test_a_family_package_is_a_rule_of_the_security_pack(fake_family: Family) -> None:
    [rule] = [rule for rule in rules.admission_rules() if rule.name == "widget-admission"]
    stack = StackView((ResourceView("kubernetes:example.com/v1:Widget", "big", "urn:big", widget("big", 5)),))
    assert [(v.message, v.urn) for v in rule(stack)] == [("fake-operator refuses Widget big", "urn:big")]


def test_a_family_package_is_held_to_its_pin(fake_family: Family, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "FAKE_OPERATOR_VERSION", "1.0.0", raising=False)
    assert "policies.admission.fakeop" in pins.reproductions() and pins.out_of_step(versions) == []
    monkeypatch.setattr(versions, "FAKE_OPERATOR_VERSION", "1.0.1")
    [message] = pins.out_of_step(versions)
    assert message.startswith("policies.admission.fakeop reproduces fake-operator 1.0.0 (example/fake-operator v1.0.0)")


def test_a_family_package_is_in_the_admission_command(fake_family: Family, capsys: pytest.CaptureFixture[str]) -> None:
    stack = RecordedStack("hpcforge", "dev", [recorded(widget("big", 5))], {}, [])
    assert run_admission(stack, argparse.Namespace(objects=None, previous_config=None)) == 1
    out = capsys.readouterr().out
    assert out.startswith("Admission of stack dev (") and "mariadb-operator webhooks, fake-operator 1.0.0):" in out
    assert "  DENY Widget big\n         spec.replicas: must be at most 3\n" in out
    assert out.splitlines()[-1].endswith(", 1 of 1 Widgets refused.")


def test_a_family_package_refuses_updates_in_the_diff_plan(fake_family: Family) -> None:
    base = State("dev", [recorded(widget("w", 2)).to_json()], "base")
    head = State("dev", [recorded(widget("w", 5)).to_json()], "head")
    [change] = make_plan(base, head).changes
    assert change.op == "update"
    assert change.refusals == ["fake-operator 1.0.0: spec.replicas: must be at most 3"]

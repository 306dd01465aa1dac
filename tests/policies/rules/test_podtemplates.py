"""The pods that objects make (policies/rules/podtemplates.py): workloads, and operator custom
resources with what the operator adds (slurm-operator v1.2.1 builders)."""

from __future__ import annotations

from typing import Any

from policies.admission.pss import pod_security_verdicts
from policies.rules.podtemplates import pod_templates


def nodeset(slurmd: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"metadata": {"labels": {"pool": "cpu"}}, "spec": {"nodeSelector": {"a": "b"}}}}
    if slurmd is not None:
        spec["slurmd"] = slurmd
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": "cpu", "namespace": "slurm"},
        "spec": spec,
    }


def namespace(level: str) -> dict[str, Any]:
    labels = {"pod-security.kubernetes.io/enforce": level}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slurm", "labels": labels}}


def test_slurmd_is_privileged_unless_the_nodeset_says_otherwise() -> None:
    [template] = pod_templates(nodeset({"image": "slurmd:26.05"}))
    [slurmd] = [c for c in template.containers if c.name == "slurmd"]
    assert slurmd.body["securityContext"]["privileged"] is True
    assert slurmd.body["image"] == "slurmd:26.05"
    [template] = pod_templates(nodeset({"securityContext": {"privileged": False, "capabilities": {"add": ["SYS_NICE"]}}}))
    [slurmd] = [c for c in template.containers if c.name == "slurmd"]
    assert slurmd.body["securityContext"] == {"privileged": False, "capabilities": {"add": ["SYS_NICE"]}}


def test_nodeset_in_a_baseline_namespace_is_refused_for_what_the_operator_adds() -> None:
    [verdict] = pod_security_verdicts([namespace("baseline"), nodeset()])
    assert [f.check for f in verdict.failures] == ["privileged", "capabilities_baseline"]
    [allowed] = pod_security_verdicts([namespace("privileged"), nodeset()])
    assert allowed.admitted


def test_controller_pods_run_as_the_slurm_user() -> None:
    controller = {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "Controller",
        "metadata": {"name": "slurm", "namespace": "slurm"},
        "spec": {"template": {"spec": {}}},
    }
    [template] = pod_templates(controller)
    assert template.spec["securityContext"]["runAsUser"] == 401
    [verdict] = pod_security_verdicts([namespace("restricted"), controller])
    assert "runAsNonRoot" not in [f.check for f in verdict.failures]


def test_appwrapper_components_and_cronjobs() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": [{"name": "x"}]}}}}
    wrapper = {
        "apiVersion": "workload.codeflare.dev/v1beta2",
        "kind": "AppWrapper",
        "metadata": {"name": "w", "namespace": "team"},
        "spec": {"components": [{"template": job}]},
    }
    [template] = pod_templates(wrapper)
    assert (
        template.namespace == "team"
        and template.containers[0].path == "spec.components[0].template.spec.template.spec.containers[x]"
    )
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"namespace": "n"}, "spec": {"jobTemplate": job}}
    [template] = pod_templates(cron)
    assert template.path == "spec.jobTemplate.spec.template.spec"


def test_namespace_argocd_creates_gets_its_managed_labels() -> None:
    app = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "portal", "namespace": "argocd"},
        "spec": {
            "destination": {"namespace": "portal"},
            "syncPolicy": {
                "syncOptions": ["CreateNamespace=true"],
                "managedNamespaceMetadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}},
            },
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "portal"},
        "spec": {"containers": [{"name": "c"}]},
    }
    [verdict] = pod_security_verdicts([app, pod])
    assert verdict.policy.level == "restricted" and not verdict.admitted
    own = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "portal", "labels": {}}}
    [verdict] = pod_security_verdicts([own, app, pod])
    assert verdict.admitted  # managed metadata is only taken for namespaces no object of the stack creates


def test_warn_level_stricter_than_enforce_reports_warnings() -> None:
    labels = {"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slurm", "labels": labels}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "slurm"},
        "spec": {"containers": [{"name": "c"}]},
    }
    [verdict] = pod_security_verdicts([ns, pod])
    assert verdict.admitted and verdict.warn_policy is not None and verdict.warn_policy.level == "restricted"
    assert "allowPrivilegeEscalation" in [w.check for w in verdict.warnings]


def test_workflow_templates_make_one_pod_per_container_template() -> None:
    workflow = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "WorkflowTemplate",
        "metadata": {"name": "build", "namespace": "devops"},
        "spec": {
            "volumes": [{"name": "sw", "persistentVolumeClaim": {"claimName": "sw"}}],
            "templates": [
                {"name": "pipeline", "dag": {"tasks": []}},
                {"name": "compile", "container": {"image": "gcc:14", "securityContext": {"privileged": True}}},
                {"name": "test", "script": {"image": "python:3.13", "source": "print(1)"}},
            ],
        },
    }
    templates = pod_templates(workflow)
    assert [t.path for t in templates] == ["spec.templates[compile]", "spec.templates[test]"]
    assert templates[0].spec["volumes"][0]["name"] == "sw"
    verdicts = pod_security_verdicts([namespace_named("devops", "baseline"), workflow])
    assert [(v.template.path, [f.check for f in v.failures]) for v in verdicts] == [
        ("spec.templates[compile]", ["privileged"]),
        ("spec.templates[test]", []),
    ]


def namespace_named(name: str, level: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"pod-security.kubernetes.io/enforce": level}},
    }


def test_pods_of_a_namespace_with_unknown_labels_are_not_judged() -> None:
    from policies.rules.wire import Unknown

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "slurm"},
        "spec": {"containers": [{"name": "c"}]},
    }
    unknown = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "slurm", "labels": Unknown()}}
    assert pod_security_verdicts([unknown, pod]) == []
    level = {"pod-security.kubernetes.io/enforce": Unknown()}
    assert pod_security_verdicts([{**unknown, "metadata": {"name": "slurm", "labels": level}}, pod]) == []
    assert len(pod_security_verdicts([namespace("restricted"), pod])) == 1


def test_slinky_pods_carry_the_crs_labels_then_the_templates_then_the_operators() -> None:
    # slurm-operator v1.2.1 worker_app.go: WithLabels(nodeset.Labels), WithMetadata(template metadata),
    # WithLabels(WithWorkerLabels(nodeset)); later wins (internal/builder/labels/labels.go).
    obj = nodeset()
    obj["metadata"]["labels"] = {"app.kubernetes.io/name": "cpu", "app.kubernetes.io/part-of": "hpcforge", "pool": "cr"}
    obj["spec"]["controllerRef"] = {"name": "slurm"}
    (pod,) = pod_templates(obj)
    assert pod.labels == {
        "app.kubernetes.io/part-of": "hpcforge",  # the CR's own
        "pool": "cpu",  # the template's, over the CR's
        "app.kubernetes.io/name": "slurmd",  # the operator's, over both
        "app.kubernetes.io/instance": "cpu",
        "app.kubernetes.io/component": "worker",
        "slinky.slurm.net/cluster": "slurm",
    }


def test_each_slinky_kind_gets_its_operator_name_label() -> None:
    found = {}
    for kind in ("Controller", "LoginSet", "Accounting", "RestApi"):
        obj = {
            "apiVersion": "slinky.slurm.net/v1beta1",
            "kind": kind,
            "metadata": {"name": "x", "namespace": "slurm"},
            "spec": {},
        }
        (pod,) = pod_templates(obj)
        found[kind] = (pod.labels["app.kubernetes.io/name"], pod.labels["app.kubernetes.io/component"])
    assert found == {
        "Controller": ("slurmctld", "controller"),
        "LoginSet": ("login", "login"),
        "Accounting": ("slurmdbd", "accounting"),
        "RestApi": ("slurmrestd", "restapi"),
    }

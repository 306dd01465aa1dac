"""Pod Security Standards checks (policies/admission/pss/).

The failing cases and their expected ForbiddenReason/ForbiddenDetail are upstream's own table tests,
k8s.io/pod-security-admission v0.33.9 `policy/check_<id>_test.go`, transcribed from Go structs into
dicts (same container names, same values, same expected strings); the passing cases are the
allowed values those files and `test/fixtures_<id>.go` use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from policies.admission import pss


def c(name: str, sc: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, **extra}
    if sc is not None:
        body["securityContext"] = sc
    return body


FAILS: list[tuple[str, Any, dict[str, Any], dict[str, Any], str, str]] = [
    (
        "hostNamespaces",
        pss.check_hostNamespaces,
        {},
        {"hostNetwork": True, "hostPID": True, "hostIPC": True},
        "host namespaces",
        "hostNetwork=true, hostPID=true, hostIPC=true",
    ),
    (
        "privileged",
        pss.check_privileged,
        {},
        {
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"privileged": False}),
                c("d", {"privileged": True}),
                c("e", {"privileged": True}),
            ]
        },
        "privileged",
        'containers "d", "e" must not set securityContext.privileged=true',
    ),
    (
        "capabilities_baseline",
        pss.check_capabilities_baseline,
        {},
        {
            "containers": [
                c("a", {"capabilities": {"add": ["FOO", "BAR"]}}),
                c("b", {"capabilities": {"add": ["BAR", "BAZ"]}}),
            ]
        },
        "non-default capabilities",
        'containers "a", "b" must not include "BAR", "BAZ", "FOO" in securityContext.capabilities.add',
    ),
    (
        "hostPathVolumes",
        pss.check_hostPathVolumes,
        {},
        {"volumes": [{"name": "a", "hostPath": {}}, {"name": "b", "hostPath": {}}, {"name": "c", "emptyDir": {}}]},
        "hostPath volumes",
        'volumes "a", "b"',
    ),
    (
        "hostPorts one",
        pss.check_hostPorts,
        {},
        {"containers": [c("a", ports=[{"hostPort": 0}]), c("b", ports=[{"hostPort": 0}, {"hostPort": 20}])]},
        "hostPort",
        'container "b" uses hostPort 20',
    ),
    (
        "hostPorts many",
        pss.check_hostPorts,
        {},
        {
            "containers": [
                c("a", ports=[{"hostPort": 0}]),
                c("b", ports=[{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 20}]),
                c("c", ports=[{"hostPort": 0}, {"hostPort": 10}, {"hostPort": 30}]),
            ]
        },
        "hostPort",
        'containers "b", "c" use hostPorts 10, 20, 30',
    ),
    (
        "appArmorProfile",
        pss.check_appArmorProfile,
        {},
        {"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
        "forbidden AppArmor profile",
        'pod must not set AppArmor profile type to "Unconfined"',
    ),
    (
        "seLinuxOptions",
        pss.check_seLinuxOptions,
        {},
        {
            "securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}},
            "containers": [
                c("a", {"seLinuxOptions": {"type": "container_t"}}),
                c("b", {"seLinuxOptions": {"type": "container_init_t"}}),
                c("c", {"seLinuxOptions": {"type": "container_kvm_t"}}),
                c("d", {"seLinuxOptions": {"type": "container_engine_t"}}),
                c("e", {"seLinuxOptions": {"type": "bar"}}),
                c("f", {"seLinuxOptions": {"user": "bar"}}),
                c("g", {"seLinuxOptions": {"role": "baz"}}),
            ],
        },
        "seLinuxOptions",
        'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; '
        "user may not be set; role may not be set",
    ),
    (
        "procMount",
        pss.check_procMount,
        {},
        {
            "hostUsers": False,
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"procMount": "Default"}),
                c("d", {"procMount": "Unmasked"}),
                c("e", {"procMount": "other"}),
            ],
        },
        "procMount",
        'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"',
    ),
    (
        "seccompProfile_baseline",
        pss.check_seccompProfile_baseline,
        {},
        {"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [c("a")]},
        "seccompProfile",
        'pod must not set securityContext.seccompProfile.type to "Unconfined"',
    ),
    (
        "sysctls",
        pss.check_sysctls,
        {},
        {"securityContext": {"sysctls": [{"name": "a"}, {"name": "b"}]}},
        "forbidden sysctls",
        "a, b",
    ),
    (
        "windowsHostProcess",
        pss.check_windowsHostProcess,
        {},
        {
            "securityContext": {"windowsOptions": {"hostProcess": True}},
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"windowsOptions": {}}),
                c("d", {"windowsOptions": {"hostProcess": False}}),
                c("e", {"windowsOptions": {"hostProcess": True}}),
                c("f", {"windowsOptions": {"hostProcess": True}}),
            ],
        },
        "hostProcess",
        'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true',
    ),
    (
        "allowPrivilegeEscalation",
        pss.check_allowPrivilegeEscalation,
        {},
        {
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"allowPrivilegeEscalation": True}),
                c("d", {"allowPrivilegeEscalation": False}),
            ]
        },
        "allowPrivilegeEscalation != false",
        'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false',
    ),
    (
        "runAsNonRoot implicit",
        pss.check_runAsNonRoot,
        {},
        {"containers": [c("a"), c("b", {}), c("d", {"runAsNonRoot": True}), c("e", {"runAsNonRoot": True})]},
        "runAsNonRoot != true",
        'pod or containers "a", "b" must set securityContext.runAsNonRoot=true',
    ),
    (
        "runAsNonRoot explicit",
        pss.check_runAsNonRoot,
        {},
        {
            "securityContext": {"runAsNonRoot": True},
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"runAsNonRoot": False}),
                c("d", {"runAsNonRoot": False}),
                c("e", {"runAsNonRoot": True}),
                c("f", {"runAsNonRoot": True}),
            ],
        },
        "runAsNonRoot != true",
        'containers "c", "d" must not set securityContext.runAsNonRoot=false',
    ),
    (
        "runAsNonRoot pod false",
        pss.check_runAsNonRoot,
        {},
        {"securityContext": {"runAsNonRoot": False}, "containers": [c("a")]},
        "runAsNonRoot != true",
        "pod must not set securityContext.runAsNonRoot=false",
    ),
    (
        "runAsUser pod",
        pss.check_runAsUser,
        {},
        {"securityContext": {"runAsUser": 0}, "containers": [c("a")]},
        "runAsUser=0",
        "pod must not set runAsUser=0",
    ),
    (
        "runAsUser containers",
        pss.check_runAsUser,
        {},
        {
            "containers": [
                c("a"),
                c("b", {}),
                c("c", {"runAsUser": 0}),
                c("d", {"runAsUser": 0}),
                c("e", {"runAsUser": 1}),
            ]
        },
        "runAsUser=0",
        'containers "c", "d" must not set runAsUser=0',
    ),
    (
        "seccompProfile_restricted implicit",
        pss.check_seccompProfile_restricted,
        {},
        {"containers": [c("a")]},
        "seccompProfile",
        'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
    ),
    (
        "seccompProfile_restricted pod invalid",
        pss.check_seccompProfile_restricted,
        {},
        {"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [c("a")]},
        "seccompProfile",
        'pod must not set securityContext.seccompProfile.type to "Unconfined"',
    ),
    (
        "capabilities_restricted",
        pss.check_capabilities_restricted,
        {},
        {
            "containers": [
                c("a", {"capabilities": {"add": ["FOO", "BAR"]}}),
                c("b", {"capabilities": {"add": ["BAR", "BAZ"]}}),
                c("c", {"capabilities": {"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]}}),
            ]
        },
        "unrestricted capabilities",
        'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; containers "a", "b", "c" must not '
        'include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add',
    ),
    (
        "capabilities_restricted linux pod without context",
        pss.check_capabilities_restricted,
        {},
        {"os": {"name": "linux"}, "containers": [c("a")]},
        "unrestricted capabilities",
        'container "a" must set securityContext.capabilities.drop=["ALL"]',
    ),
]

RESTRICTED_VOLUMES = [{"name": f"a{i}", kind: {}} for i, kind in enumerate(pss.ALLOWED_VOLUME_TYPES, 1)]
RESTRICTED_VOLUMES += [{"name": f"b{i}", kind: {}} for i, kind in enumerate(pss.RESTRICTED_VOLUME_TYPES, 1)]
RESTRICTED_VOLUMES += [{"name": "c1"}]
FAILS.append(
    (
        "restrictedVolumes",
        pss.check_restrictedVolumes,
        {},
        {"volumes": RESTRICTED_VOLUMES},
        "restricted volume types",
        "volumes "
        '"b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16", "b17", '
        '"b18", "b19", "b20", "b21", "c1"'
        " use restricted volume types "
        '"awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc", "flexVolume", "flocker", '
        '"gcePersistentDisk", "gitRepo", "glusterfs", '
        '"hostPath", "iscsi", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", '
        '"unknown", "vsphereVolume"',
    )
)


@pytest.mark.parametrize(("case", "check", "meta", "spec", "reason", "detail"), FAILS, ids=[f[0] for f in FAILS])
def test_upstream_forbidden_reason_and_detail(case: str, check: Any, meta: Any, spec: Any, reason: str, detail: str) -> None:
    result = check(meta, spec)
    assert (result.allowed, result.reason, result.detail) == (False, reason, detail)


RESTRICTED_CONTEXT = {
    "allowPrivilegeEscalation": False,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}

PASSES: list[tuple[str, Any, dict[str, Any], dict[str, Any]]] = [
    ("hostNamespaces", pss.check_hostNamespaces, {}, {"hostNetwork": False}),
    ("privileged", pss.check_privileged, {}, {"containers": [c("a", {"privileged": False})]}),
    ("capabilities_baseline", pss.check_capabilities_baseline, {}, {"containers": [c("a", {"capabilities": {"add": ["CHOWN", "SETUID"]}})]}),
    ("hostPathVolumes", pss.check_hostPathVolumes, {}, {"volumes": [{"name": "a", "emptyDir": {}}]}),
    ("hostPorts", pss.check_hostPorts, {}, {"containers": [c("a", ports=[{"containerPort": 80, "hostPort": 0}])]}),
    ("appArmorProfile", pss.check_appArmorProfile, {"annotations": {pss.APPARMOR_ANNOTATION_PREFIX + "a": "localhost/x"}}, {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}}),
    ("seLinuxOptions 1.31 engine type", pss.check_seLinuxOptions, {}, {"containers": [c("a", {"seLinuxOptions": {"type": "container_engine_t", "level": "s0"}})]}),
    ("procMount relaxed for user namespaces", lambda m, s: pss.check_procMount(m, s, relax_user_namespaces=True), {}, {"hostUsers": False, "containers": [c("a", {"procMount": "Unmasked"})]}),
    ("seccompProfile_baseline unset", pss.check_seccompProfile_baseline, {}, {"containers": [c("a")]}),
    ("sysctls 1.32 set", pss.check_sysctls, {}, {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem"}]}}),
    ("windowsHostProcess", pss.check_windowsHostProcess, {}, {"containers": [c("a", {"windowsOptions": {"hostProcess": False}})]}),
    ("restrictedVolumes", pss.check_restrictedVolumes, {}, {"volumes": RESTRICTED_VOLUMES[: len(pss.ALLOWED_VOLUME_TYPES)]}),
    ("allowPrivilegeEscalation windows", pss.check_allowPrivilegeEscalation, {}, {"os": {"name": "windows"}, "containers": [c("a")]}),
    ("runAsNonRoot pod level", pss.check_runAsNonRoot, {}, {"securityContext": {"runAsNonRoot": True}, "containers": [c("a"), c("b", {})]}),
    ("runAsUser non-zero", pss.check_runAsUser, {}, {"securityContext": {"runAsUser": 1000}, "containers": [c("a", {"runAsUser": 1})]}),
    ("seccompProfile_restricted pod level", pss.check_seccompProfile_restricted, {}, {"securityContext": {"seccompProfile": {"type": "Localhost"}}, "containers": [c("a")]}),
    ("capabilities_restricted", pss.check_capabilities_restricted, {}, {"containers": [c("a", {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}})]}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "check", "meta", "spec"), PASSES, ids=[p[0] for p in PASSES])
def test_allowed_values_pass(case: str, check: Any, meta: Any, spec: Any) -> None:
    assert check(meta, spec).allowed


def test_versions_change_the_answer() -> None:
    engine = {"containers": [c("a", {"seLinuxOptions": {"type": "container_engine_t"}})]}
    assert pss.check_seLinuxOptions({}, engine, (1, 31)).allowed
    assert not pss.check_seLinuxOptions({}, engine, (1, 30)).allowed
    rmem = {"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem"}]}}
    assert not pss.check_sysctls({}, rmem, (1, 31)).allowed
    root = {"securityContext": {"runAsUser": 0}}
    assert pss.check_runAsUser({}, root, (1, 22)).allowed


def test_restricted_level_overrides_baseline_checks() -> None:
    ids = [check_id for check_id, _ in pss.checks_for("restricted")]
    assert "hostPathVolumes" not in ids and "restrictedVolumes" in ids
    assert "capabilities_baseline" not in ids and "seccompProfile_baseline" not in ids
    assert pss.checks_for("privileged") == []


def test_restricted_pod_admitted_and_bare_pod_refused_with_every_reason() -> None:
    good = {"containers": [c("a", RESTRICTED_CONTEXT)], "volumes": [{"name": "v", "configMap": {"name": "x"}}]}
    assert pss.evaluate_pod({}, good, "restricted") == []
    assert pss.evaluate_pod({}, {"containers": [c("a")]}, "baseline") == []
    failures = pss.evaluate_pod({}, {"containers": [c("a")]}, "restricted")
    assert [f.check for f in failures] == [
        "allowPrivilegeEscalation",
        "runAsNonRoot",
        "seccompProfile_restricted",
        "capabilities_restricted",
    ]
    assert pss.forbidden_message(failures, "restricted", "v1.33").startswith(
        'violates PodSecurity "restricted:v1.33": allowPrivilegeEscalation != false (container "a" must set'
    )


def test_namespace_policy_from_labels() -> None:
    policy = pss.NamespacePolicy.from_labels(
        {"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.30"}
    )
    assert (policy.level, policy.version) == ("restricted", (1, 30))
    assert pss.NamespacePolicy.from_labels({}).level == "privileged"
    assert pss.NamespacePolicy.from_labels({"pod-security.kubernetes.io/enforce": "baseline"}).version == (1, 33)


# --- versions: the gates below the reproduced version, and the gap above it ---------------------------------------

WINDOWS_EXEMPT = [
    ("allowPrivilegeEscalation", pss.check_allowPrivilegeEscalation),
    ("seccompProfile_restricted", pss.check_seccompProfile_restricted),
    ("capabilities_restricted", pss.check_capabilities_restricted),
]


@pytest.mark.parametrize(("check_id", "check"), WINDOWS_EXEMPT, ids=[w[0] for w in WINDOWS_EXEMPT])
def test_windows_pods_are_exempt_from_1_25_on(check_id: str, check: Any) -> None:
    """v0.33.9 policy/check_<id>.go: the VersionedCheck that exempts a pod with `spec.os.name: windows` has
    MinimumVersion 1.25 ("Starting 1.25, windows pods would be exempted from this check"); the cases are upstream's
    check_<id>_test.go `..._1_25` tables ("windows pod, admit without checking ...", "linux pod, reject if
    security context is not set"). Below 1.25 the earlier VersionedCheck, with no exemption, refuses the same pod."""
    windows = {"os": {"name": "windows"}, "containers": [c("a")]}
    linux = {"os": {"name": "linux"}, "containers": [c("a")]}
    assert check({}, windows, (1, 25)).allowed
    assert check({}, windows, (1, 26)).allowed
    assert not check({}, windows, (1, 24)).allowed
    assert not check({}, linux, (1, 25)).allowed
    level = [f.check for f in pss.evaluate_pod({}, windows, "restricted", (1, 25))]
    assert check_id not in level and check_id in [f.check for f in pss.evaluate_pod({}, windows, "restricted", (1, 24))]


def sysctl(name: str) -> dict[str, Any]:
    return {"securityContext": {"sysctls": [{"name": name}]}, "containers": [c("a")]}


GATES = [
    # (what, check, spec, first version that changes the answer, allowed from then on): each MinimumVersion in
    # k8s.io/pod-security-admission v0.33.9 policy/check_<id>.go
    ("sysctls 1.27: ip_local_reserved_ports", pss.check_sysctls, sysctl("net.ipv4.ip_local_reserved_ports"), (1, 27), True),
    ("sysctls 1.29: tcp_keepalive_time", pss.check_sysctls, sysctl("net.ipv4.tcp_keepalive_time"), (1, 29), True),
    ("sysctls 1.32: tcp_wmem", pss.check_sysctls, sysctl("net.ipv4.tcp_wmem"), (1, 32), True),
    ("seLinuxOptions 1.31: container_engine_t", pss.check_seLinuxOptions, {"containers": [c("a", {"seLinuxOptions": {"type": "container_engine_t"}})]}, (1, 31), True),
    ("runAsUser 1.23", pss.check_runAsUser, {"containers": [c("a", {"runAsUser": 0})]}, (1, 23), False),
    ("capabilities_restricted 1.22", pss.check_capabilities_restricted, {"containers": [c("a")]}, (1, 22), False),
    ("seccompProfile_restricted 1.19", pss.check_seccompProfile_restricted, {"containers": [c("a")]}, (1, 19), False),
    ("allowPrivilegeEscalation 1.8", pss.check_allowPrivilegeEscalation, {"containers": [c("a")]}, (1, 8), False),
]  # fmt: skip


@pytest.mark.parametrize(("what", "check", "spec", "gate", "allowed"), GATES, ids=[g[0] for g in GATES])
def test_version_gated_checks_change_at_their_upstream_version(
    what: str, check: Any, spec: dict[str, Any], gate: pss.Version, allowed: bool
) -> None:
    before = (gate[0], gate[1] - 1)
    assert check({}, spec, gate).allowed is allowed
    assert check({}, spec, pss.KUBERNETES_VERSION).allowed is allowed
    assert check({}, spec, before).allowed is not allowed


def restricted_namespace(version: str | None = None, level: str = "restricted") -> dict[str, Any]:
    labels = {"pod-security.kubernetes.io/enforce": level}
    if version is not None:
        labels["pod-security.kubernetes.io/enforce-version"] = version
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": labels}}


def pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "apps"}, "spec": spec}


RESTRICTED_POD = {**sysctl("net.ipv4.ip_local_reserved_ports"), "containers": [c("a", RESTRICTED_CONTEXT)]}


def test_an_older_cluster_evaluates_latest_and_newer_labels_at_its_own_version() -> None:
    """A 1.26 cluster (older than any hpcforge:kubernetes.version takes since 1.30, but the reproduced Pod Security
    judges any version): `latest`, and a label newer than the cluster,
    evaluate as 1.26 (api.go: a version newer than the server's is latest), so the sysctl that 1.27 made safe is
    refused there and admitted on 1.27."""
    from policies.admission.pss import pod_security_verdicts

    for label in (None, "v1.33"):
        [old] = pod_security_verdicts([restricted_namespace(label), pod(RESTRICTED_POD)], (1, 26))
        assert [f.check for f in old.failures] == ["sysctls"]
        [new] = pod_security_verdicts([restricted_namespace(label), pod(RESTRICTED_POD)], (1, 27))
        assert new.admitted
    [latest] = pod_security_verdicts([restricted_namespace(), pod(RESTRICTED_POD)], (1, 26))
    assert latest.message.startswith('violates PodSecurity "restricted:latest": forbidden sysctls')


def test_versions_up_to_the_reproduced_one_have_no_gap_and_newer_ones_name_it() -> None:
    """What upstream changed after v0.33.9 (v0.34.0 check_hostProbesAndhostLifecycle.go; v0.35.0
    check_procMount_restricted.go and the hostUsers relaxations; v0.37.0-alpha.2 check_sysctls.go)."""
    for version in [(1, 26), (1, 32), pss.KUBERNETES_VERSION]:
        assert pss.unreproduced(version) is None
    at_34 = pss.unreproduced((1, 34)) or ""
    assert "hostProbesAndHostLifecycle" in at_34 and "procMount_restricted" not in at_34
    assert "Kubernetes 1.33" in at_34 and "not 1.34" in at_34
    at_35 = pss.unreproduced((1, 35)) or ""
    assert "hostProbesAndHostLifecycle" in at_35 and "procMount_restricted" in at_35 and "tcp_notsent_lowat" not in at_35
    at_39 = pss.unreproduced((1, 39)) or ""
    assert "tcp_notsent_lowat" in at_39 and "after 1.37: not read" in at_39


def test_the_report_refuses_a_namespace_enforcing_a_version_newer_than_the_reproduction() -> None:
    from policies.admission.report import admission_report

    good = {"containers": [c("a", RESTRICTED_CONTEXT)]}
    assert not admission_report([restricted_namespace("v1.33"), pod(good)]).refused
    objects = [restricted_namespace("v1.35"), pod(good)]
    [gap] = pss.pod_security_gaps(pss.pod_security_verdicts(objects))
    assert (gap.version, gap.namespaces) == ((1, 35), ("apps",))
    report = admission_report(objects)
    assert report.gaps == [gap.message] and report.refused
    assert any(
        line.startswith("  GAP  Pod Security of Kubernetes 1.35 is not reproduced: namespace apps") for line in report.lines()
    )
    assert report.lines()[-1].endswith(" 1 Pod Security versions not reproduced.")
    # A cluster of 1.35 evaluates `latest` as 1.35; a privileged namespace runs no check at any version.
    assert admission_report([restricted_namespace(), pod(good)], cluster_version=(1, 35)).gaps
    assert not admission_report([restricted_namespace("v1.35", "privileged"), pod(good)]).gaps


def test_dev_on_a_newer_kubernetes_is_reported_as_a_gap_by_offline_admission(tmp_path: Path) -> None:
    """hpcforge:kubernetes.version 1.35: every namespace hpcforge labels enforces v1.35, which `./hpcforge
    admission` reports as not reproduced (and refuses: exit 1), naming the namespaces that enforce baseline or
    restricted (dev's privileged ones run no check at any version)."""
    from offline.admission.verdicts import recorded_objects
    from policies.admission.report import admission_report
    from tests.helpers import run_stack_file, write_variant

    def newer(values: dict[str, Any]) -> None:
        values["hpcforge:kubernetes"]["version"] = "1.35"

    found = recorded_objects(run_stack_file(write_variant(tmp_path, "dev", newer), "dev"))
    report = admission_report(found.objects, found.synced)
    [gap] = pss.pod_security_gaps(pss.pod_security_verdicts(found.objects))
    assert gap.version == (1, 35) and {"database", "directory"} <= set(gap.namespaces)
    assert report.gaps == [gap.message] and report.refused and "hostProbesAndHostLifecycle" in gap.message
    assert gap.message.endswith(
        "or keep hpcforge:kubernetes.version (which sets hpcforge's enforce-version labels) at 1.33 or below"
    )

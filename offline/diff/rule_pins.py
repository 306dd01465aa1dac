"""The upstream release each impact rule that reproduces an operator's behaviour was read at, tied to the pin in
components/versions.py the way the admission reproductions are (policies/admission/pins.py): when a pin moves and the
rule's declared version does not, `out_of_step` names the rule to re-read (tests/offline/diff/test_operator_rules.py)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from policies.admission.family import Pin
from policies.admission.pins import moved

_SLINKY = Pin(
    "slurm-operator", "1.2.1", ("Charts.SLURM_OPERATOR", "Charts.SLURM_OPERATOR_CRDS"), "SlinkyProject/slurm-operator v1.2.1"
)
_MARIADB = Pin(
    "mariadb-operator",
    "26.6.0",
    ("Charts.MARIADB_OPERATOR", "Charts.MARIADB_OPERATOR_CRDS"),
    "mariadb-operator/mariadb-operator v26.6.0",
)
_SRIOV = Pin(
    "network-operator",
    "26.4.1",
    ("Charts.NETWORK_OPERATOR",),
    "k8snetworkplumbingwg/sriov-network-operator v1.6.0, upstream of the sriov-network-operator network-operator 26.4.1 deploys",
)
_ARGOCD = Pin("argo-cd", "10.1.1", ("Charts.ARGO_CD",), "argoproj/argo-cd v3.4.4, the app version of chart argo-cd 10.1.1")
_CERT_MANAGER = Pin("cert-manager", "v1.21.1", ("Charts.CERT_MANAGER",), "cert-manager/cert-manager v1.21.1")
_KUEUE = Pin("kueue", "0.19.2", ("Charts.KUEUE", "Images.KUEUE"), "kubernetes-sigs/kueue v0.19.2")
_METALLB = Pin("metallb", "0.16.1", ("Charts.METALLB",), "metallb/metallb v0.16.1")

RULE_PINS: dict[str, Pin] = {
    "offline.diff.slurm_rules.nodeset_rules": _SLINKY,
    "offline.diff.slurm_rules.controller_rules": _SLINKY,
    "offline.diff.slurm_rules.config_map_rules": _SLINKY,
    "offline.diff.slurm_rules.accounting_rules": _SLINKY,
    "offline.diff.slurm_conf.verdicts": _SLINKY,
    "offline.diff.operator_rules.restapi_rules": _SLINKY,
    "offline.diff.operator_rules.loginset_rules": _SLINKY,
    "offline.diff.operator_rules.sssd_secret_rules": _SLINKY,
    "offline.diff.operator_rules.state_volume_rules": _SLINKY,
    "offline.diff.operator_rules.known_defect_rules": _SLINKY,
    "offline.diff.operator_rules.mariadb_rules": _MARIADB,
    "offline.diff.site_rules.stateful_rules": _MARIADB,
    "offline.diff.operator_rules.sriov_rules": _SRIOV,
    "offline.diff.site_rules.application_rules": _ARGOCD,
    "offline.diff.object_rules.app_project_rules": _ARGOCD,
    "offline.diff.site_rules.certificate_rules": _CERT_MANAGER,
    "offline.diff.site_rules.kueue_rules": _KUEUE,
    "offline.diff.object_rules.queue_label_rules": _KUEUE,
    "offline.diff.site_rules.pool_rules": _METALLB,
    "offline.diff.site_rules.address_rules": _METALLB,
}
"""Rule (module.function) -> the release its evidence was read at. A rule re-read against a new release gets the new
version here (and its evidence the new file@tag:line)."""


def out_of_step(versions: ModuleType | Any) -> list[str]:
    """One message per rule whose pin moved in `versions` without it: the rules to re-read."""
    return [message for rule, pin in RULE_PINS.items() for message in moved(rule, pin, versions)]

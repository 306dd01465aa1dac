"""Name checks for the cluster-only blocks of the operator docs whose names tests/test_docs_commands.py cannot read
from a kubectl or pulumi command line: CUSTOM[block id](site, block text) -> what was checked ("WRONG ..." where it
does not hold)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.helpers import REPO

# kubeseal's defaults, sealed-secrets v0.36.6 (the chart 2.18.5's appVersion) cmd/kubeseal/main.go:85-86
KUBESEAL_NAMESPACE, KUBESEAL_CONTROLLER = "kube-system", "sealed-secrets-controller"
# the label the controller puts on its keys, sealed-secrets v0.36.6 pkg/controller/keys.go:21
KEY_LABEL = "sealedsecrets.bitnami.com/sealed-secrets-key"


def _result(what: str, good: bool) -> str:
    return what if good else f"WRONG {what}"


def _assigned(text: str) -> set[str]:
    return set(re.findall(r"(?:^|\s|export )([A-Z][A-Z0-9_]*)=", text, re.M))


def runbook_preamble(site: Any, text: str) -> list[str]:
    """The variables the restore runbook's preamble sets are the ones the backup jobs' S3 client reads (and PREFIX)."""
    from components.layers.backups.config import BackupsConfig
    from components.layers.backups.objects import s3_env

    config = BackupsConfig.model_validate({"s3": {"bucket": "b-1", "endpoint": "e", "accessKeyId": "a", "secretAccessKey": "s"}})
    wanted = {item["name"] for item in s3_env(config, "keys")} - {"S3_PREFIX"} | {"PREFIX"}
    return [_result(f"S3 variables {sorted(_assigned(text))}", _assigned(text) == wanted)]


def evidence_by_hand(site: Any, text: str) -> list[str]:
    """The variables set before the check script are parameters the stack's evidence Command passes it."""
    script = re.search(r"bash (scripts/evidence/([a-z-]+)\.sh)", text)
    if script is None:
        return ["WRONG no evidence script in the block"]
    passed = site.env.get(f"evidence-{script.group(2)}", set())
    return [_result(f"{name} of evidence-{script.group(2)}", name in passed) for name in sorted(_assigned(text))]


def k0s_kubeconfig(site: Any, text: str) -> list[str]:
    """`k0s kubeconfig admin` is what the bootstrap reads back, on the first controller of the guide's k0s example."""
    guide = (REPO / "docs" / "operations.md").read_text()
    section = guide[guide.index("## Cluster bootstrap with k0s") : guide.index("## Cluster bootstrap with RKE2")]
    first = re.search(r"controllers:\n\s+- \{host: ([0-9.]+)", section)
    host = re.search(r"@([0-9.]+) ", text)
    script = (REPO / "scripts" / "bootstrap" / "k0s-kubeconfig.sh").read_text()
    return [
        _result("k0s kubeconfig admin (scripts/bootstrap/k0s-kubeconfig.sh)", '"$K0S_BIN" kubeconfig admin' in script),
        _result("the first controller of the example", bool(first and host and first.group(1) == host.group(1))),
    ]


def kubeseal(site: Any, text: str) -> list[str]:
    """kubeseal without flags looks for kube-system/sealed-secrets-controller: the chart's Deployment must be that."""
    found = ("Deployment", KUBESEAL_NAMESPACE, KUBESEAL_CONTROLLER) in site.objects
    return [_result(f"Deployment {KUBESEAL_NAMESPACE}/{KUBESEAL_CONTROLLER} (kubeseal's default)", found and "kubeseal" in text)]


def sealing_keys(site: Any, text: str) -> list[str]:
    """The label selects the controller's keys, as the key export does (scripts/backup/export_keys.py)."""
    export = (REPO / "scripts" / "backup" / "export_keys.py").read_text()
    return [_result(f"label {KEY_LABEL}", f"-l {KEY_LABEL} " in text and KEY_LABEL in export)]


CUSTOM: dict[str, Callable[[Any, str], list[str]]] = {
    "runbook-preamble": runbook_preamble,
    "evidence-by-hand": evidence_by_hand,
    "k0s-kubeconfig": k0s_kubeconfig,
    "kubeseal": kubeseal,
    "sealing-keys": sealing_keys,
}

"""Deployment evidence: checks that `pulumi up` runs once the platform is up, for what the control
plane alone cannot tell (Argo CD synced and healthy, slurmctld answering, every NodeSet's nodes
registered and ready (idle, or busy with jobs), a test job through a login node, an LDAP user through SSSD, Grendel's API).

Each check is a shell script in scripts/evidence, run by a `command.local.Command` where `pulumi
up` runs (with kubectl and the stack's context). A check polls until the platform converges or
its timeout passes; a failing check fails the update with a message that says what is wrong.
Results are the stack output `evidence`. Checks re-run when their inputs change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_command as command

from ...paths import PROJECT_ROOT, SCRIPTS
from .config import SiteConfig
from .objects import evidence_checks

EVIDENCE_SCRIPTS = SCRIPTS / "evidence"


@dataclass(frozen=True)
class EvidenceArgs:
    config: SiteConfig
    kube_context: str | None
    depends_on: Sequence[pulumi.Resource]
    kubeconfig: pulumi.Output[str] | None = None
    """A bootstrapped cluster's kubeconfig (secret): kubectl uses it instead of a context."""


class Evidence(pulumi.ComponentResource):
    results: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: EvidenceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:evidence:Evidence", name, None, opts)
        timeout = str(args.config.evidence.timeout_seconds)
        self.results = {}
        previous: list[pulumi.Resource] = []
        for check in evidence_checks(args.config):
            script = EVIDENCE_SCRIPTS / check.script
            environment: dict[str, pulumi.Input[str]] = {**check.environment, "HPCFORGE_EVIDENCE_TIMEOUT": timeout}
            if args.kube_context:
                environment["HPCFORGE_KUBE_CONTEXT"] = args.kube_context
            digest = hashlib.sha256((script.read_text() + (EVIDENCE_SCRIPTS / "lib.sh").read_text()).encode()).hexdigest()
            if args.kubeconfig is not None:
                environment["HPCFORGE_KUBECONFIG_DATA"] = pulumi.Output.secret(args.kubeconfig)
            run = command.local.Command(
                f"evidence-{check.name}",
                create=f"bash scripts/evidence/{check.script}",
                dir=str(PROJECT_ROOT),
                environment=environment,
                # Re-run when the script or its parameters change (and on `pulumi up --replace`).
                triggers=[digest, *sorted(f"{k}={v}" for k, v in environment.items() if isinstance(v, str))],
                # The first check waits for every layer; each later one for the check before it (so, transitively,
                # for every layer too). Depending on the layers once keeps Pulumi's dependency-cycle check,
                # which walks the graph for each (dependent, child of a layer) pair, linear in the site.
                opts=pulumi.ResourceOptions(parent=self, depends_on=previous or list(args.depends_on)),
            )
            # Checks run in order: a broken controller makes the node checks pointless.
            previous = [run]
            self.results[check.name] = run.stdout
        self.register_outputs({"checks": sorted(self.results)})

"""The evidence layer's objects as pure functions: the checks a stack needs, each a script of scripts/evidence with its
parameters (the GPU checks' in gpu.py). layer.py registers a command for each."""

from __future__ import annotations

from dataclasses import dataclass

from ..slurm.face import CONTROLLER
from .config import SiteConfig
from .gpu import gpu_check_environments


@dataclass(frozen=True)
class Check:
    name: str
    script: str
    environment: dict[str, str]


def evidence_checks(config: SiteConfig) -> list[Check]:
    """The checks this stack needs, with their parameters (pure: tested directly)."""
    slurm = config.slurm
    base = {"SLURM_NAMESPACE": slurm.namespace, "SLURM_CONTROLLER": f"{CONTROLLER}-controller"}
    partition = config.evidence.test_partition or next((p.name for p in slurm.partitions if p.default), slurm.partitions[0].name)
    checks = [
        Check("slurm-controller", "slurm-controller.sh", base),
        Check(
            "slurm-nodes",
            "slurm-nodes.sh",
            {**base, "SLURM_NODESETS": " ".join(f"{ns.name}:{ns.replicas}" for ns in slurm.nodesets)},
        ),
        Check("slurm-test-job", "slurm-test-job.sh", {**base, "SLURM_LOGIN": slurm.login.name, "SLURM_PARTITION": partition}),
    ]
    if config.delivery == "argocd" or config.gitops.apps:
        checks.insert(0, Check("argocd-apps", "argocd-apps.sh", {"ARGOCD_NAMESPACE": "argocd"}))
    users = config.directory.users
    user = next((u for u in users if u.name == config.evidence.lookup_user), users[0] if users else None)
    if user is not None:
        checks.append(
            Check(
                "ldap-lookup",
                "ldap-lookup.sh",
                {**base, "SLURM_LOGIN": slurm.login.name, "LOOKUP_USER": user.name, "LOOKUP_UID": str(user.uid_number)},
            )
        )
    checks += [Check(name, script, environment) for name, script, environment in gpu_check_environments(config, base)]
    prov = config.provisioning
    if prov is not None and prov.enabled:
        checks.append(
            Check("grendel-api", "grendel-api.sh", {"GRENDEL_NAMESPACE": prov.namespace, "GRENDEL_HOSTS": str(len(prov.hosts))})
        )
    return checks

"""Reproductions of upstream admission, each module naming the release it reproduces (`REPRODUCES`, pins.py):

- pss: Pod Security Admission (Kubernetes' own, k8s.io/pod-security-admission);
- argocd: Argo CD's AppProject rules; slinky: slurm-operator's webhook and CRD rules; kueue: Kueue's webhooks and
  CRD rules; certmanager, metallb, mariadb: those operators' validating webhooks;
- report: all of them over a set of plain objects (`admission_report`, for `./hpcforge admission`);
- rules: the security pack's stack rules built on them.
"""

# The reproductions use the shared helpers of policies/rules, whose package assembles the packs (this package's
# `rules` among them): load it first, so that whichever module of this package is imported first, the modules load
# in one order (policies.rules, then this package's modules from its `rules`).
from .. import rules as _rules  # noqa: F401

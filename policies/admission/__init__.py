"""Admission as the cluster decides it, one family per package, each exporting a `FAMILY` (family.py) and naming the
upstream release it reproduces (`REPRODUCES`, pins.py):

- pss: Pod Security Admission (Kubernetes' own, k8s.io/pod-security-admission); argocd: Argo CD's AppProject rules;
  reachability: the API server's calls through the NetworkPolicies; slinky: slurm-operator's webhook and CRD rules;
  kueue: Kueue's webhooks and CRD rules; webhooks: the cert-manager and MetalLB validating webhooks (reproduced in
  certmanager/ and metallb/); mariadb: mariadb-operator's validating webhooks;
- family.py: what a family is (its `Verdict`, `Family`); rule.py: how a family's rule runs in the security pack;
- families.py finds the families; report.py (`admission_report`, for `./hpcforge admission`), rules.py (the security
  pack's admission rules) and pins.py loop over them. Adding a family is adding a package.
"""

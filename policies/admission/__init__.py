"""Reproductions of upstream admission, each module naming the release it reproduces (`REPRODUCES`, pins.py):

- pss: Pod Security Admission (Kubernetes' own, k8s.io/pod-security-admission);
- argocd: Argo CD's AppProject rules; slinky: slurm-operator's webhook and CRD rules; kueue: Kueue's webhooks and
  CRD rules; certmanager, metallb, mariadb: those operators' validating webhooks;
- report: all of them over a set of plain objects (`admission_report`, for `./hpcforge admission`);
- rules: the security pack's stack rules built on them.
"""

#!/usr/bin/env bash
# Accounting drift: run sacct_sync.py --check inside a login pod against the desired state that is
# deployed (the script in the ConfigMap slurm-accounts, the desired state in the ConfigMaps
# slurm-accounts-desired-NN: plain, or gzip parts, as components/k8s/chunks.py writes them,
# put back together here with python3). Exit 0: slurmdbd matches;
# 1: drift (the plan is printed); 2: the check could not run. A stack without slurm.accounts has no
# such ConfigMap: nothing to check (exit 0).
#
# The script and the desired state travel to the pod as a tar stream on stdin, so nothing is
# written to the cluster. Needs kubectl with read access and `pods/exec` in the Slurm namespace.
set -euo pipefail

cm=$(kubectl get configmap --all-namespaces --field-selector metadata.name=slurm-accounts \
  -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}')
if [ -z "$cm" ]; then
  echo "no ConfigMap slurm-accounts in the cluster: accounting is not managed as code here"
  exit 0
fi
namespace=$(head -n 1 <<<"$cm")
login=$(kubectl -n "$namespace" get loginsets.slinky.slurm.net -o jsonpath='{.items[0].metadata.name}')
if [ -z "$login" ]; then
  echo "::error::no LoginSet in namespace $namespace to run the check in"
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kubectl -n "$namespace" get configmap slurm-accounts -o jsonpath='{.data.sacct_sync\.py}' >"$work/sacct_sync.py"
kubectl -n "$namespace" get configmap -o json | python3 -c '
import base64, gzip, json, sys
maps = sorted(
    (m for m in json.load(sys.stdin)["items"] if m["metadata"]["name"].startswith("slurm-accounts-desired-")),
    key=lambda m: m["metadata"]["name"],
)
plain = [m["data"]["accounts.json"] for m in maps if "accounts.json" in (m.get("data") or {})]
if plain:
    sys.stdout.write(plain[0])
else:
    parts = sorted((k, v) for m in maps for k, v in (m.get("binaryData") or {}).items() if k.startswith("accounts.json.gz.part"))
    if not parts:
        sys.exit("no desired state in the ConfigMaps slurm-accounts-desired-*")
    sys.stdout.write(gzip.decompress(b"".join(base64.b64decode(v) for _, v in parts)).decode())
' >"$work/accounts.json" || {
  echo "::error::cannot read the deployed desired state"
  exit 2
}

set +e
# shellcheck disable=SC2016 # the single-quoted script runs in the pod, where its $ expand
tar -C "$work" -cf - accounts.json sacct_sync.py |
  kubectl -n "$namespace" exec -i "deployment/$login" -c login -- sh -c \
    'd=$(mktemp -d) && tar -xf - -C "$d" && python3 "$d/sacct_sync.py" --check --desired "$d/accounts.json"; rc=$?; rm -rf "$d"; exit $rc'
rc=$?
set -e
if [ "$rc" -gt 1 ]; then
  echo "::error::the accounting check could not run (exit $rc)"
  exit 2
fi
exit "$rc"

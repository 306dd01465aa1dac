#!/usr/bin/env bash
# Evidence: the GPU Operator's device plugin offers every GPU nodeset's resource on enough nodes of its
# pool: at least <replicas> nodes whose allocatable <resource> reaches the nodeset's per-pod limit.
# GPU_NODESETS: space-separated "nodeset|selector|resource|count|replicas" entries, selector = label=value,...
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
require GPU_NODESETS

check() {
  local entry nodeset selector resource count replicas rows ready problems="" summary=""
  for entry in $GPU_NODESETS; do
    IFS='|' read -r nodeset selector resource count replicas <<<"$entry"
    if ! rows=$(k get nodes -l "$selector" -o "jsonpath={range .items[*]}{.metadata.name}={.status.allocatable.${resource//./\\.}}{\"\\n\"}{end}" 2>&1); then
      echo "listing the nodes of $nodeset ($selector) failed: $rows"
      return 1
    fi
    ready=$(awk -F= -v want="$count" '$2 != "" && $2 + 0 >= want + 0 { n++ } END { print n + 0 }' <<<"$rows")
    if [ "$ready" -lt "$replicas" ]; then
      problems+="nodeset $nodeset: $ready node(s) offer $count $resource, $replicas needed; "
    fi
    summary+="$nodeset: $ready node(s) offer $count $resource; "
  done
  if [ -n "$problems" ]; then
    echo "${problems%; }"
    return 1
  fi
  echo "${summary%; }"
}

converge gpu-allocatable check

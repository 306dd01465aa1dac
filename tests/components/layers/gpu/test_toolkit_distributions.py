"""Issue 35 item 10: what the container toolkit writes on a k0s or RKE2 node with hpcforge's env, replayed from the
pinned sources (nothing here ran on a k0s or RKE2 node, nor the toolkit itself: the model below follows the code it
cites, and main's env fails the same model the way k0sproject/k0s#6547 reports).

- gpu-operator v26.7.0 controllers/object_controls.go `getRuntimeConfigFiles`: the top-level file is CONTAINERD_CONFIG
  (default /etc/containerd/config.toml); the drop-in RUNTIME_DROP_IN_CONFIG, /etc/containerd/conf.d/99-nvidia.toml
  when unset: there is always one.
- nvidia-container-toolkit v1.20.0 pkg/config/engine/containerd/config_drop_in.go `Save`/`ensureImports`: the drop-in
  gets the runtimes (a `plugins."io.containerd.grpc.v1.cri"` section: version 2, containerd.go `New` and
  `criRuntimePluginName`, starting from an empty file), the top-level file `imports = ["<drop-in dir>/*.toml"]`.
- k0s v1.33.4+k0s.0 pkg/component/worker/containerd/configurer.go `handleImports`: each /etc/k0s/containerd.d/*.toml
  with a CRI section is merged into k0s's CRI config; any other is handed to containerd 1.7 as an import, which loads
  the files it imports in turn and takes their plugin sections in place of k0s's (#6547).
- RKE2: the toolkit must write nothing under /var/lib/rancher/rke2/agent/etc/containerd, whose templates RKE2 renders
  its containerd config from (rancher/rke2-docs docs/advanced.md "Configuring containerd").
"""

from __future__ import annotations

import fnmatch
import posixpath
from typing import Any

from components.layers.gpu.objects import K0S_CONTAINERD_DROP_INS, toolkit_env

CRI = "io.containerd.grpc.v1.cri"
NVIDIA_RUNTIME = {
    "runtime_type": "io.containerd.runc.v2",
    "options": {"BinaryName": "/usr/local/nvidia/toolkit/nvidia-container-runtime"},
}
MAIN_K0S = {
    "CONTAINERD_CONFIG": "/etc/k0s/containerd.d/nvidia.toml",
    "CONTAINERD_SOCKET": "/run/k0s/containerd.sock",
    "RUNTIME_CONFIG_SOURCE": "file",
}
MAIN_RKE2 = {
    "CONTAINERD_CONFIG": "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl",
    "CONTAINERD_SOCKET": "/run/k3s/containerd/containerd.sock",
}


def toolkit_writes(env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Host path -> the TOML document the toolkit leaves there, for the operator's and toolkit's code above."""
    top = env.get("CONTAINERD_CONFIG") or env.get("RUNTIME_CONFIG") or "/etc/containerd/config.toml"
    drop_in = env.get("RUNTIME_DROP_IN_CONFIG") or "/etc/containerd/conf.d/99-nvidia.toml"
    return {
        drop_in: {"version": 2, "plugins": {CRI: {"containerd": {"runtimes": {"nvidia": NVIDIA_RUNTIME}}}}},
        top: {"version": 2, "imports": [posixpath.dirname(drop_in) + "/*.toml"]},
    }


def k0s_node(files: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """(k0s's merged CRI section, the imports k0s hands containerd), as handleImports resolves the drop-in directory."""
    cri: dict[str, Any] = {"sandbox_image": "<k0s default>"}  # k0s's generated defaults, one stands for all
    imports = []
    for path in sorted(p for p in files if fnmatch.fnmatch(p, f"{K0S_CONTAINERD_DROP_INS}/*.toml")):
        section = files[path].get("plugins", {}).get(CRI)
        if section is not None:
            cri = {**cri, **section}  # an RFC 7396 merge patch, one level deep is enough here
        else:
            imports.append(path)
    return cri, imports


def nested_cri_imports(files: dict[str, dict[str, Any]], imports: list[str]) -> list[str]:
    """Files with a CRI section that containerd reaches through the imports of an imported file: each would replace
    k0s's whole CRI section (#6547)."""
    found = []
    for path in imports:
        for pattern in files[path].get("imports", []):
            found += [p for p in files if p != path and fnmatch.fnmatch(p, pattern) and CRI in files[p].get("plugins", {})]
    return found


def _env(distribution: str) -> dict[str, str]:
    return {e["name"]: e["value"] for e in toolkit_env(distribution)}


def test_on_k0s_the_runtimes_reach_k0s_cri_config_and_nothing_imports_a_cri_section() -> None:
    files = toolkit_writes(_env("k0s"))
    cri, imports = k0s_node(files)
    assert cri["containerd"]["runtimes"]["nvidia"] == NVIDIA_RUNTIME
    assert cri["sandbox_image"] == "<k0s default>"  # k0s's own values stay
    assert imports == [] and nested_cri_imports(files, imports) == []


def test_k0s_documented_env_as_main_had_it_imports_the_cri_section_through_nvidia_toml() -> None:
    files = toolkit_writes(MAIN_K0S)
    cri, imports = k0s_node(files)
    assert "containerd" not in cri  # the runtimes never reach k0s's merge
    assert imports == ["/etc/k0s/containerd.d/nvidia.toml"]
    assert files["/etc/k0s/containerd.d/nvidia.toml"] == {"version": 2, "imports": ["/etc/containerd/conf.d/*.toml"]}
    assert nested_cri_imports(files, imports) == ["/etc/containerd/conf.d/99-nvidia.toml"]  # k0sproject/k0s#6547


def test_on_rke2_the_toolkit_leaves_rke2s_templates_alone() -> None:
    rke2 = "/var/lib/rancher/rke2/agent/etc/containerd/"
    assert not [path for path in toolkit_writes(_env("rke2")) if path.startswith(rke2)]
    # main: an imports-only config.toml.tmpl in place of RKE2's template
    assert toolkit_writes(MAIN_RKE2)[rke2 + "config.toml.tmpl"] == {"version": 2, "imports": ["/etc/containerd/conf.d/*.toml"]}

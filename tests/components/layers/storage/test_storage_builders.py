"""The storage layer's chart values (components/layers/storage/objects.py)."""

from __future__ import annotations

from components.layers.storage.config import LocalPathConfig
from components.layers.storage.objects import LOCAL_PATH_CLASS, local_path_values, nfs_values
from components.versions import Images


def test_nfs_values_make_no_storage_class_and_move_the_kubelet_dir_only_when_asked() -> None:
    assert nfs_values(kubelet_dir=None)["storageClass"] == {"create": False}
    assert "kubeletDir" not in nfs_values(kubelet_dir=None)
    assert nfs_values(kubelet_dir="/var/lib/k0s/kubelet")["kubeletDir"] == "/var/lib/k0s/kubelet"


def test_local_path_values_follow_the_config() -> None:
    values = local_path_values(LocalPathConfig.model_validate({"defaultClass": False, "path": "/data/volumes"}))
    assert values["storageClass"] == {"create": True, "name": LOCAL_PATH_CLASS, "defaultClass": False}
    assert values["nodePathMap"] == [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["/data/volumes"]}]
    # The helper pods' image is pinned (the chart's default is a moving tag).
    assert values["helperImage"] == {"repository": Images.BUSYBOX.repository, "tag": Images.BUSYBOX.tag}
    assert local_path_values(LocalPathConfig())["storageClass"]["defaultClass"] is True

"""Users that slurmctld and slurmdbd must find by name in their own pods (pure builders).

A client authenticated with a JWT is known to Slurm by the name in the token only: Slinky's Token custom resource
signs just `sun` (slurm-operator v1.2.1 internal/controller/token/slurmjwt/token.go `NewSignedToken`) and the
operator sets no `use_jwt_client_ids` (internal/builder/common/const.go), so slurmctld and slurmdbd resolve the
name with getpwnam where they verify the token (Slurm 26.05.3 src/plugins/auth/jwt/auth_jwt.c `cred_get_ids` ->
`uid_from_string`); a name they cannot resolve is served as nobody (tests/scripts/gpu/test_real_active_checks.py).
The Slinky images know root and slurm only (SlinkyProject/containers schedmd/slurm/26.05/ubuntu26.04/Dockerfile:
`useradd ... slurm`, other users removed) and run no SSSD in those pods.

So the pod gets, from an init container of its own image, a copy of the image's /etc/passwd with the users'
lines added, mounted over /etc/passwd of the daemon's container (the operator appends `template.spec` init
containers and merges the container's volume mounts: v1.2.1 internal/builder/common/pod_template.go
`BuildPodTemplate`, container.go `BuildContainer`). The image's own entries stay as the image has them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...k8s.resources import container_resources

VOLUME = "hpcforge-passwd"
_NAME = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


@dataclass(frozen=True)
class PasswdEntry:
    """One user's /etc/passwd line: no password, no home, no shell (the daemon only looks the name up)."""

    name: str
    uid: int
    gid: int

    def line(self) -> str:
        if not _NAME.match(self.name):
            raise ValueError(f"{self.name!r} cannot be a passwd entry's name")
        return f"{self.name}:x:{self.uid}:{self.gid}:{self.name}:/nonexistent:/usr/sbin/nologin"


def passwd_overlay(users: Sequence[PasswdEntry], image: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the `template` to merge into a Controller or Accounting spec, the volume mount for its daemon's container)."""
    init = {
        "name": VOLUME,
        "image": image,
        "command": ["/bin/sh", "-c", 'cat /etc/passwd > /out/passwd && printf "%s\\n" "$@" >> /out/passwd', "passwd"]
        + [user.line() for user in users],
        "resources": container_resources("10m", "16Mi", "32Mi"),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
        "volumeMounts": [{"name": VOLUME, "mountPath": "/out"}],
    }
    template = {"spec": {"initContainers": [init], "volumes": [{"name": VOLUME, "emptyDir": {}}]}}
    mount = {"name": VOLUME, "mountPath": "/etc/passwd", "subPath": "passwd", "readOnly": True}
    return template, mount


__all__ = ["VOLUME", "PasswdEntry", "passwd_overlay"]

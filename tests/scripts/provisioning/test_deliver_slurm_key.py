"""scripts/provisioning/deliver-slurm-key.sh: the Slurm key goes from the cluster's Secret to each host through pipes
only (issue 39: never in a boot image), run with stand-ins for kubectl and ssh that record what they were given."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

from tests.helpers import REPO

SCRIPT = REPO / "scripts" / "provisioning" / "deliver-slurm-key.sh"
KEY = bytes(range(256)) * 4


def _stand_ins(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    encoded = base64.b64encode(KEY).decode()
    (bin_dir / "kubectl").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/kubectl.args\nprintf %s {encoded}\n')
    # ssh: record its argv, and what arrives on stdin per host, as the remote `cat > ...` would receive it.
    (bin_dir / "ssh").write_text(
        f'#!/bin/sh\necho "$*" >> {tmp_path}/ssh.args\nhost=$(echo "$*" | sed "s/.*root@\\([^ ]*\\).*/\\1/")\n'
        f"cat > {tmp_path}/received-$host\n"
    )
    for tool in ("kubectl", "ssh"):
        (bin_dir / tool).chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}


def test_the_key_reaches_every_host_on_stdin_and_never_on_a_command_line(tmp_path: Path) -> None:
    env = _stand_ins(tmp_path)
    done = subprocess.run(
        ["sh", str(SCRIPT), "-n", "hpc", "cn001", "cn002"], capture_output=True, env=env, check=False, timeout=30
    )
    assert done.returncode == 0, done.stderr
    for host in ("cn001", "cn002"):
        assert (tmp_path / f"received-{host}").read_bytes() == KEY
    kubectl = (tmp_path / "kubectl.args").read_text().splitlines()
    assert kubectl == ['-n hpc get secret slurm-auth-slurm -o go-template={{index .data "slurm.key"}}'] * 2
    ssh = (tmp_path / "ssh.args").read_text()
    assert "chmod 0400 /etc/slurm/slurm.key.new" in ssh and "mv /etc/slurm/slurm.key.new /etc/slurm/slurm.key" in ssh
    encoded = base64.b64encode(KEY).decode()
    assert encoded not in ssh and encoded not in "".join(kubectl)
    assert not [p for p in tmp_path.iterdir() if p.is_file() and p.read_bytes() == KEY and not p.name.startswith("received")]


def test_without_hosts_it_says_how_to_call_it(tmp_path: Path) -> None:
    done = subprocess.run(["sh", str(SCRIPT)], capture_output=True, text=True, env=_stand_ins(tmp_path), check=False)
    assert done.returncode == 2 and "usage:" in done.stderr
    assert os.access(SCRIPT, os.X_OK)

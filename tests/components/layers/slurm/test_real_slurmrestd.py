"""Tier 4 (real daemons): slurmrestd 26.05.3 (the RestApi that hpcforge deploys, `hpcforge:slurm.restapi`) answering
with data_parser v0.0.45 in front of slurmctld and slurmdbd 26.05.3 running hpcforge's rendered prod configuration.

The test plays the operator for the RestApi as for the rest (tests/components/layers/slurm/test_real_slurm.py): slurm.conf gets the
`AuthAltTypes=auth/jwt` lines for a JWT key (slurmdbd.conf too), and slurmrestd runs with `rest_auth/jwt`, as an unprivileged user, with
`SLURM_JWT=daemon` so that it forwards the callers' tokens (in 26.05.3 src/interfaces/auth.c a `SLURM_JWT` in the
environment makes auth/jwt the client's plugin - unless `SLURM_SACK_KEY` is set too, which the harness's environment
has and slurmrestd's here does not).  slurmrestd refuses tokens of root and SlurmUser ("Rejecting thread config token
for user root"), so the caller is a user with a token from `scontrol token`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from components.site.loader import load_config
from components.site.root import PlatformConfig
from tests.components.layers.slurm.test_real_slurm import rendered_site, require_root, stand_in_nodes
from tests.daemons import slurm
from tests.daemons.common import ManagedProcess, free_port, port_open, wait_until
from tests.helpers import config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]

DATA_PARSER = "v0.0.45"  # the newest of the four data_parser plugins 26.05.3 builds (v0.0.42 to v0.0.45)


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_slurmrestd_answers_with_the_rendered_partitions_and_qos(prod: PlatformConfig) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES, "slurmrestd")
    # slurmrestd runs as nobody and reads slurm.conf: pytest's own temporary tree is root-only (0700), so use /tmp
    tmp = Path(tempfile.mkdtemp(prefix="hpcforge-restd-"))
    tmp.chmod(0o755)
    key = tmp / "jwt_hs256.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    jwt = f"AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key={key}\n"
    try:
        with rendered_site(prod, tmp, nodes=stand_in_nodes(prod), more_conf=jwt, dbd_conf=jwt) as (cluster, _dbd):
            token = cluster.scontrol("token", "username=nobody", "lifespan=600").strip().split("=", 1)[1]
            port = free_port()
            restd = ManagedProcess(
                [
                    *[require_binaries("slurmrestd")["slurmrestd"], "-a", "rest_auth/jwt"],
                    *["-s", "openapi/slurmctld,openapi/slurmdbd", "-d", f"data_parser/{DATA_PARSER}"],
                    *["-u", "65534", "-g", "65534", f"127.0.0.1:{port}"],
                ],
                name="slurmrestd",
                log_path=tmp / "slurmrestd.log",
                env=cluster.env({"SLURM_JWT": "daemon", "SLURM_SACK_KEY": None}),
                cwd=tmp,
            )
            try:
                wait_until(lambda: port_open(port), 30, "slurmrestd to listen", log=tmp / "slurmrestd.log")

                def get(path: str) -> dict[str, Any]:
                    request = urllib.request.Request(
                        f"http://127.0.0.1:{port}{path}", headers={"X-SLURM-USER-NAME": "nobody", "X-SLURM-USER-TOKEN": token}
                    )
                    with urllib.request.urlopen(request, timeout=60) as response:
                        answer: dict[str, Any] = json.loads(response.read())
                    assert answer["errors"] == [], answer["errors"]
                    return answer

                partitions = get(f"/slurm/{DATA_PARSER}/partitions?flags=ALL")  # ALL: also partitions hidden from this user
                assert partitions["meta"]["plugin"]["data_parser"] == f"data_parser/{DATA_PARSER}"
                assert {p["name"] for p in partitions["partitions"]} == {p.name for p in prod.slurm.partitions}
                h100 = next(p for p in partitions["partitions"] if p["name"] == "h100")
                assert h100["qos"]["assigned"] == "h100"
                qos = get(f"/slurmdb/{DATA_PARSER}/qos")
                assert "h100" in {q["name"] for q in qos["qos"]}
            finally:
                restd.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

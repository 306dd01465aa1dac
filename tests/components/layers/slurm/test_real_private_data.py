"""PrivateData against the real slurmctld 26.05.3 (issue 39): the lines hpcforge renders are loaded, and they do what
docs/threat-model.md says of the metrics on slurmctld's port: with PrivateData set, slurmctld refuses the metrics to a
request without a token (src/slurmctld/http.c `_check_metrics_authorized`), unless `MetricsParameters=
ignore_private_data`, which hpcforge writes only while monitoring scrapes them (the operator's ServiceMonitor has no
token)."""

from __future__ import annotations

import http.client
from pathlib import Path

import pytest

from components.layers.slurm.slurm_conf import controller_parameters
from components.site.loader import load_config
from tests.components.layers.slurm.test_real_slurm import require_root
from tests.daemons import slurm
from tests.daemons.slurm import SlurmCluster, node_line
from tests.helpers import config_values, raw_config, require_binaries

pytestmark = [pytest.mark.real_daemon, pytest.mark.timeout(300)]


def _metrics_status(port: int) -> tuple[int, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.request("GET", "/metrics/jobs")
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


def _rendered(metrics: bool) -> str:
    prod = load_config(raw_config(config_values("prod")))
    typed = dict(controller_parameters(prod.slurm, accounting=False, metrics=metrics))
    lines = {"MetricsType": "metrics/openmetrics", **{k: typed[k] for k in ("PrivateData", "MetricsParameters") if k in typed}}
    return "".join(f"{key}={value}\n" for key, value in lines.items())


@pytest.mark.parametrize(("metrics", "open_"), [(True, True), (False, False)], ids=["scraped", "not scraped"])
def test_private_data_closes_slurmctld_s_metrics_unless_they_are_scraped(tmp_path: Path, metrics: bool, open_: bool) -> None:
    require_root()
    require_binaries(*slurm.REQUIRED_BINARIES)
    conf = _rendered(metrics)
    assert "PrivateData=accounts,events,jobs,reservations,usage,users\n" in conf
    assert ("MetricsParameters=ignore_private_data\n" in conf) == metrics
    with SlurmCluster(
        tmp_path / "c",
        "pd",
        nodes=[node_line("n1")],
        partitions=["PartitionName=batch Nodes=n1 Default=YES State=UP"],
        extra_conf=conf,
    ) as cluster:
        status, body = _metrics_status(cluster.ctld_port)
        if open_:
            assert status == 200 and "slurm_jobs" in body, (status, body[:300])
        else:
            assert status in (401, 403), (status, body[:300])

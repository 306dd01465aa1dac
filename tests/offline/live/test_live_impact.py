"""offline/live/impact.py on JSON captured from a real Slurm 26.05.3 (tests/fixtures/slurm-json/README.md).

The fixture's cluster: gpu1 (4 GPUs) runs job 1 (2 GPUs, 12 h limit) and job 2 (1 GPU, 30 min) of root;
cpu[1-2] run job 3 (root, both nodes) and cpu1 job 8 (nobody, no time limit); job 7 is pending; cpu2 is
draining. Captured at 1795766430 (Unix seconds). The live tier (tests/offline/live/test_real_live_impact.py) checks
the same against a cluster it starts.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from offline.live.impact import duration, jobs_at_risk, render_markdown, render_text
from offline.live.slurm_json import (
    LiveDataError,
    LiveSlurm,
    fetch_live,
    gres_gpus,
    load_live,
    parse_jobs,
    parse_nodes,
    tres_gpus,
)
from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures" / "slurm-json"
OBSERVED = 1795766430
START = {1: 1795765578, 2: 1795765587, 3: 1795765587, 8: 1795765927}  # start_time.number in squeue.json


def _load() -> LiveSlurm:
    return load_live(FIXTURES / "squeue.json", FIXTURES / "sinfo.json", observed_at=OBSERVED)


def test_the_fixture_is_slurm_2605_data_parser_v0045() -> None:
    for name in ("squeue.json", "sinfo.json", "rest-jobs.json", "rest-nodes.json"):
        meta = json.loads((FIXTURES / name).read_text())["meta"]
        assert meta["slurm"]["release"] == "26.05.3" and meta["plugin"]["data_parser"] == "data_parser/v0.0.45", name


def test_jobs_are_read_with_their_nodes_gpus_and_limits() -> None:
    live = load_live(FIXTURES / "squeue.json", FIXTURES / "sinfo.json", observed_at=OBSERVED)
    jobs = {job.job_id: job for job in live.jobs}
    assert sorted(jobs) == [1, 2, 3, 7, 8]
    assert (jobs[1].name, jobs[1].user, jobs[1].account, jobs[1].partition) == ("train-llm", "root", "ml", "gpu")
    assert [jobs[i].gpus for i in (1, 2, 3, 7, 8)] == [2, 1, 0, 0, 0]
    assert jobs[3].nodes == ("cpu1", "cpu2") and jobs[3].nodelist == "cpu[1-2]"
    assert [jobs[i].time_limit_min for i in (1, 2, 3, 8)] == [720, 30, 60, None]
    assert jobs[8].user == "nobody" and jobs[7].state == ("PENDING",) and not jobs[7].holds_nodes
    assert (live.cluster, live.release) == ("j34live", "26.05.3")


def test_nodes_from_sinfo_and_from_slurmrestd_agree() -> None:
    from_sinfo = parse_nodes(json.loads((FIXTURES / "sinfo.json").read_text()))
    from_rest = parse_nodes(json.loads((FIXTURES / "rest-nodes.json").read_text()))
    assert {n: (v.gpus, v.partitions) for n, v in from_sinfo.items()} == {n: (v.gpus, v.partitions) for n, v in from_rest.items()}
    assert from_sinfo["gpu1"].gpus == 4 and from_sinfo["cpu1"].gpus == 0
    assert from_sinfo["cpu2"].state == ("MIXED", "DRAIN") and "DRAIN" in from_rest["cpu2"].state


def test_jobs_at_risk_on_the_gpu_node_and_their_gpu_hours() -> None:
    impact = jobs_at_risk(_load(), {"gpu1"})
    assert [risk.job.job_id for risk in impact.jobs] == [1, 2]  # most GPU-hours first
    first, second = impact.jobs
    assert first.elapsed_s == OBSERVED - START[1] == 852 and second.elapsed_s == OBSERVED - START[2] == 843
    assert first.gpu_hours_at_risk == pytest.approx(2 * 852 / 3600)
    assert second.gpu_hours_at_risk == pytest.approx(843 / 3600)
    assert first.remaining_s == 720 * 60 - 852 and second.remaining_s == 30 * 60 - 843
    assert second.gpu_hours_to_run == pytest.approx(957 / 3600)
    assert impact.gpus_out == 4 and impact.users == ("root",)
    assert impact.gpu_hours_at_risk == pytest.approx((2 * 852 + 843) / 3600)


def test_a_job_on_a_drained_node_and_another_is_at_risk_whole_and_unknown_nodes_are_named() -> None:
    impact = jobs_at_risk(_load(), ["cpu2", "gpu-a100-[0-1]"])
    assert [risk.job.job_id for risk in impact.jobs] == [3]
    assert impact.jobs[0].nodes_hit == ("cpu2",) and impact.jobs[0].job.nodes == ("cpu1", "cpu2")
    assert impact.unknown_nodes == ("gpu-a100-0", "gpu-a100-1") and impact.gpus_out == 0
    assert impact.busy_nodes == {"cpu2"}
    everything = jobs_at_risk(_load(), ["cpu[1-2]", "gpu1"])
    assert {risk.job.job_id for risk in everything.jobs} == {1, 2, 3, 8}  # not the pending 7
    assert everything.users == ("nobody", "root")
    (post,) = [risk for risk in everything.jobs if risk.job.job_id == 8]
    assert post.remaining_s is None and post.gpu_hours_to_run is None


def test_no_nodes_no_jobs() -> None:
    impact = jobs_at_risk(_load(), [])
    assert impact.jobs == () and impact.gpu_hours_at_risk == 0 and impact.busy_nodes == set()
    assert render_text(impact).startswith("Live impact: 0 running jobs of 0 users on 0 nodes that drain or restart (no nodes)")


def test_text_and_markdown_reports() -> None:
    impact = jobs_at_risk(_load(), {"gpu1"})
    text = render_text(impact)
    assert text.splitlines()[0] == (
        "Live impact: 2 running jobs of 1 user on 1 node that drain or restart (gpu1); 0.71 GPU-hours at risk,"
        " 23.79 GPU-hours still to run, 4 GPUs out"
    )
    assert "observed 2026-11-27T08:00:30Z" in text
    row = next(line.split() for line in text.splitlines() if line.strip().startswith("1 "))
    assert row == ["1", "root", "ml", "gpu", "gpu1", "2", "14:12", "12:00:00", "0.47", "23.53"]
    markdown = render_markdown(impact)
    assert "| job | user | account | partition | nodes | GPUs | elapsed | time limit | GPU-h at risk | GPU-h to run |" in markdown
    assert "| 2 | root | ml | gpu | gpu1 | 1 | 14:03 | 30:00 | 0.23 | 0.27 |" in markdown


@pytest.mark.parametrize(
    ("text", "gpus"),
    [
        ("gpu:h100:2(IDX:0-1)", 2),
        ("gpu:h100:1(IDX:2)", 1),
        ("gpu:4(IDX:0,2-3)", 4),
        ("gpu:a100:2(IDX:0-1),gpu:h100:1(IDX:2),nic:1", 3),
        ("gpu:h100:4", 4),
        ("shard:8,nic:1", 0),
        ("", 0),
    ],
)
def test_gpus_in_a_gres_string(text: str, gpus: int) -> None:
    assert gres_gpus(text) == gpus


def test_gpus_from_tres_alloc_str_when_slurmdbd_accounts_for_them() -> None:
    assert tres_gpus("cpu=8,mem=64G,node=1,billing=8,gres/gpu=4,gres/gpu:h100=4") == 4
    assert tres_gpus("cpu=1,gres/gpu:h100=2") == 2
    assert tres_gpus("cpu=1,node=1,billing=1") == 0
    job = json.loads((FIXTURES / "squeue.json").read_text())
    job["jobs"] = [dict(job["jobs"][0], gres_detail=[], tres_alloc_str="cpu=1,node=1,gres/gpu=3")]
    assert parse_jobs(job)[0].gpus == 3


def test_slurm_time_format() -> None:
    assert [duration(s) for s in (0, 59, 852, 3600, 43200, 90061, None)] == [
        "0:00",
        "0:59",
        "14:12",
        "1:00:00",
        "12:00:00",
        "1-01:01:01",
        "UNLIMITED",
    ]


def test_errors_reported_by_slurm_and_other_shapes_are_refused(tmp_path: Path) -> None:
    with pytest.raises(LiveDataError, match="Protocol authentication error"):
        parse_jobs(json.loads((FIXTURES / "rest-jobs-bad-token.json").read_text()))
    with pytest.raises(LiveDataError, match="not Slurm JSON with 'jobs'"):
        parse_jobs(json.loads((FIXTURES / "sinfo.json").read_text()))
    older = json.loads((FIXTURES / "squeue.json").read_text())
    older["meta"]["plugin"]["data_parser"] = "data_parser/v0.0.41"
    with pytest.raises(LiveDataError, match=r"written by data_parser/v0\.0\.41; this reads data_parser v0\.0\.42 to v0\.0\.45"):
        parse_jobs(older)
    broken = tmp_path / "squeue.json"
    broken.write_text("{")
    with pytest.raises(LiveDataError, match="not JSON"):
        load_live(broken, FIXTURES / "sinfo.json")
    with pytest.raises(LiveDataError, match="No such file"):
        load_live(tmp_path / "missing.json", FIXTURES / "sinfo.json")
    with pytest.raises(LiveDataError, match="bad hostlist"):
        jobs_at_risk(_load(), ["gpu[1-"])


# --- slurmrestd (a local stand-in serving the captured answers) ---------------------------------------------

TOKEN = "token-for-the-test"


class _FakeSlurmrestd(BaseHTTPRequestHandler):
    """Answers as the captured slurmrestd did: /jobs and /nodes with the right token, 511 + errors without."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        _FakeSlurmrestd.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        files = {"/slurm/v0.0.45/jobs": "rest-jobs.json", "/slurm/v0.0.45/nodes": "rest-nodes.json"}
        if self.path not in files:
            self.send_response(404)
            self.end_headers()
            return
        ok = self.headers.get("X-SLURM-USER-TOKEN") == TOKEN
        body = (FIXTURES / (files[self.path] if ok else "rest-jobs-bad-token.json")).read_bytes()
        self.send_response(200 if ok else 511)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def slurmrestd() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeSlurmrestd)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeSlurmrestd.seen.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_slurmrestd_answers_give_the_same_impact_as_the_files(slurmrestd: str) -> None:
    live = fetch_live(slurmrestd + "/", TOKEN, user="root", observed_at=OBSERVED)
    assert [(h["path"], h["x-slurm-user-token"], h["x-slurm-user-name"]) for h in _FakeSlurmrestd.seen] == [
        ("/slurm/v0.0.45/jobs", TOKEN, "root"),
        ("/slurm/v0.0.45/nodes", TOKEN, "root"),
    ]
    rest = jobs_at_risk(live, {"gpu1", "cpu1"})
    files = jobs_at_risk(_load(), {"gpu1", "cpu1"})
    assert [(r.job.job_id, r.job.gpus, r.job.user, r.elapsed_s) for r in rest.jobs] == [
        (r.job.job_id, r.job.gpus, r.job.user, r.elapsed_s) for r in files.jobs
    ]
    assert rest.gpus_out == files.gpus_out == 4 and rest.source == "slurmrestd"  # no URL, no path, in the report


def test_slurmrestd_refusing_the_token_is_a_clear_error(slurmrestd: str) -> None:
    with pytest.raises(LiveDataError, match=r"HTTP 511: .*Protocol authentication error"):
        fetch_live(slurmrestd, "wrong")


def test_slurmrestd_unreachable_is_a_clear_error() -> None:
    from tests.daemons.common import free_ports

    (port,) = free_ports(1)
    with pytest.raises(LiveDataError, match=f"127.0.0.1:{port}/slurm/v0.0.45/jobs"):
        fetch_live(f"http://127.0.0.1:{port}", TOKEN, timeout=5)


# --- the command ----------------------------------------------------------------------------------------------


def _hpcforge(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "hpcforge"), *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False, env=env
    )


def test_cli_prints_the_report_from_files() -> None:
    files = ["--squeue", str(FIXTURES / "squeue.json"), "--sinfo", str(FIXTURES / "sinfo.json")]
    result = _hpcforge("live-impact", "--nodes", "gpu1", *files, "--observed-at", str(OBSERVED), "--format", "markdown")
    assert result.returncode == 0, result.stderr
    assert result.stdout == render_markdown(jobs_at_risk(_load(), {"gpu1"}))
    assert result.stderr == ""


def test_cli_refuses_missing_input_and_a_missing_token(slurmrestd: str) -> None:
    import os

    missing = _hpcforge("live-impact", "--nodes", "gpu1", "--squeue", str(FIXTURES / "squeue.json"))
    assert missing.returncode == 2 and "give --squeue FILE and --sinfo FILE" in missing.stderr
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JWT"}
    no_token = _hpcforge("live-impact", "--nodes", "gpu1", "--slurmrestd", slurmrestd, env=env)
    assert no_token.returncode == 2 and "needs a token in $SLURM_JWT" in no_token.stderr
    with_token = _hpcforge("live-impact", "--nodes", "gpu1", "--slurmrestd", slurmrestd, env={**env, "SLURM_JWT": TOKEN})
    assert with_token.returncode == 0, with_token.stderr
    assert "2 running jobs of 1 user on 1 node" in with_token.stdout and TOKEN not in with_token.stdout


def test_the_hpcforge_script_runs_from_another_directory(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(REPO / "hpcforge"), "policy-config", "--config", str(REPO / "Pulumi.prod.yaml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "policies/config/prod.json\n"), result.stderr


# --- issue 34, "What the review found", live impact: each of these failed on the code before the fix ------------------


def _live_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from offline.cli import main

    code = main(["live-impact", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _squeue_with(tmp_path: Path, edit: object) -> Path:
    data = json.loads((FIXTURES / "squeue.json").read_text())
    edit(data)  # type: ignore[operator]
    path = tmp_path / "squeue.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda d: d["jobs"][0].pop("job_id"), r"jobs\[0\] \(job\) has no job_id"),
        (lambda d: d.update(jobs=None), r"'jobs' is null, not a list"),
        (lambda d: d["jobs"][2].update(nodes=7), r"jobs\[2\] \(job 3\): nodes: expected a hostlist string, got 7"),
        (lambda d: d["jobs"][0].update(time_limit="12:00:00"), r"jobs\[0\] \(job 1\): time_limit: expected a number"),
        (lambda d: d.update(jobs={"1": {}}), r"'jobs' is an object, not a list"),
    ],
)
def test_malformed_job_json_is_a_clear_error_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: object, reason: str
) -> None:
    squeue = _squeue_with(tmp_path, edit)
    code, out, err = _live_cli(capsys, "--nodes", "gpu1", "--squeue", str(squeue), "--sinfo", str(FIXTURES / "sinfo.json"))
    assert code == 2 and out == ""
    assert re.search(reason, err), err
    assert "Traceback" not in err and str(tmp_path) not in err


def test_the_time_of_the_capture_is_the_json_s_own_not_the_file_s(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """squeue's `last_update` is when slurmctld packed the answer (src/slurmctld/job_mgr.c _pack_init_job_info:
    pack_time(time(NULL))): a file copied a day later still says the jobs had run 14 minutes."""
    import os

    copy = tmp_path / "squeue.json"
    copy.write_bytes((FIXTURES / "squeue.json").read_bytes())
    os.utime(copy, (OBSERVED + 86400, OBSERVED + 86400))
    live = load_live(copy, FIXTURES / "sinfo.json")
    assert live.observed_at == OBSERVED
    assert jobs_at_risk(live, {"gpu1"}).jobs[0].elapsed_s == 852
    later = load_live(copy, FIXTURES / "sinfo.json", observed_at=OBSERVED + 60)
    assert jobs_at_risk(later, {"gpu1"}).jobs[0].elapsed_s == 852 + 60
    code, out, _ = _live_cli(
        capsys,
        "--nodes",
        "gpu1",
        "--squeue",
        str(copy),
        "--sinfo",
        str(FIXTURES / "sinfo.json"),
        "--observed-at",
        "2026-11-27T08:01:30Z",
    )
    assert code == 0 and "observed 2026-11-27T08:01:30Z" in out
    no_time = _squeue_with(tmp_path, lambda d: d.pop("last_update"))
    with pytest.raises(LiveDataError, match=r"no last_update.*--observed-at"):
        load_live(no_time, FIXTURES / "sinfo.json")


def test_a_job_without_a_time_limit_is_flagged_its_drain_never_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _live_cli(
        capsys, "--nodes", "cpu1", "--squeue", str(FIXTURES / "squeue.json"), "--sinfo", str(FIXTURES / "sinfo.json")
    )
    assert code == 0
    assert "job 8 (nobody) has no time limit: a drain of cpu1 never finishes" in out
    row = next(line.split() for line in out.splitlines() if line.strip().startswith("8 "))
    assert "UNLIMITED" in row


def test_gpu_hours_still_to_run_are_printed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _live_cli(
        capsys, "--nodes", "gpu1", "--squeue", str(FIXTURES / "squeue.json"), "--sinfo", str(FIXTURES / "sinfo.json")
    )
    assert code == 0
    # job 1: 2 GPUs x (720 min - 852 s), job 2: 1 GPU x (30 min - 843 s)
    to_run = (2 * (720 * 60 - 852) + (30 * 60 - 843)) / 3600
    assert f"{to_run:.2f} GPU-hours still to run" in out
    assert "GPU-h to run" in out


def test_no_machine_path_appears_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    squeue = tmp_path / "deep" / "capture" / "squeue.json"
    squeue.parent.mkdir(parents=True)
    squeue.write_bytes((FIXTURES / "squeue.json").read_bytes())
    code, out, _ = _live_cli(capsys, "--nodes", "gpu1", "--squeue", str(squeue), "--sinfo", str(FIXTURES / "sinfo.json"))
    assert code == 0
    assert str(tmp_path) not in out and str(FIXTURES) not in out and "/var/cache" not in out
    assert "squeue.json + sinfo.json" in out


def _v0046(data: dict) -> dict:
    data["meta"]["plugin"]["data_parser"] = "data_parser/v0.0.46"
    return data


def test_data_parser_v0046_is_read_with_a_warning_where_its_fields_match(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/fixtures/slurm-json/squeue-v0.0.46.json: hand-made (its README says how) as Slurm 26.11 would print the
    fields read here, unchanged from v0.0.45."""
    code, out, err = _live_cli(
        capsys, "--nodes", "gpu1", "--squeue", str(FIXTURES / "squeue-v0.0.46.json"), "--sinfo", str(FIXTURES / "sinfo.json")
    )
    assert code == 0, err
    assert "2 running jobs of 1 user" in out
    warning = "squeue-v0.0.46.json: written by data_parser/v0.0.46, newer than v0.0.42 to v0.0.45; the fields read here match"
    assert warning in out and warning in err


def test_data_parser_v0046_with_other_fields_is_refused_with_the_reason(tmp_path: Path) -> None:
    data = _v0046(json.loads((FIXTURES / "squeue.json").read_text()))
    for job in data["jobs"]:
        job["time_limit"] = {"minutes": 60}
    with pytest.raises(
        LiveDataError, match=r"written by data_parser/v0\.0\.46.*jobs\[0\] \(job 1\): time_limit: expected a number"
    ):
        parse_jobs(data, "squeue.json")


def test_a_missing_data_parser_is_refused_not_read_silently() -> None:
    data = json.loads((FIXTURES / "squeue.json").read_text())
    del data["meta"]["plugin"]["data_parser"]
    with pytest.raises(LiveDataError, match=r"no meta\.plugin\.data_parser"):
        parse_jobs(data, "squeue.json")
    del data["meta"]
    with pytest.raises(LiveDataError, match=r"no meta\.plugin\.data_parser"):
        parse_jobs(data, "squeue.json")

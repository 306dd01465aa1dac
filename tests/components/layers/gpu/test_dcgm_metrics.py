"""dcgm-exporter's metric list and labels, held against what dcgm-exporter 4.6.0-4.8.3 reads and writes.

- The `dcgm-metrics.csv` the chart puts in its ConfigMap is read by Go's own encoding/csv (Debian's golang-go) the
  way dcgm-exporter reads it (internal/pkg/counters/counter_config.go `ReadCSVFile`: `csv.NewReader`,
  `Comment = '#'`, `ReadAll`; `ExtractCounters`: fields trimmed of spaces, exactly 3 per record, the type one of
  `promMetricType` in internal/pkg/counters/variables.go). The rest of ExtractCounters (the DCGM field lookup) needs
  libdcgm: the names are checked against dcgm-exporter's own CSV files instead (components/layers/gpu/dcgm_metrics.py).
- Every DCGM metric an alert or a dashboard queries is in that list, and every label they read is one the exporter
  writes (`hostname`, not `Hostname`, since NVIDIA/dcgm-exporter#655).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.layers.gpu.config import GpuOperatorConfig
from components.layers.gpu.dcgm_metrics import (
    DCGM_METRICS,
    GPU_LABELS,
    HPC_JOB_LABEL,
    KUBERNETES_LABELS,
    METRICS_CONFIG_MAP,
    XID_LABEL,
    DcgmMetric,
    dcgm_metrics_csv,
)
from components.layers.gpu.face import metric_names
from components.layers.gpu.objects import gpu_operator_values
from components.layers.observability.alerts import RuleSettings, alert_rules
from components.layers.observability.dashboards import dashboards, query_metrics
from offline.program.engine import RecordedStack
from tests.helpers import go_program
from tests.test_layers import objects

# What dcgm-exporter does with the file up to the DCGM field lookup (sources in the module docstring). Prints
# "name<TAB>type" per record; exit 1: encoding/csv refused the file, 2: not 3 fields, 3: unknown type.
GO_READ_COUNTERS = """package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
)

var promMetricType = map[string]bool{"gauge": true, "counter": true, "histogram": true, "summary": true, "label": true}

func main() {
	r := csv.NewReader(os.Stdin)
	r.Comment = '#'
	records, err := r.ReadAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i, record := range records {
		if len(record) == 0 {
			continue
		}
		for j, field := range record {
			record[j] = strings.Trim(field, " ")
		}
		if len(record) != 3 {
			fmt.Fprintf(os.Stderr, "line %d: expected 3 fields, got %d\\n", i, len(record))
			os.Exit(2)
		}
		if !promMetricType[record[1]] {
			fmt.Fprintf(os.Stderr, "line %d: unknown type %q\\n", i, record[1])
			os.Exit(3)
		}
		fmt.Printf("%s\\t%s\\n", record[0], record[1])
	}
}
"""


def read_counters(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    program = go_program(tmp_path, GO_READ_COUNTERS, "read-counters")
    return subprocess.run([str(program)], input=text, capture_output=True, text=True, timeout=60, check=False)


def chart_csv() -> str:
    exporter = gpu_operator_values(GpuOperatorConfig())["dcgmExporter"]
    assert exporter["config"]["name"] == METRICS_CONFIG_MAP and exporter["config"]["create"] is True
    data: str = exporter["config"]["data"]
    return data


def test_go_encoding_csv_reads_the_chart_metrics_file_as_dcgm_exporter_does(tmp_path: Path) -> None:
    result = read_counters(tmp_path, chart_csv())
    assert result.returncode == 0, result.stderr
    read = [tuple(line.split("\t")) for line in result.stdout.splitlines()]
    assert read == [(m.field, m.type) for m in DCGM_METRICS]


def test_a_comma_in_a_help_text_is_refused_here_and_by_the_exporter_reader(tmp_path: Path) -> None:
    bad = DcgmMetric("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature, in C")
    with pytest.raises(ValueError, match=r"DCGM_FI_DEV_GPU_TEMP.*cannot be one field"):
        dcgm_metrics_csv((bad,))
    result = read_counters(tmp_path, "DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature, in C\n")
    assert result.returncode == 2 and "expected 3 fields, got 4" in result.stderr


def _gpu_queries() -> Iterator[tuple[str, set[str]]]:
    """Each PromQL expression of the GPU alerts and dashboards, with the labels its alert annotations (`$labels.x`)
    or dashboard legend (`{{x}}`) and groupings (`by (x)`) read."""
    for group in alert_rules(RuleSettings(gpus=True))["groups"]:
        for rule in group["rules"]:
            yield rule["expr"], {label for text in rule["annotations"].values() for label in re.findall(r"\$labels\.(\w+)", text)}
    for board in dashboards(gpus=True).values():
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                labels = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")))
                labels |= {
                    label.strip() for found in re.findall(r"\bby \(([^)]*)\)", target["expr"]) for label in found.split(",")
                }
                yield target["expr"], labels


def test_every_dcgm_metric_the_alerts_and_dashboards_query_is_collected() -> None:
    collected = {line.split(",")[0] for line in chart_csv().splitlines() if line and not line.startswith("#")}
    dcgm = {name for expr, _ in _gpu_queries() for name in query_metrics(expr) if name.startswith("DCGM_")}
    assert {"DCGM_EXP_XID_ERRORS_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE"} <= dcgm
    assert dcgm <= collected
    assert dcgm <= metric_names()


def _dcgm_label_uses() -> set[str]:
    """Labels that the GPU alerts' annotations and the GPU dashboards' legends and groupings read on DCGM queries."""
    return {
        label
        for expr, labels in _gpu_queries()
        if any(name.startswith("DCGM_") for name in query_metrics(expr))
        for label in labels
    }


def test_gpu_alerts_and_dashboards_read_only_labels_dcgm_exporter_writes() -> None:
    used = _dcgm_label_uses()
    assert {"gpu", "hostname", HPC_JOB_LABEL} <= used
    assert used <= GPU_LABELS | KUBERNETES_LABELS | {HPC_JOB_LABEL, XID_LABEL}
    assert "Hostname" not in GPU_LABELS  # renamed by NVIDIA/dcgm-exporter#655, first released in 4.6.0-4.8.3


def _dcgm_scrapers(stack: RecordedStack) -> list[str]:
    """What scrapes dcgm-exporter's pods (label app=nvidia-dcgm-exporter in gpu-operator): hpcforge's PodMonitors and
    ServiceMonitors, and the operator's own ServiceMonitor `nvidia-dcgm-exporter`, which it creates when the
    ClusterPolicy's `dcgmExporter.serviceMonitor.enabled` is true (gpu-operator v26.7.0 controllers/object_controls.go,
    assets/state-dcgm-exporter/0500_service_monitor.yaml; the chart copies the value into the ClusterPolicy)."""
    scrapers = []
    for kind in ("PodMonitor", "ServiceMonitor"):
        for key, resource in objects(stack, kind).items():
            spec = resource.inputs["spec"]
            if (
                "gpu-operator" in spec.get("namespaceSelector", {}).get("matchNames", [])
                and spec["selector"].get("matchLabels", {}).get("app") == "nvidia-dcgm-exporter"
            ):
                scrapers.append(f"{kind} {key}")
    operator = [r.inputs for r in objects(stack, "Application").values() if r.inputs["metadata"]["name"] == "gpu-operator"]
    for application in operator:
        if application["spec"]["source"]["helm"]["valuesObject"]["dcgmExporter"]["serviceMonitor"]["enabled"]:
            scrapers.append("ServiceMonitor gpu-operator/nvidia-dcgm-exporter (made by the operator)")
    return scrapers


def test_prod_scrapes_dcgm_exporter_once(prod_stack: RecordedStack) -> None:
    assert _dcgm_scrapers(prod_stack) == ["PodMonitor monitoring/dcgm-exporter"]


def test_without_the_site_s_prometheus_the_operator_keeps_its_service_monitor() -> None:
    assert gpu_operator_values(GpuOperatorConfig())["dcgmExporter"]["serviceMonitor"] == {"enabled": True}
    assert gpu_operator_values(GpuOperatorConfig(), site_scrapes_dcgm=True)["dcgmExporter"]["serviceMonitor"] == {
        "enabled": False
    }

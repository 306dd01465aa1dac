"""The batch layer's pure builders (components/layers/batch/objects.py), on the prod stack's config."""

from __future__ import annotations

import pytest
import yaml

from components.layers.batch.objects import (
    GPU,
    KUEUE_VISIBILITY_PORT,
    QUEUE_LABEL,
    TEAM_NAMESPACES,
    appwrapper_namespace_allows,
    cluster_queue_spec,
    kueue_manager_config,
    kueue_namespace_allows,
    kueue_values,
    local_queue_spec,
    priority_class_body,
    sample_appwrapper,
)
from components.site.loader import load_config
from components.site.root import PlatformConfig
from components.versions import Images
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


def test_kueue_values_pin_the_image_and_carry_the_manager_configuration() -> None:
    values = kueue_values()
    image = values["controllerManager"]["manager"]["image"]
    assert (image["repository"], image["tag"]) == (Images.KUEUE.repository, Images.KUEUE.tag)
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config == kueue_manager_config()
    # Kueue's job webhooks only for the team namespaces, not every namespace of the cluster.
    assert config["managedJobsNamespaceSelector"] == TEAM_NAMESPACES


def test_the_kueue_namespace_opens_the_visibility_api_port() -> None:
    ingress_ports = {p.port for a in kueue_namespace_allows() if a.direction == "ingress" for p in a.ports}
    assert ingress_ports == {9443, 8443, KUEUE_VISIBILITY_PORT}
    assert [a.name for a in appwrapper_namespace_allows()] == ["allow-egress-apiserver", "allow-ingress-webhook"]


def test_cluster_queue_covers_gpus_only_when_a_quota_has_them(prod: PlatformConfig) -> None:
    assert prod.batch is not None
    inference = next(q for q in prod.batch.cluster_queues if q.name == "inference")
    spec = cluster_queue_spec(inference, "site")
    group = spec["resourceGroups"][0]
    assert group["coveredResources"] == ["cpu", "memory", GPU]
    assert spec["namespaceSelector"] == {"matchLabels": {QUEUE_LABEL: "inference"}}
    # Every flavor lists every covered resource (Kueue refuses a flavor missing one), borrowing limits where set.
    by_flavor = {f["name"]: {r["name"]: r for r in f["resources"]} for f in group["flavors"]}
    assert by_flavor["batch-cpu"][GPU]["nominalQuota"] == 0
    assert by_flavor["l40s"][GPU]["borrowingLimit"] == 4
    assert "borrowingLimit" not in by_flavor["batch-cpu"][GPU]
    cpu_only = inference.model_copy(update={"quotas": (inference.quotas[0],)})
    assert cluster_queue_spec(cpu_only, "site")["resourceGroups"][0]["coveredResources"] == ["cpu", "memory"]


def test_a_queue_outside_the_cohort_has_no_cohort_name(prod: PlatformConfig) -> None:
    assert prod.batch is not None
    queue = prod.batch.cluster_queues[0]
    assert cluster_queue_spec(queue, "site")["cohortName"] == "site"
    alone = queue.model_copy(update={"in_cohort": False})
    assert "cohortName" not in cluster_queue_spec(alone, "site")


def test_local_queue_and_priority_class_bodies(prod: PlatformConfig) -> None:
    assert prod.batch is not None
    team = prod.batch.teams[2]
    assert local_queue_spec(team) == {"clusterQueue": "inference"}
    urgent = prod.batch.priority_classes[0]
    assert priority_class_body(urgent) == {"value": 1000, "description": "Deadline work that may preempt"}


def test_sample_appwrapper_goes_to_the_default_local_queue() -> None:
    sample = sample_appwrapper("team-llm")
    assert sample["metadata"]["namespace"] == "team-llm"
    assert sample["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "default"}
    job = sample["spec"]["components"][0]["template"]
    assert job["spec"]["parallelism"] == sample["spec"]["components"][0]["podSets"][0]["replicas"] == 2

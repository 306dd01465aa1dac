"""The backups layer's builders moved out of its ComponentResource (components/layers/backups/objects.py): the S3
credentials, the backup volume's claim, the traffic rules and the key export's grants."""

from __future__ import annotations

from typing import Any

from components.k8s.certificates import CA_SECRET
from components.layers.backups.config import BackupsConfig
from components.layers.backups.objects import (
    backup_claim_spec,
    directory_s3_policy_spec,
    key_export_allows,
    key_export_grants,
    key_export_spec,
    s3_credentials,
)

S3: dict[str, Any] = {
    "bucket": "hpc-backups",
    "endpoint": "minio.example.org:9000",
    "accessKeyId": "AKID",
    "secretAccessKey": "SECRET",
}


def test_s3_credentials_reveal_the_secret_values_for_the_secret() -> None:
    cfg = BackupsConfig.model_validate({"s3": S3})
    assert s3_credentials(cfg) == {"access-key-id": "AKID", "secret-access-key": "SECRET"}


def test_backup_claim_names_a_storage_class_only_when_given() -> None:
    cfg = BackupsConfig.model_validate({"volume": {"size": "200Gi"}})
    assert backup_claim_spec(cfg, None) == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "200Gi"}}}
    assert backup_claim_spec(cfg, "fast")["storageClassName"] == "fast"


def test_the_directory_s3_policy_lets_only_its_backup_pods_out() -> None:
    spec = directory_s3_policy_spec()
    assert spec["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "dirsrv", "app.kubernetes.io/component": "backups"}}
    assert spec["policyTypes"] == ["Egress"]
    ports = {p["port"] for rule in spec["egress"] for p in rule["ports"]}
    assert ports == {443, 80, 9000}


def test_the_key_export_reaches_the_internet_only_with_an_s3_target() -> None:
    volume = key_export_allows(BackupsConfig.model_validate({"volume": {}}))
    s3 = key_export_allows(BackupsConfig.model_validate({"s3": S3}))
    assert [a.direction for a in volume] == ["egress"]
    assert len(s3) == len(volume) + 1
    assert {p.port for p in s3[-1].ports} == {443, 80, 9000}


def test_the_key_export_reads_the_named_sealing_keys_and_the_ca_secret_only() -> None:
    named = BackupsConfig.model_validate({"volume": {}, "sealingKeys": ["sealed-secrets-keyabcde"]})
    grants = dict(key_export_grants(named))
    assert set(grants) == {"kube-system", "cert-manager"}
    # By name, get only: RBAC cannot narrow a list to names (issue 39).
    assert grants["kube-system"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["sealed-secrets-keyabcde"]}
    ]
    assert grants["cert-manager"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": [CA_SECRET]}
    ]
    # No sealing key named: no Role in kube-system at all.
    assert set(dict(key_export_grants(BackupsConfig.model_validate({"volume": {}})))) == {"cert-manager"}
    command = key_export_spec(named, labels={})["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[-2:] == ["--sealed-secret", "sealed-secrets-keyabcde"]

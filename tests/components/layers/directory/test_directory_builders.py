"""The directory layer's pure builders: 389ds' Service and StatefulSet, the bootstrap Job and the LDAPS route."""

from __future__ import annotations

from typing import Any

from components.ground.meta import labels
from components.k8s.chunks import Assembly
from components.layers.directory.config import DirectoryConfig
from components.layers.directory.objects import (
    APP,
    BIND_SECRET,
    COMPONENT,
    DM_SECRET,
    LDAPS_PORT,
    SELECTOR,
    TLS_SECRET,
    bind_checksum,
    bootstrap_job_name,
    bootstrap_job_spec,
    dns_names,
    ldaps_route_spec,
    server_spec,
    service_spec,
)

ASSEMBLY = Assembly(
    container={"name": "assemble"},
    mounts=[{"name": "ldif-assembled", "mountPath": "/ldif"}],
    volumes=[{"name": "ldif-assembled", "emptyDir": {}}],
)


def _config() -> DirectoryConfig:
    return DirectoryConfig.model_validate({"suffix": "dc=example,dc=org", "storage": {"size": "5Gi"}})


def _server(storage_class: str | None = None) -> dict[str, Any]:
    return server_spec(
        _config(),
        image="dirsrv:3",
        labels=labels(APP, COMPONENT, "dev"),
        storage_class=storage_class,
        volume_annotations={"hpcforge.io/protection": "protect"},
    )


def test_the_certificate_names_the_published_host_only_when_there_is_one() -> None:
    assert "ldap.example.org" not in dns_names(None)
    names = dns_names("ldap.example.org")
    assert names[0] == f"{APP}.directory.svc.cluster.local"
    assert names[-1] == "ldap.example.org"


def test_the_service_and_the_statefulset_select_the_server_pods() -> None:
    server = _server()
    pod_labels = server["template"]["metadata"]["labels"]
    for selector in (service_spec()["selector"], server["selector"]["matchLabels"]):
        assert selector == SELECTOR
        assert selector.items() <= pod_labels.items()


def test_the_data_claim_is_kept_protected_and_sized_from_the_config() -> None:
    server = _server()
    assert server["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    (claim,) = server["volumeClaimTemplates"]
    assert claim["metadata"]["annotations"] == {"hpcforge.io/protection": "protect"}
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert "storageClassName" not in claim["spec"]
    assert _server("fast")["volumeClaimTemplates"][0]["spec"]["storageClassName"] == "fast"


def test_the_server_gets_the_suffix_the_manager_password_and_the_certificate() -> None:
    spec = _server()["template"]["spec"]
    (container,) = spec["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert env["DS_SUFFIX_NAME"]["value"] == "dc=example,dc=org"
    assert env["DS_DM_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == DM_SECRET
    assert spec["volumes"][0]["secret"]["secretName"] == TLS_SECRET
    assert "ALL" in container["securityContext"]["capabilities"]["drop"]


def test_the_bootstrap_job_is_named_after_its_content() -> None:
    name = bootstrap_job_name("dn: a\n", "script")
    assert name == bootstrap_job_name("dn: a\n", "script")
    assert name != bootstrap_job_name("dn: b\n", "script")
    assert name != bootstrap_job_name("dn: a\n", "script 2")
    assert len(name) <= 63


def test_rotating_the_bind_password_changes_the_bootstrap_pod() -> None:
    assert bind_checksum("one") != bind_checksum("two")
    spec = bootstrap_job_spec(image="dirsrv:3", labels={"a": "b"}, bind_checksum=bind_checksum("one"), assemble=ASSEMBLY)
    assert spec["template"]["metadata"]["annotations"] == {"hpcforge.io/bind-password-checksum": bind_checksum("one")}


def test_the_bootstrap_job_assembles_the_ldif_and_binds_as_the_manager() -> None:
    pod = bootstrap_job_spec(image="dirsrv:3", labels={}, bind_checksum="x", assemble=ASSEMBLY)["template"]["spec"]
    assert pod["initContainers"] == [ASSEMBLY.container]
    assert ASSEMBLY.volumes[0] in pod["volumes"]
    (container,) = pod["containers"]
    assert ASSEMBLY.mounts[0] in container["volumeMounts"]
    env = {e["name"]: e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"]}
    assert env == {"LDAP_BIND_PASSWORD": DM_SECRET, "SSSD_BIND_PASSWORD": BIND_SECRET}
    assert f"ldaps://{APP}.directory.svc.cluster.local:{LDAPS_PORT}" in container["command"]
    assert pod["securityContext"]["runAsNonRoot"] is True


def test_the_ldaps_route_passes_tls_through_to_the_server() -> None:
    spec = ldaps_route_spec("ldap.example.org")
    assert spec["tls"] == {"passthrough": True}
    (route,) = spec["routes"]
    assert route["match"] == "HostSNI(`ldap.example.org`)"
    assert route["services"] == [{"name": APP, "port": LDAPS_PORT}]

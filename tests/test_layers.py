"""Tier 2: what each layer declares for dev and prod, through the real program under mocks."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.sitegen import write_site
from offline.program.documents import render_documents
from offline.program.engine import ProgramConfigError, RecordedResource, RecordedStack
from tests.helpers import REPO, run_stack_file, write_variant

pytestmark = pytest.mark.program

THIRD_PARTY = {
    "metallb",
    "traefik",
    "cert-manager",
    "sealed-secrets",
    "mariadb-operator-crds",
    "mariadb-operator",
    "gpu-operator",
    "network-operator",
    "slurm-operator-crds",
    "slurm-operator",
    "csi-driver-nfs",
    "kueue",
    "argo-workflows",
    "kube-prometheus-stack",
}


def objects(stack: RecordedStack, kind: str) -> dict[str, RecordedResource]:
    return {
        f"{r.inputs['metadata'].get('namespace', '')}/{r.inputs['metadata']['name']}": r
        for r in stack.kubernetes_objects()
        if r.inputs["kind"] == kind
    }


def one(stack: RecordedStack, kind: str, namespace: str, name: str) -> dict[str, Any]:
    found = objects(stack, kind).get(f"{namespace}/{name}")
    assert found is not None, f"{kind} {namespace}/{name} not declared"
    return found.inputs


# --- platform core ------------------------------------------------------------------------------------


def test_prod_delivers_every_third_party_chart_through_argocd(prod_stack: RecordedStack) -> None:
    apps = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects(prod_stack, "Application").values()}
    assert set(apps) >= THIRD_PARTY
    project = one(prod_stack, "AppProject", "argocd", "hpcforge-platform")["spec"]
    used_repos = {apps[name]["source"]["repoURL"] for name in THIRD_PARTY}
    assert set(project["sourceRepos"]) == used_repos
    assert {d["namespace"] for d in project["destinations"]} == {apps[name]["destination"]["namespace"] for name in THIRD_PARTY}
    for name in THIRD_PARTY:
        assert apps[name]["project"] == "hpcforge-platform"
        assert re.fullmatch(r"v?\d+\.\d+\.\d+", apps[name]["source"]["targetRevision"]), name


def test_dev_delivers_every_third_party_chart_with_pulumi(dev_stack: RecordedStack) -> None:
    charts = {r.name: r.inputs for r in dev_stack.resources if r.is_chart}
    # dev has no Kueue, monitoring, GPUs, RDMA or NFS
    assert THIRD_PARTY - {"kueue", "kube-prometheus-stack", "gpu-operator", "network-operator", "csi-driver-nfs"} <= set(charts)
    assert charts["cert-manager"]["chart"] == "oci://quay.io/jetstack/charts/cert-manager"
    assert charts["traefik"]["repositoryOpts"]["repo"] == "https://traefik.github.io/charts"


def test_argocd_values(dev_stack: RecordedStack) -> None:
    argocd = next(r for r in dev_stack.resources if r.is_chart and r.name == "argocd")
    values = argocd.inputs["values"]
    known = yaml.safe_load(values["configs"]["cm"]["resource.customizations.knownTypeFields.slinky.slurm.net_NodeSet"])
    assert known == [{"field": "spec.template.spec", "type": "core/v1/PodSpec"}]
    assert values["redisSecretInit"]["enabled"] is False
    assert "values.configs.secret.argocdServerAdminPassword" in argocd.secret_paths
    assert values["server"]["ingress"]["tls"] is True
    assert values["server"]["ingress"]["annotations"]["cert-manager.io/cluster-issuer"] == "hpcforge-ca"
    assert "auth" in one(dev_stack, "Secret", "argocd", "argocd-redis")["stringData"]


def test_issuer_chain(prod_stack: RecordedStack, dev_stack: RecordedStack) -> None:
    issuers = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects(prod_stack, "ClusterIssuer").values()}
    assert issuers["hpcforge-selfsigned-bootstrap"] == {"selfSigned": {}}
    ca = one(prod_stack, "Certificate", "cert-manager", "hpcforge-ca")["spec"]
    assert ca["isCA"] is True and ca["issuerRef"]["name"] == "hpcforge-selfsigned-bootstrap"
    assert issuers["hpcforge-ca"] == {"ca": {"secretName": "hpcforge-ca"}}
    assert issuers["acme"]["acme"]["solvers"][0]["http01"]["ingress"]["ingressClassName"] == "traefik"
    assert "acme" not in {r.inputs["metadata"]["name"] for r in objects(dev_stack, "ClusterIssuer").values()}


def test_every_created_namespace_has_pod_security_and_default_deny(any_stack: RecordedStack) -> None:
    policies = objects(any_stack, "NetworkPolicy")
    for key, namespace in objects(any_stack, "Namespace").items():
        name = key.lstrip("/")
        labels = namespace.inputs["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] in {"restricted", "baseline", "privileged"}, name
        assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.33"
        deny = policies.get(f"{name}/default-deny")
        assert deny is not None, f"namespace {name} has no default-deny NetworkPolicy"
        assert deny.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}


def test_metallb_and_traefik(prod_stack: RecordedStack) -> None:
    pools = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects(prod_stack, "IPAddressPool").values()}
    assert pools == {
        "services": {"addresses": ["10.10.0.100-10.10.0.149"], "autoAssign": False},
        "login": {"addresses": ["10.10.0.150-10.10.0.153"], "autoAssign": False},
    }
    assert one(prod_stack, "L2Advertisement", "metallb-system", "site-l2")["spec"]["interfaces"] == ["bond0"]
    traefik = one(prod_stack, "Application", "argocd", "traefik")["spec"]["source"]["helm"]["valuesObject"]
    assert traefik["service"]["annotations"] == {
        "metallb.io/address-pool": "services",
        "metallb.io/loadBalancerIPs": "10.10.0.100",
    }
    assert traefik["ingressClass"] == {"enabled": True, "isDefaultClass": True, "name": "traefik"}
    assert traefik["ports"]["web"]["http"]["redirections"]["entryPoint"]["to"] == "websecure"
    assert traefik["api"]["dashboard"] is False
    assert traefik["ports"]["ldaps"]["exposedPort"] == 636  # prod exposes the directory


def test_multus_and_attachment(prod_stack: RecordedStack) -> None:
    ds = one(prod_stack, "DaemonSet", "kube-system", "kube-multus-ds")
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.3.0-thick"
    nad = one(prod_stack, "NetworkAttachmentDefinition", "provisioning", "provisioning")
    assert json.loads(nad["spec"]["config"])["master"] == "bond1"


def test_site_dns_serves_the_inventory(prod_stack: RecordedStack) -> None:
    zones = one(prod_stack, "ConfigMap", "site-dns", "site-dns-zones-00")["data"]["hpc.example.org.hosts"]
    assert "10.20.1.1 cn001.hpc.example.org cn001" in zones and "10.20.2.1 cn001-bmc.hpc.example.org cn001-bmc" in zones
    service = one(prod_stack, "Service", "site-dns", "site-dns")
    assert service["metadata"]["annotations"]["metallb.io/loadBalancerIPs"] == "10.10.0.101"


# --- identity and accounting --------------------------------------------------------------------------


def test_directory(prod_stack: RecordedStack) -> None:
    server = objects(prod_stack, "StatefulSet")["directory/dirsrv"]
    assert server.protect is True and server.inputs["metadata"]["annotations"]["hpcforge.io/protection"] == "protect"
    pod = server.inputs["spec"]["template"]["spec"]
    assert pod["containers"][0]["image"].startswith("docker.io/389ds/dirsrv:")
    assert server.inputs["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "20Gi"
    cert = one(prod_stack, "Certificate", "directory", "dirsrv-tls")["spec"]
    assert cert["issuerRef"]["name"] == "hpcforge-ca" and "ldap.hpc.example.org" in cert["dnsNames"]
    jobs = [r for r in objects(prod_stack, "Job").values() if r.inputs["metadata"]["namespace"] == "directory"]
    assert len(jobs) == 1 and jobs[0].delete_before_replace is True
    route = one(prod_stack, "IngressRouteTCP", "directory", "dirsrv-ldaps")["spec"]
    assert route["tls"] == {"passthrough": True} and route["entryPoints"] == ["ldaps"]


def test_directory_is_not_exposed_unless_asked(dev_stack: RecordedStack) -> None:
    assert not objects(dev_stack, "IngressRouteTCP")
    assert objects(dev_stack, "StatefulSet")["directory/dirsrv"].protect is None  # dev: protection none


def test_database(prod_stack: RecordedStack) -> None:
    server = objects(prod_stack, "MariaDB")["database/mariadb"]
    assert server.protect is True
    assert "innodb_buffer_pool_size=4096M" in server.inputs["spec"]["myCnf"]
    assert server.inputs["spec"]["storage"]["size"] == "100Gi"
    database = one(prod_stack, "Database", "database", "slurm-acct-db")["spec"]
    assert database["name"] == "slurm_acct_db" and database["cleanupPolicy"] == "Skip"
    grant = one(prod_stack, "Grant", "database", "slurm-acct-db")["spec"]
    assert grant["database"] == "slurm_acct_db" and grant["username"] == "slurm" and grant["grantOption"] is False
    user = one(prod_stack, "User", "database", "slurm")["spec"]
    assert user["passwordSecretKeyRef"] == {"name": "slurm-db-password", "key": "password"}


# --- Slurm --------------------------------------------------------------------------------------------


def test_slurm_custom_resources(prod_stack: RecordedStack) -> None:
    controller = objects(prod_stack, "Controller")["slurm/slurm"]
    assert controller.protect is True
    spec = controller.inputs["spec"]
    assert spec["clusterName"] == "hpc" and spec["accountingRef"] == {"name": "slurm"}
    assert spec["persistence"]["enabled"] is True
    assert spec["prologScriptRefs"] == [{"name": "slurm-prolog-scripts"}]
    assert "PartitionName=cpu Nodes=cpu,cpu-bm" in spec["extraConf"]
    accounting = one(prod_stack, "Accounting", "slurm", "slurm")["spec"]["storageConfig"]
    assert accounting["host"] == "mariadb.database.svc.cluster.local" and accounting["database"] == "slurm_acct_db"
    login = one(prod_stack, "LoginSet", "slurm", "login")["spec"]
    assert login["replicas"] == 2 and login["strategy"]["rollingUpdate"]["maxUnavailable"] < login["replicas"]
    assert login["sssdConfRef"] == {"name": "slurm-sssd-conf", "key": "sssd.conf"}
    assert login["service"]["metadata"]["annotations"]["metallb.io/loadBalancerIPs"] == "10.10.0.150"
    nodesets = {r.inputs["metadata"]["name"] for r in objects(prod_stack, "NodeSet").values()}
    assert nodesets == {"cpu", "cpu-bm", "gpu-a100", "gpu-h100"}
    assert one(prod_stack, "RestApi", "slurm", "slurm")["spec"]["replicas"] == 2
    sssd = objects(prod_stack, "Secret")["slurm/slurm-sssd-conf"]
    assert "stringData.sssd.conf" in sssd.secret_paths or "stringData" in sssd.secret_paths
    prolog = one(prod_stack, "ConfigMap", "slurm", "slurm-prolog-scripts")["data"]
    assert sorted(prolog) == ["00-health.sh", "05-scratch.sh", "10-gpu-check.sh"]
    assert one(prod_stack, "ConfigMap", "slurm", "slurm-config-extra")["data"]["gres.conf"].startswith(
        "# hpcforge: GPUs per nodeset"
    )


def test_slurm_keys_are_secret_and_retained(prod_stack: RecordedStack) -> None:
    key = objects(prod_stack, "Secret")["slurm/slurm-auth-slurm"]
    assert key.retain_on_delete is True and key.secret_paths
    assert key.inputs["metadata"]["annotations"]["hpcforge.io/protection"] == "retain"


# --- provisioning --------------------------------------------------------------------------------------


def test_grendel_workload(prod_stack: RecordedStack) -> None:
    deployment = one(prod_stack, "Deployment", "provisioning", "grendel")
    pod = deployment["spec"]["template"]
    container = pod["spec"]["containers"][0]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["NET_ADMIN"]}
    assert "privileged" not in container["securityContext"]
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/hostname": "k8s-infra-01"}
    networks = json.loads(pod["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"])
    assert networks == [{"name": "provisioning", "namespace": "provisioning", "ips": ["10.20.0.2/23"], "interface": "prov0"}]
    config = objects(prod_stack, "Secret")["provisioning/grendel-config"]
    assert config.secret_paths
    pvc = objects(prod_stack, "PersistentVolumeClaim")["provisioning/grendel-data"]
    assert pvc.protect is True
    joins = one(prod_stack, "ConfigMap", "provisioning", "grendel-join-scripts")["data"]
    assert list(joins) == ["join-cpu-bm.sh"]
    assert objects(prod_stack, "Ingress")["provisioning/grendel"].inputs["spec"]["tls"][0]["secretName"] == "grendel-tls"


def test_ten_thousand_hosts_stay_under_the_object_size_limit(tmp_path: Path) -> None:
    path = write_site(tmp_path / "Pulumi.big.yaml", hosts=10_000, nodesets=10, users=1000)
    stack = run_stack_file(path, "big")
    sizes = {relative: len(json.dumps(document)) for relative, document in render_documents(stack)}
    largest = max(sizes, key=lambda k: sizes[k])
    assert sizes[largest] < 1024 * 1024, f"{largest} is {sizes[largest]} bytes"
    inventory = [r for r in stack.kubernetes_objects() if r.inputs["metadata"]["name"].startswith("grendel-inventory-")]
    assert inventory and all("binaryData" in r.inputs for r in inventory)  # gzip-chunked


# --- batch and devops -----------------------------------------------------------------------------------


def test_batch(prod_stack: RecordedStack) -> None:
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects(prod_stack, "ResourceFlavor").values()}
    assert flavors["l40s"]["nodeLabels"] == {"hpcforge.io/pool": "batch-l40s"}
    queues = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects(prod_stack, "ClusterQueue").values()}
    assert set(queues) == {"research", "inference"} and all(q["cohortName"] == "site" for q in queues.values())
    local = one(prod_stack, "LocalQueue", "team-llm", "default")["spec"]
    assert local == {"clusterQueue": "inference"}
    classes = {r.inputs["metadata"]["name"]: r.inputs["value"] for r in objects(prod_stack, "WorkloadPriorityClass").values()}
    assert classes == {"urgent": 1000, "standard": 100, "scavenger": 10}
    sample = one(prod_stack, "AppWrapper", "team-llm", "sample-pair")
    assert sample["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "default"
    assert any(r.is_manifest_file and "appwrapper/releases/download/v1.2.1/" in r.inputs["file"] for r in prod_stack.resources)


def test_devops(prod_stack: RecordedStack) -> None:
    template = one(prod_stack, "WorkflowTemplate", "devops", "software-build")["spec"]
    dag = next(t for t in template["templates"] if t["name"] == "pipeline")["dag"]["tasks"]
    assert [t["name"] for t in dag] == ["build", "compiler", "mpi", "runtime"]
    assert all(t["dependencies"] == ["build"] for t in dag[1:])
    volumes = {v["name"]: v for v in template["volumes"]}
    assert volumes["software-ro"]["persistentVolumeClaim"]["readOnly"] is True
    workflows = one(prod_stack, "Application", "argocd", "argo-workflows")["spec"]["source"]["helm"]["valuesObject"]
    assert workflows["crds"]["full"] is False
    registry = one(prod_stack, "Deployment", "registry", "registry")
    assert registry["spec"]["template"]["spec"]["containers"][0]["image"] == "docker.io/library/registry:3.0.0"
    assert one(prod_stack, "Certificate", "registry", "registry-tls")["spec"]["issuerRef"]["name"] == "hpcforge-ca"


# --- refusals naming what is wrong ------------------------------------------------------------------------


def _refused(tmp_path: Path, edit: Any) -> list[str]:
    path = write_variant(tmp_path, "prod", edit)
    with pytest.raises(ProgramConfigError) as raised:
        run_stack_file(path, "prod")
    assert raised.value.registered == 0
    return raised.value.messages


def test_a_pool_for_both_slurm_and_kueue_is_refused_naming_both(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:batch"]["flavors"].append({"name": "h100", "pool": "gpu-h100"}))
    assert any(
        "node pool 'gpu-h100' is given to both Slurm (nodeset 'gpu-h100') and Kueue (flavor 'h100')" in m for m in messages
    ), messages


def test_gpu_quota_over_capacity_is_refused(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:batch"]["clusterQueues"][0]["quotas"][1].update(gpus=12))
    assert any(
        "GPU quota of flavor 'l40s' totals 20 across cluster queues, over the capacity of node pool 'batch-l40s' (16)" in m
        for m in messages
    ), messages


def test_sample_in_an_unknown_namespace_is_refused(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:batch"].update(sampleNamespace="team-astro"))
    assert any(m.startswith("hpcforge:batch.sampleNamespace: unknown namespace 'team-astro'") for m in messages), messages


def test_bare_metal_join_needs_a_controller_address(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:slurm"]["controller"].pop("service"))
    assert any(
        m.startswith("hpcforge:slurm.controller.service: required when bare-metal hosts join Slurm (cn001, cn002, cn003, ...)")
        for m in messages
    )


def test_unpinned_pipeline_image_is_refused(tmp_path: Path) -> None:
    messages = _refused(
        tmp_path, lambda v: v["hpcforge:devops"]["pipeline"]["build"].update(image="docker.io/spack/ubuntu-jammy:latest")
    )
    assert any("hpcforge:devops.pipeline.build.image" in m and "'latest'" in m for m in messages), messages


def test_join_needs_the_controller_address(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:slurm"]["controller"]["service"].pop("address"))
    assert any(
        m.startswith("hpcforge:slurm.controller.service.address: required when bare-metal hosts join Slurm") for m in messages
    )


def test_exposing_grendel_needs_a_hostname(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:provisioning"]["api"].pop("hostname"))
    assert messages == ["hpcforge:provisioning.api: hostname is required when expose is true"]


def test_restarts_follow_secret_config_changes(prod_stack: RecordedStack) -> None:
    grendel = objects(prod_stack, "Deployment")["provisioning/grendel"]
    assert "spec.template.metadata.annotations.hpcforge.io/config-checksum" in grendel.secret_paths or any(
        "config-checksum" in p for p in grendel.secret_paths
    )
    job = next(r for r in objects(prod_stack, "Job").values() if r.inputs["metadata"]["namespace"] == "directory")
    assert any("bind-password-checksum" in p for p in job.secret_paths)
    assert "ttlSecondsAfterFinished" not in job.inputs["spec"]  # a self-deleting Job would look like drift


def test_builds_may_reach_the_registry(prod_stack: RecordedStack) -> None:
    egress = one(prod_stack, "NetworkPolicy", "devops", "allow-egress-registry")["spec"]
    assert egress["egress"][0]["to"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "registry"}}}]
    assert egress["egress"][0]["ports"] == [{"port": 5000, "protocol": "TCP"}]


def test_missing_script_file_is_refused(tmp_path: Path) -> None:
    messages = _refused(tmp_path, lambda v: v["hpcforge:slurm"]["epilog"][0].update(file="scripts/nope.sh"))
    assert messages == [f"hpcforge:slurm.epilog[0].file: scripts/nope.sh does not exist (relative to {REPO})"]

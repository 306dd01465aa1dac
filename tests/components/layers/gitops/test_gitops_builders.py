"""The GitOps layer's pure builders: Argo CD's values, the site-apps project and the site's Applications."""

from __future__ import annotations

from typing import Any

import yaml

from components.charts import ARGOCD_NAMESPACE
from components.layers.gitops.config import GitOpsConfig
from components.layers.gitops.objects import (
    APPS_PROJECT,
    NODESET_KNOWN_TYPE_FIELDS,
    NODESET_KNOWN_TYPE_FIELDS_KEY,
    app_spec,
    apps_project_spec,
    argocd_values,
    root_app_spec,
    sync_policy,
)

APP_A = {"name": "a", "repoURL": "https://git.example.org/b.git", "targetRevision": "v1.0.0", "namespace": "team-a"}
APP_B = {"name": "b", "repoURL": "https://git.example.org/a.git", "targetRevision": "v2.0.0", "namespace": "team-b"}


def _config(**values: Any) -> GitOpsConfig:
    return GitOpsConfig.model_validate(values)


def _values(cfg: GitOpsConfig) -> dict[str, Any]:
    return argocd_values(
        cfg, hostname="argocd.example.org", ingress_class="traefik", issuer="hpcforge-ca", admin_password_hash="$2a$"
    )


def test_ha_doubles_the_stateless_parts_only() -> None:
    single, ha = _values(_config()), _values(_config(argocd={"ha": True}))
    for part in ("server", "repoServer", "applicationSet"):
        assert (single[part]["replicas"], ha[part]["replicas"]) == (1, 2)
    assert ha["controller"]["replicas"] == 1


def test_the_ui_is_served_behind_the_ingress_with_a_certificate_from_the_issuer() -> None:
    values = _values(_config())
    ingress = values["server"]["ingress"]
    assert (ingress["hostname"], ingress["ingressClassName"]) == ("argocd.example.org", "traefik")
    assert ingress["annotations"]["cert-manager.io/cluster-issuer"] == "hpcforge-ca"
    assert values["configs"]["params"]["server.insecure"] is True
    assert values["configs"]["secret"]["argocdServerAdminPassword"] == "$2a$"


def test_argocd_knows_the_nodeset_pod_template_as_a_pod_spec() -> None:
    text = _values(_config())["configs"]["cm"][NODESET_KNOWN_TYPE_FIELDS_KEY]
    assert yaml.safe_load(text) == NODESET_KNOWN_TYPE_FIELDS


def test_the_apps_project_allows_each_repository_once_and_the_apps_namespaces() -> None:
    cfg = _config(apps=[APP_A, APP_B, {**APP_B, "name": "c"}], rootRepoURL="https://git.example.org/a.git")
    spec = apps_project_spec(cfg)
    assert spec["sourceRepos"] == ["https://git.example.org/a.git", "https://git.example.org/b.git"]
    assert [d["namespace"] for d in spec["destinations"]] == sorted(["team-a", "team-b", ARGOCD_NAMESPACE])
    assert spec["clusterResourceWhitelist"] == [{"group": "", "kind": "Namespace"}]


def test_the_namespaces_argocd_creates_enforce_restricted_at_the_cluster_version() -> None:
    policy = sync_policy(_config(syncRetryLimit=3), kubernetes_version="1.33")
    labels = policy["managedNamespaceMetadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    assert labels["pod-security.kubernetes.io/enforce-version"] == "v1.33"
    assert policy["retry"]["limit"] == 3


def test_an_app_deploys_into_its_namespace_and_the_root_into_argocd_without_namespace_metadata() -> None:
    cfg = _config(apps=[APP_A], rootRepoURL="https://git.example.org/root.git", rootRevision="v3")
    policy = sync_policy(cfg, kubernetes_version="1.33")
    app = app_spec(cfg.apps[0], policy)
    assert (app["project"], app["destination"]["namespace"], app["source"]["targetRevision"]) == (
        APPS_PROJECT,
        "team-a",
        "v1.0.0",
    )
    root = root_app_spec(cfg, policy)
    assert root["destination"]["namespace"] == ARGOCD_NAMESPACE
    assert root["source"] == {"repoURL": "https://git.example.org/root.git", "path": "apps", "targetRevision": "v3"}
    assert "managedNamespaceMetadata" not in root["syncPolicy"]
    assert "managedNamespaceMetadata" in policy  # the shared policy is left as it was

"""The GitOps layer's pure builders: Argo CD's values, the site-apps project and the site's Applications."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from components.charts import ARGOCD_NAMESPACE
from components.layers.gitops.config import GitOpsConfig
from components.layers.gitops.objects import (
    APPS_NAMESPACE,
    APPS_PROJECT,
    NODESET_KNOWN_TYPE_FIELDS,
    NODESET_KNOWN_TYPE_FIELDS_KEY,
    ROOT_PROJECT,
    app_spec,
    apps_project_spec,
    argocd_values,
    root_app_spec,
    root_project_spec,
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


SSO = {
    "issuer": "https://sso.example.org/realms/hpc",
    "clientId": "argocd",
    "clientSecret": "s3cret",
    "adminGroups": ["hpc-admins"],
}


def test_without_sso_argocd_is_not_published_and_keeps_its_local_admin() -> None:
    values = _values(_config())
    assert "ingress" not in values["server"]
    assert values["configs"]["cm"]["admin.enabled"] is True
    assert "oidc.config" not in values["configs"]["cm"]
    assert values["configs"]["params"]["server.insecure"] is True
    assert values["configs"]["secret"]["argocdServerAdminPassword"] == "$2a$"


def test_with_sso_the_ui_is_published_behind_the_ingress_and_the_local_admin_is_off() -> None:
    values = argocd_values(
        _config(argocd={"sso": SSO}),
        hostname="argocd.example.org",
        ingress_class="traefik",
        issuer="hpcforge-ca",
        admin_password_hash="$2a$",
        sso_client_secret="s3cret",
    )
    ingress = values["server"]["ingress"]
    assert (ingress["hostname"], ingress["ingressClassName"]) == ("argocd.example.org", "traefik")
    assert ingress["annotations"]["cert-manager.io/cluster-issuer"] == "hpcforge-ca"
    cm = values["configs"]["cm"]
    assert cm["admin.enabled"] is False
    oidc = yaml.safe_load(cm["oidc.config"])
    assert (oidc["issuer"], oidc["clientID"], oidc["clientSecret"]) == (SSO["issuer"], "argocd", "$oidc.clientSecret")
    assert values["configs"]["secret"]["extra"] == {"oidc.clientSecret": "s3cret"}
    assert values["configs"]["rbac"] == {"policy.default": "", "policy.csv": "g, hpc-admins, role:admin\n"}


def test_argocd_knows_the_nodeset_pod_template_as_a_pod_spec() -> None:
    text = _values(_config())["configs"]["cm"][NODESET_KNOWN_TYPE_FIELDS_KEY]
    assert yaml.safe_load(text) == NODESET_KNOWN_TYPE_FIELDS


def test_the_apps_project_reaches_only_the_apps_namespaces_and_kinds() -> None:
    cfg = _config(apps=[APP_A, APP_B, {**APP_B, "name": "c"}], rootRepoURL="https://git.example.org/a.git")
    spec = apps_project_spec(cfg)
    assert spec["sourceRepos"] == ["https://git.example.org/a.git", "https://git.example.org/b.git"]
    assert [d["namespace"] for d in spec["destinations"]] == ["team-a", "team-b"]
    assert spec["clusterResourceWhitelist"] == []
    kinds = {(k["group"], k["kind"]) for k in spec["namespaceResourceWhitelist"]}
    assert ("apps", "Deployment") in kinds and ("", "Secret") in kinds
    assert not {group for group, _ in kinds} & {"rbac.authorization.k8s.io", "argoproj.io"}
    assert spec["sourceNamespaces"] == [APPS_NAMESPACE]


def test_the_root_project_writes_only_applications_into_the_apps_namespace() -> None:
    cfg = _config(apps=[APP_A], rootRepoURL="https://git.example.org/root.git", rootRevision="v3")
    spec = root_project_spec(cfg)
    assert spec["destinations"] == [{"server": "https://kubernetes.default.svc", "namespace": APPS_NAMESPACE}]
    assert spec["namespaceResourceWhitelist"] == [{"group": "argoproj.io", "kind": "Application"}]
    assert spec["clusterResourceWhitelist"] == [] and "sourceNamespaces" not in spec
    assert APPS_NAMESPACE != ARGOCD_NAMESPACE


def test_the_sync_policy_creates_no_namespace() -> None:
    policy = sync_policy(_config(syncRetryLimit=3))
    assert "syncOptions" not in policy and "managedNamespaceMetadata" not in policy
    assert policy["retry"]["limit"] == 3


def test_an_app_deploys_into_its_namespace_and_the_root_into_the_apps_namespace() -> None:
    cfg = _config(apps=[APP_A], rootRepoURL="https://git.example.org/root.git", rootRevision="v3")
    policy = sync_policy(cfg)
    app = app_spec(cfg.apps[0], policy)
    assert (app["project"], app["destination"]["namespace"], app["source"]["targetRevision"]) == (
        APPS_PROJECT,
        "team-a",
        "v1.0.0",
    )
    root = root_app_spec(cfg, policy)
    assert (root["project"], root["destination"]["namespace"]) == (ROOT_PROJECT, APPS_NAMESPACE)
    assert root["source"] == {"repoURL": "https://git.example.org/root.git", "path": "apps", "targetRevision": "v3"}


def test_rbac_and_argocd_kinds_are_refused_for_site_apps() -> None:
    with pytest.raises(ValueError, match="RBAC and Argo CD kinds"):
        _config(siteAppKinds=["rbac.authorization.k8s.io/RoleBinding"])
    with pytest.raises(ValueError, match="is not `group/Kind`"):
        _config(siteAppKinds=["Deployment"])

"""Deploys the test chart with helm.v4.Chart, as hpcforge's ChartDeployer does in `pulumi` delivery.

Config: `test:values` (JSON object, the chart values), `test:namespace` (default `demo`),
`test:secretPassword` (true: the chart's `password` value is a generated RandomPassword),
`test:delivery` (`argocd`: an Argo CD Application in AppProject `demo` installs the chart instead, as
hpcforge's `argocd` delivery does; the project permits the repository, the release namespace only,
and the cluster-scoped kinds in `test:clusterResources`, a JSON list, default every kind),
`test:resourcePrefix` (the Chart's `resource_prefix`, which names its objects).
"""

import pulumi
import pulumi_kubernetes as k8s

config = pulumi.Config("test")
namespace = config.get("namespace") or "demo"
values = config.get_object("values") or {}
if config.get_bool("secretPassword"):
    # A generated password in the values, as hpcforge's layers pass RandomPassword results.
    import pulumi_random as random

    values = {**values, "password": random.RandomPassword("demo-password", length=24, special=False).result}
ns = k8s.core.v1.Namespace(
    namespace,
    metadata={
        "name": namespace,
        "labels": {"app.kubernetes.io/name": "demo", "pod-security.kubernetes.io/enforce": "restricted"},
    },
)
if config.get("delivery") == "argocd":
    in_cluster = "https://kubernetes.default.svc"
    project = k8s.apiextensions.CustomResource(
        "argocd/demo",
        api_version="argoproj.io/v1alpha1",
        kind="AppProject",
        metadata={"name": "demo", "namespace": "argocd"},
        spec={
            "sourceRepos": ["https://charts.example.org"],
            "destinations": [{"server": in_cluster, "namespace": namespace}],
            "clusterResourceWhitelist": config.get_object("clusterResources") or [{"group": "*", "kind": "*"}],
        },
    )
    k8s.apiextensions.CustomResource(
        "argocd/demo-app",
        api_version="argoproj.io/v1alpha1",
        kind="Application",
        metadata={"name": "demo", "namespace": "argocd"},
        spec={
            "project": "demo",
            "source": {
                "repoURL": "https://charts.example.org",
                "chart": "hpcforge-test",
                "targetRevision": "0.1.0",
                "helm": {"releaseName": "demo", "valuesObject": values},
            },
            "destination": {"server": in_cluster, "namespace": namespace},
        },
        opts=pulumi.ResourceOptions(depends_on=[ns, project]),
    )
else:
    k8s.helm.v4.Chart(
        "demo",
        chart="hpcforge-test",
        version="0.1.0",
        namespace=namespace,
        repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo="https://charts.example.org"),
        values=values,
        resource_prefix=config.get("resourcePrefix"),
        opts=pulumi.ResourceOptions(depends_on=[ns]),
    )

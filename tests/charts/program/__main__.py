"""Deploys the test chart with helm.v4.Chart, as hpcforge's ChartDeployer does in `pulumi` delivery.

Config: `test:values` (JSON object, the chart values), `test:namespace` (default `demo`),
`test:secretPassword` (true: the chart's `password` value is a generated RandomPassword).
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
k8s.helm.v4.Chart(
    "demo",
    chart="hpcforge-test",
    version="0.1.0",
    namespace=namespace,
    repository_opts=k8s.helm.v4.RepositoryOptsArgs(repo="https://charts.example.org"),
    values=values,
    opts=pulumi.ResourceOptions(depends_on=[ns]),
)

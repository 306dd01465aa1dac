"""SealedSecrets layer: the controller in kube-system under the name kubeseal expects.

`kubeseal` looks for a controller called `sealed-secrets-controller` in `kube-system` by default;
with that name, users seal secrets for the GitOps repositories without extra flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from ...charts import ChartDeployer, ChartUse
from ...context import DeployContext
from ...versions import Charts
from .objects import CONTROLLER_NAME, NAMESPACE, controller_values

CHARTS = (ChartUse("sealed-secrets", Charts.SEALED_SECRETS, NAMESPACE),)


@dataclass(frozen=True)
class SealedSecretsArgs:
    ctx: DeployContext
    charts: ChartDeployer
    depends_on: Sequence[pulumi.Resource] = ()


class SealedSecrets(pulumi.ComponentResource):
    controller_name: str
    namespace: str
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: SealedSecretsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("hpcforge:sealedsecrets:SealedSecrets", name, None, opts)
        chart = args.charts.deploy(
            "sealed-secrets", Charts.SEALED_SECRETS, NAMESPACE, controller_values(), parent=self, depends_on=list(args.depends_on)
        )
        self.controller_name = CONTROLLER_NAME
        self.namespace = NAMESPACE
        self.ready = [chart]
        self.register_outputs({"controller": f"{NAMESPACE}/{CONTROLLER_NAME}"})

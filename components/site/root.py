"""The root `PlatformConfig`: one typed, validated description of the whole site.

Its fields, each layer's config, are in site/model.py (`PlatformModel`); this adds the cross-layer checks
(site/checks/), which run once every layer's config is valid on its own.
The checks take a `PlatformModel`, so that none of them imports this module."""

from __future__ import annotations

from pydantic import model_validator

from ..ground.base import ProblemCollector
from ..ground.platform_core import ProtectionMode
from .checks.accounts import check_accounts
from .checks.gpu import check_gpu_data_plane
from .checks.platform import (
    check_batch,
    check_login,
    check_namespaces,
    check_operations,
    check_pools,
    check_production,
    check_provisioning,
)
from .checks.rdma import check_rdma
from .checks.relations import check_relations
from .checks.site_layout import check_site_layout
from .model import EnvironmentKind, PlatformModel


class PlatformConfig(PlatformModel):
    """Everything under `hpcforge:` in `Pulumi.<stack>.yaml`."""

    @model_validator(mode="after")
    def _cross_layer_checks(self) -> PlatformConfig:
        problems = ProblemCollector()
        check_pools(self, problems)
        check_login(self, problems)
        check_provisioning(self, problems)
        check_batch(self, problems)
        check_namespaces(self, problems)
        check_operations(self, problems)
        check_production(self, problems)
        check_gpu_data_plane(self, problems)
        check_rdma(self, problems)
        check_relations(self, problems)
        check_accounts(self, problems)
        check_site_layout(self, problems)
        problems.raise_if_any()
        return self


__all__ = ["EnvironmentKind", "PlatformConfig", "PlatformModel", "ProtectionMode"]

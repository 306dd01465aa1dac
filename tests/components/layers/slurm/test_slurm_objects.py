"""The Slurm layer's pure builders (components/layers/slurm/objects.py): the Controller, Accounting and RestApi
specs and the config files, called directly, without Pulumi. The fields follow slurm-operator v1.2.1's
v1beta1 CRDs (../shared/crds); tests/offline/schema/test_schema.py validates the rendered objects against them."""

from __future__ import annotations

import pytest

from components.layers.slurm.config import SlurmConfig
from components.layers.slurm.face import CONTROLLER
from components.layers.slurm.objects import (
    DB_PASSWORD_SECRET,
    JWT_KEY_SECRET,
    SLURM_KEY_SECRET,
    accounting_spec,
    config_files,
    controller_spec,
    key_refs,
    restapi_spec,
)
from components.site.loader import load_config
from components.site.root import PlatformConfig
from components.versions import Images
from tests.helpers import config_values, raw_config


@pytest.fixture(scope="module")
def prod() -> PlatformConfig:
    return load_config(raw_config(config_values("prod")))


@pytest.fixture(scope="module")
def dev() -> PlatformConfig:
    return load_config(raw_config(config_values("dev")))


def _without_accounting(cfg: SlurmConfig) -> SlurmConfig:
    return cfg.model_copy(update={"accounting": cfg.accounting.model_copy(update={"enabled": False})})


def test_the_controller_and_the_accounting_share_the_keys(prod: PlatformConfig) -> None:
    keys = {
        "slurmKeyRef": {"name": SLURM_KEY_SECRET, "key": "slurm.key"},
        "jwtKeyRef": {"name": JWT_KEY_SECRET, "key": "jwt.key"},
    }
    assert key_refs() == keys
    controller = controller_spec(prod.slurm, storage_class=None)
    accounting = accounting_spec(prod.slurm, host="db", port=3306, database="slurm_acct_db", user="slurm")
    assert {k: controller[k] for k in keys} == keys == {k: accounting[k] for k in keys}


def test_the_controller_refers_to_the_accounting_only_with_accounting(prod: PlatformConfig) -> None:
    assert controller_spec(prod.slurm, storage_class=None)["accountingRef"] == {"name": CONTROLLER}
    without = controller_spec(_without_accounting(prod.slurm), storage_class=None)
    assert "accountingRef" not in without
    assert "AccountingStorageEnforce=" in controller_spec(prod.slurm, storage_class=None)["extraConf"]
    assert "AccountingStorageEnforce=" not in without["extraConf"]


def test_the_controller_names_only_the_scripts_and_metrics_asked_for(prod: PlatformConfig) -> None:
    bare = controller_spec(prod.slurm, storage_class=None)
    assert not {"prologScriptRefs", "epilogScriptRefs", "metrics"} & set(bare)
    full = controller_spec(prod.slurm, storage_class=None, metrics=True, prolog=True, epilog=True)
    assert full["prologScriptRefs"] == [{"name": "slurm-prolog-scripts"}]
    assert full["epilogScriptRefs"] == [{"name": "slurm-epilog-scripts"}]
    assert full["metrics"] == {"enabled": True, "serviceMonitor": {"enabled": True}}


def test_the_controller_reconfigures_in_place_with_the_sidecar_in_the_slurmctld_image(prod: PlatformConfig) -> None:
    """With inplaceReconfigure the operator runs `scontrol reconfigure` in a sidecar when a file under /etc/slurm changes
    (slurm-operator controller_app.go@v1.2.1:164-168) instead of recreating slurmctld for a slurm.conf change only."""
    spec = controller_spec(prod.slurm, storage_class=None)
    assert spec["inplaceReconfigure"] is True
    assert spec["reconfigure"]["image"] == spec["slurmctld"]["image"]


def test_the_controller_state_volume_takes_the_storage_class_given(prod: PlatformConfig) -> None:
    assert "storageClassName" not in controller_spec(prod.slurm, storage_class=None)["persistence"]
    persistence = controller_spec(prod.slurm, storage_class="fast-ssd")["persistence"]
    assert persistence["storageClassName"] == "fast-ssd"
    assert persistence["resources"] == {"requests": {"storage": prod.slurm.controller.storage.size}}


def test_the_controller_service_is_a_metallb_load_balancer_when_configured(prod: PlatformConfig) -> None:
    service = prod.slurm.controller.service
    assert service is not None
    spec = controller_spec(prod.slurm, storage_class=None, outside=("10.20.0.0/23",))
    assert spec["service"] == {
        "metadata": {"annotations": {"metallb.io/address-pool": service.pool, "metallb.io/loadBalancerIPs": service.address}},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "loadBalancerSourceRanges": ["10.20.0.0/23"]},
    }
    public = controller_spec(prod.slurm, storage_class=None, outside=None)["service"]
    assert public["metadata"]["annotations"]["hpcforge.io/exposure"] == "public"
    assert "loadBalancerSourceRanges" not in public["spec"]
    with pytest.raises(ValueError, match="needs source ranges"):
        controller_spec(prod.slurm, storage_class=None, outside=())
    no_service = prod.slurm.model_copy(update={"controller": prod.slurm.controller.model_copy(update={"service": None})})
    assert "service" not in controller_spec(no_service, storage_class=None)


def test_the_accounting_points_slurmdbd_at_the_endpoint_given(prod: PlatformConfig) -> None:
    spec = accounting_spec(prod.slurm, host="mariadb.database.svc", port=3306, database="slurm_acct_db", user="slurm")
    assert spec["storageConfig"] == {
        "host": "mariadb.database.svc",
        "port": 3306,
        "database": "slurm_acct_db",
        "username": "slurm",
        "passwordKeyRef": {"name": DB_PASSWORD_SECRET, "key": "password"},
    }
    assert spec["slurmdbd"]["image"] == Images.SLURMDBD.ref


def test_the_restapi_runs_the_configured_replicas_of_slurmrestd(prod: PlatformConfig) -> None:
    spec = restapi_spec(prod.slurm)
    assert spec["controllerRef"] == {"name": CONTROLLER}
    assert spec["replicas"] == prod.slurm.restapi.replicas == 2
    assert spec["slurmrestd"]["image"] == Images.SLURMRESTD.ref


def test_config_files_hold_gres_and_plugstack_only_where_used(prod: PlatformConfig, dev: PlatformConfig) -> None:
    prod_files = config_files(prod.slurm)
    assert {"cgroup.conf", "gres.conf", "plugstack.conf"} <= set(prod_files)
    dev_files = config_files(dev.slurm)
    assert "cgroup.conf" in dev_files
    assert not {"gres.conf", "plugstack.conf"} & set(dev_files)

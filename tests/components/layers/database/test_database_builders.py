"""The database layer's pure builders: the MariaDB and the accounting Database, User and Grant."""

from __future__ import annotations

from components.layers.database.config import DatabaseConfig
from components.layers.database.objects import (
    ACCOUNTING_DATABASE,
    ACCOUNTING_USER,
    PASSWORD_SECRET,
    ROOT_SECRET,
    SERVER,
    database_spec,
    grant_spec,
    mariadb_spec,
    my_cnf,
    operator_values,
    user_spec,
)


def _config(**values: object) -> DatabaseConfig:
    return DatabaseConfig.model_validate(values)


def test_the_server_settings_come_from_the_config() -> None:
    text = my_cnf(_config(innodbBufferPoolSize="2G", innodbLockWaitTimeout=600))
    assert text.startswith("[mariadb]\n")
    assert "innodb_buffer_pool_size=2G\n" in text
    assert "innodb_lock_wait_timeout=600\n" in text


def test_the_mariadb_names_a_storage_class_only_when_one_is_given() -> None:
    cfg = _config(storage={"size": "50Gi"})
    assert "storageClassName" not in mariadb_spec(cfg, image="mariadb:11", storage_class=None)["storage"]
    spec = mariadb_spec(cfg, image="mariadb:11", storage_class="fast")
    assert spec["storage"]["storageClassName"] == "fast"
    assert spec["storage"]["size"] == "50Gi"
    assert spec["image"] == "mariadb:11"
    assert spec["myCnf"] == my_cnf(cfg)


def test_the_root_password_is_the_generated_secret_not_one_the_operator_makes() -> None:
    ref = mariadb_spec(_config(), image="mariadb:11", storage_class=None)["rootPasswordSecretKeyRef"]
    assert ref["name"] == ROOT_SECRET
    assert ref["generate"] is False


def test_the_server_resources_follow_the_config() -> None:
    spec = mariadb_spec(_config(cpu="4", memory="16Gi", memoryLimit="20Gi"), image="m", storage_class=None)
    assert spec["resources"] == {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"memory": "20Gi"}}


def test_deleting_a_resource_never_drops_data() -> None:
    for spec in (database_spec(), user_spec(), grant_spec()):
        assert spec["cleanupPolicy"] == "Skip"
        assert spec["mariaDbRef"] == {"name": SERVER, "waitForIt": True}


def test_the_grant_covers_the_accounting_database_of_the_slurm_user_only() -> None:
    grant = grant_spec()
    assert grant["database"] == ACCOUNTING_DATABASE == database_spec()["name"]
    assert grant["username"] == ACCOUNTING_USER == user_spec()["name"]
    assert grant["grantOption"] is False


def test_the_user_password_comes_from_the_secret_slurmdbd_reads() -> None:
    assert user_spec()["passwordSecretKeyRef"]["name"] == PASSWORD_SECRET


def test_the_operator_chart_leaves_the_crds_to_their_own_chart() -> None:
    assert operator_values()["crds"] == {"enabled": False}

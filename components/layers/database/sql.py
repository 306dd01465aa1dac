"""What mariadb-operator's Database, User and Grant resources mean, as SQL (pure).

The operator turns each custom resource into these statements; rendering them from the very
specs hpcforge declares lets tests apply them to a real MariaDB and prove the grant is limited
to the accounting database.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def database_sql(spec: Mapping[str, Any]) -> str:
    statement = f"CREATE DATABASE IF NOT EXISTS {_ident(spec['name'])}"
    if spec.get("characterSet"):
        statement += f" CHARACTER SET = {spec['characterSet']}"
    if spec.get("collate"):
        statement += f" COLLATE = {spec['collate']}"
    return statement + ";"


def user_sql(spec: Mapping[str, Any], password: str) -> str:
    account = f"{_string(spec['name'])}@{_string(spec.get('host', '%'))}"
    statement = f"CREATE USER IF NOT EXISTS {account} IDENTIFIED BY {_string(password)}"
    if spec.get("maxUserConnections"):
        statement += f" WITH MAX_USER_CONNECTIONS {int(spec['maxUserConnections'])}"
    return statement + ";"


def grant_sql(spec: Mapping[str, Any]) -> str:
    privileges = ", ".join(spec["privileges"])
    database = "*" if spec.get("database", "*") == "*" else _ident(spec["database"])
    table = "*" if spec.get("table", "*") == "*" else _ident(spec["table"])
    account = f"{_string(spec['username'])}@{_string(spec.get('host', '%'))}"
    statement = f"GRANT {privileges} ON {database}.{table} TO {account}"
    if spec.get("grantOption"):
        statement += " WITH GRANT OPTION"
    return statement + ";"

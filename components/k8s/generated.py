"""Generated key material: the one way hpcforge creates a password or key, and its Secret object.

A `random.RandomPassword`/`RandomBytes` holds the value in Pulumi's state. Any replacement of the
generator (an edited `length` or `special`, a rename, a new parent) generates a NEW value and
rotates it in place under every daemon that shares it: the Slurm and JWT keys, the database and
directory passwords. So, in `protect` mode (prod's default), every generator is `protect`ed: Pulumi
refuses to replace or delete it until a human runs `pulumi state unprotect` (a deliberate rotation,
docs/operations.md). In `retain` mode it is `retainOnDelete` (no cluster object to keep; recorded for
symmetry with the Secrets). A generator never has `ignoreChanges`: an edit must show up in the
preview and be refused, not be skipped silently.

The Secret object built from a generator is key material too (`Stateful.KEY_MATERIAL`, retained on
delete, see `DeployContext.protection_options`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_kubernetes as k8s
import pulumi_random as random

from ..context import DeployContext, Stateful
from ..ground.platform_core import ProtectionMode
from .resources import secret

Generator = random.RandomPassword | random.RandomBytes


def generator_options(ctx: DeployContext | ProtectionMode, parent: pulumi.Resource) -> pulumi.ResourceOptions:
    """`protect` in protect mode, `retainOnDelete` in retain mode; never `ignoreChanges`.

    `ctx` may be the protection mode itself, for what exists before the DeployContext does (the
    cluster bootstrap, whose kubeconfig the context's provider is built from)."""
    protection = ctx if isinstance(ctx, str) else ctx.protection
    if protection == "protect":
        return pulumi.ResourceOptions(parent=parent, protect=True)
    if protection == "retain":
        return pulumi.ResourceOptions(parent=parent, retain_on_delete=True)
    return pulumi.ResourceOptions(parent=parent)


def generated_password(
    ctx: DeployContext | ProtectionMode, name: str, *, length: int, parent: pulumi.Resource
) -> random.RandomPassword:
    """A password of letters and digits (safe in every config file format we render)."""
    return random.RandomPassword(name, length=length, special=False, opts=generator_options(ctx, parent))


def generated_bytes(ctx: DeployContext, name: str, *, length: int, parent: pulumi.Resource) -> random.RandomBytes:
    """Random bytes (key files), read as `.base64`."""
    return random.RandomBytes(name, length=length, opts=generator_options(ctx, parent))


@dataclass(frozen=True)
class GeneratedSecret:
    """A generated value and the Secret object that carries it."""

    generator: Generator
    secret: k8s.core.v1.Secret
    value: pulumi.Output[str]
    """The generated value (a Pulumi secret): the password, or the bytes in base64."""


def generated_secret(
    ctx: DeployContext,
    generator_name: str,
    secret_name: str,
    namespace: str,
    key: str,
    *,
    length: int,
    kind: Literal["password", "bytes"] = "password",
    component: str,
    parent: pulumi.Resource,
    app: str | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
    stateful: Stateful | None = Stateful.KEY_MATERIAL,
) -> GeneratedSecret:
    """Generate a password (`stringData[key]`) or random bytes (`data[key]`, base64) into a Secret.

    `stateful=None` for a Secret that may be re-created at will (its generator stays protected).
    """
    generator: Generator
    value: pulumi.Output[str]
    string_data: dict[str, pulumi.Input[str]] | None
    data: dict[str, pulumi.Input[str]] | None
    if kind == "password":
        generator = generated_password(ctx, generator_name, length=length, parent=parent)
        value = pulumi.Output.secret(generator.result)
        string_data, data = {key: value}, None
    else:
        generator = generated_bytes(ctx, generator_name, length=length, parent=parent)
        value = pulumi.Output.secret(generator.base64)
        string_data, data = None, {key: value}
    obj = secret(
        ctx,
        secret_name,
        namespace,
        string_data,
        data=data,
        component=component,
        parent=parent,
        app=app,
        depends_on=depends_on,
        stateful=stateful,
    )
    return GeneratedSecret(generator=generator, secret=obj, value=value)

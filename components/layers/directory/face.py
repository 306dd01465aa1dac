"""What the directory layer publishes to the other layers (they import this module and the directory config, nothing
else of the layer): where its users and groups are (DNs, the SSH key attribute) and the endpoint a client binds to."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

SSH_KEY_ATTRIBUTE = "nsSshPublicKey"
"""389ds's SSH public key attribute (SSSD reads it through `ldap_user_ssh_public_key`)."""


def people_dn(suffix: str) -> str:
    return f"ou=People,{suffix}"


def groups_dn(suffix: str) -> str:
    return f"ou=Groups,{suffix}"


@dataclass(frozen=True)
class DirectoryEndpoint:
    """What the Slurm layer (SSSD on login nodes) needs."""

    ldap_uri: str
    base_dn: str
    bind_dn: str
    bind_password: pulumi.Output[str]
    bind_password_secret: str
    """Secret (in the directory namespace) holding the bind password under key `password`."""
    ca_issuer: str
    """ClusterIssuer whose CA signs the server certificate: issue any certificate from it to get ca.crt."""

#!/usr/bin/env python3
"""Idempotent bootstrap of the site directory (389ds) from hpcforge's rendered LDIF.

Runs in the 389ds image (python3 + python-ldap) as the directory's bootstrap Job, whenever the
LDIF, this script or the SSSD bind password changes; safe to run again and again.

1. waits for the server, then makes sure a backend serves the suffix (389ds containers start
   without one);
2. turns off anonymous reads (only the root DSE stays anonymous);
3. for each LDIF entry, parents first: adds it when missing, otherwise replaces exactly the
   attributes whose values differ and removes the optional attributes hpcforge manages that the
   LDIF no longer has (a revoked SSH key, a dropped group member); nothing is written when
   nothing differs;
4. removes entries below the OUs hpcforge owns (ou=People, ou=Groups, ou=Services) that the LDIF
   no longer has: a user deleted from the config loses access on the next `pulumi up`
   (--no-prune keeps them);
5. sets the SSSD bind account's password (the LDIF carries a placeholder) only when a bind with
   the generated password fails.

Environment: LDAP_BIND_DN (default `cn=Directory Manager`), LDAP_BIND_PASSWORD (required),
SSSD_BIND_PASSWORD (required). Prints a JSON summary on the last line.
"""

import argparse
import json
import os
import sys
import time

import ldap
import ldap.filter
import ldap.modlist
from ldap.dn import escape_dn_chars
from ldif import LDIFRecordList

PLACEHOLDER = b"SSSD_BIND_PASSWORD_PLACEHOLDER"
SKIP_COMPARE = {"userpassword"}
CASE_INSENSITIVE = {"objectclass"}
# Optional attributes hpcforge renders for some entries only: present in the directory but absent
# from an entry's LDIF means "removed from the config", so they are deleted.
MANAGED_OPTIONAL = ("nsSshPublicKey", "memberUid", "mail", "givenName", "description")
OWNED_OUS = ("ou=People", "ou=Groups", "ou=Services")


def connect(uri, bind_dn, password, ca_file, wait_seconds):
    if ca_file:
        ldap.set_option(ldap.OPT_X_TLS_CACERTFILE, ca_file)
        ldap.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_DEMAND)
        ldap.set_option(ldap.OPT_X_TLS_NEWCTX, 0)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn = ldap.initialize(uri)
            conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
            conn.set_option(ldap.OPT_TIMEOUT, 30)
            conn.simple_bind_s(bind_dn, password)
            return conn
        except (ldap.SERVER_DOWN, ldap.CONNECT_ERROR, ldap.UNAVAILABLE):
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


def exists(conn, dn):
    try:
        conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
        return True
    except ldap.NO_SUCH_OBJECT:
        return False


def ensure_backend(conn, suffix):
    """Create a backend and mapping tree for `suffix` unless one serves it (what `dsconf backend create` does)."""
    found = conn.search_s(
        "cn=ldbm database,cn=plugins,cn=config",
        ldap.SCOPE_ONELEVEL,
        f"(nsslapd-suffix={ldap.filter.escape_filter_chars(suffix)})",
        ["cn"],
    )
    if found:
        return False
    names = {
        entry[1]["cn"][0].decode().lower()
        for entry in conn.search_s(
            "cn=ldbm database,cn=plugins,cn=config", ldap.SCOPE_ONELEVEL, "(objectClass=nsBackendInstance)", ["cn"]
        )
    }
    backend = "userRoot" if "userroot" not in names else "hpcforgeRoot"
    conn.add_s(
        f"cn={backend},cn=ldbm database,cn=plugins,cn=config",
        ldap.modlist.addModlist(
            {
                "objectClass": [b"top", b"extensibleObject", b"nsBackendInstance"],
                "cn": [backend.encode()],
                "nsslapd-suffix": [suffix.encode()],
            }
        ),
    )
    conn.add_s(
        f"cn={escape_dn_chars(suffix)},cn=mapping tree,cn=config",
        ldap.modlist.addModlist(
            {
                "objectClass": [b"top", b"extensibleObject", b"nsMappingTree"],
                "cn": [suffix.encode()],
                "nsslapd-state": [b"backend"],
                "nsslapd-backend": [backend.encode()],
            }
        ),
    )
    return True


def ensure_no_anonymous_reads(conn):
    current = conn.search_s("cn=config", ldap.SCOPE_BASE, "(objectClass=*)", ["nsslapd-allow-anonymous-access"])
    value = current[0][1].get("nsslapd-allow-anonymous-access", [b""])[0]
    if value.lower() != b"rootdse":
        conn.modify_s("cn=config", [(ldap.MOD_REPLACE, "nsslapd-allow-anonymous-access", [b"rootdse"])])
        return True
    return False


def _normalise(attribute, values):
    name = attribute.lower()
    if name in CASE_INSENSITIVE:
        return sorted(v.lower() for v in values)
    if name == "aci":
        return sorted(b" ".join(v.split()) for v in values)
    return sorted(values)


def sync_entry(conn, dn, wanted):
    """Add `dn` or replace its differing attributes; returns 'added', 'modified' or 'unchanged'."""
    try:
        current = conn.search_s(dn, ldap.SCOPE_BASE, "(objectClass=*)", [*wanted, *MANAGED_OPTIONAL])[0][1]
    except ldap.NO_SUCH_OBJECT:
        conn.add_s(dn, ldap.modlist.addModlist(wanted))
        return "added"
    current_lower = {name.lower(): values for name, values in current.items()}
    changes = []
    for attribute, values in wanted.items():
        if attribute.lower() in SKIP_COMPARE:
            continue
        have = current_lower.get(attribute.lower(), [])
        if _normalise(attribute, have) != _normalise(attribute, values):
            changes.append((ldap.MOD_REPLACE, attribute, values))
    wanted_lower = {name.lower() for name in wanted}
    for attribute in MANAGED_OPTIONAL:
        if attribute.lower() not in wanted_lower and current_lower.get(attribute.lower()):
            changes.append((ldap.MOD_DELETE, attribute, None))
    if changes:
        # One modify: the entry is valid only after all changes (e.g. objectClass and its attributes).
        conn.modify_s(dn, changes)
        return "modified"
    return "unchanged"


def prune(conn, suffix, wanted_dns):
    """Delete entries below the OUs hpcforge owns that the LDIF does not have; returns how many."""
    deleted = 0
    for ou in OWNED_OUS:
        base = f"{ou},{suffix}"
        try:
            found = conn.search_s(base, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"])
        except ldap.NO_SUCH_OBJECT:
            continue
        for dn, _ in found:
            if dn.lower() not in wanted_dns:
                conn.delete_s(dn)
                deleted += 1
    return deleted


def password_works(uri, dn, password, ca_file):
    try:
        conn = connect(uri, dn, password, ca_file, 0)
        conn.unbind_s()
        return True
    except ldap.INVALID_CREDENTIALS:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--ldif", required=True)
    parser.add_argument("--ca-file")
    parser.add_argument("--wait", type=int, default=300, help="seconds to wait for the server")
    parser.add_argument("--no-prune", action="store_true", help="keep entries the LDIF no longer has")
    args = parser.parse_args(argv)
    bind_dn = os.environ.get("LDAP_BIND_DN", "cn=Directory Manager")
    bind_password = os.environ["LDAP_BIND_PASSWORD"]
    sssd_password = os.environ["SSSD_BIND_PASSWORD"].encode()

    with open(args.ldif, "rb") as handle:
        records = LDIFRecordList(handle)
        records.parse()
    if not records.all_records:
        sys.exit("ldap_sync: the LDIF has no entries")
    suffix = records.all_records[0][0]

    conn = connect(args.uri, bind_dn, bind_password, args.ca_file, args.wait)
    summary = {
        "backendCreated": ensure_backend(conn, suffix),
        "anonymousReadsTurnedOff": ensure_no_anonymous_reads(conn),
        "added": 0,
        "modified": 0,
        "unchanged": 0,
        "passwordsSet": 0,
        "deleted": 0,
    }
    password_entries = []
    for dn, attributes in records.all_records:
        wanted = {}
        for name, values in attributes.items():
            wanted[name] = [sssd_password if v == PLACEHOLDER else v for v in values]
            if name.lower() == "userpassword":
                password_entries.append((dn, wanted[name][0]))
        summary[sync_entry(conn, dn, wanted)] += 1
    if not args.no_prune:
        summary["deleted"] = prune(conn, suffix, {dn.lower() for dn, _ in records.all_records})
    for dn, password in password_entries:
        if not password_works(args.uri, dn, password.decode(), args.ca_file):
            conn.modify_s(dn, [(ldap.MOD_REPLACE, "userPassword", [password])])
            summary["passwordsSet"] += 1
    conn.unbind_s()
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

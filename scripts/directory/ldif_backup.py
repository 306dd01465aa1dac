#!/usr/bin/env python3
"""Back up and restore the site directory (389ds) as LDIF, over LDAP(S), as Directory Manager.

Runs in the 389ds image (python3 + python-ldap), like ldap_sync.py: the directory's backup CronJob
runs `export`; the restore runbook (docs/operations.md) runs `import`.

export: every entry of the suffix's subtree, parents first, with its user attributes and `aci`
        (password hashes included: Directory Manager reads them), written to
        `<dir>/directory-<UTC timestamp>.ldif`, and uploaded to S3 when S3_BUCKET is set (s3put.py);
        local files older than --keep-days are removed.
import: adds every entry of an LDIF, parents first; an entry that exists gets the file's values
        (its attributes replaced), so an import onto a partly damaged tree repairs it.

Environment: LDAP_BIND_DN (default `cn=Directory Manager`), LDAP_BIND_PASSWORD (required).
Prints a JSON summary on the last line.
"""

import argparse
import datetime
import json
import os
import sys
import time

import ldap
import ldap.dn
import ldap.modlist
from ldif import LDIFRecordList, LDIFWriter

# s3put.py is shipped beside this script in the pod; in the repository it is in scripts/backup.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.join(_HERE, "..", "backup")]
import s3put  # noqa: E402

# Operational attributes the server maintains itself; `aci` is operational too but holds access rules.
KEEP_OPERATIONAL = ["aci"]


def connect(uri, ca_file, wait_seconds):
    if ca_file:
        ldap.set_option(ldap.OPT_X_TLS_CACERTFILE, ca_file)
        ldap.set_option(ldap.OPT_X_TLS_REQUIRE_CERT, ldap.OPT_X_TLS_DEMAND)
        ldap.set_option(ldap.OPT_X_TLS_NEWCTX, 0)
    bind_dn = os.environ.get("LDAP_BIND_DN", "cn=Directory Manager")
    password = os.environ["LDAP_BIND_PASSWORD"]
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn = ldap.initialize(uri)
            conn.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
            conn.simple_bind_s(bind_dn, password)
            return conn
        except (ldap.SERVER_DOWN, ldap.CONNECT_ERROR):
            if time.monotonic() > deadline:
                raise
            time.sleep(3)


def depth(dn):
    return len(ldap.dn.str2dn(dn))


def export(conn, suffix, directory, keep_days):
    entries = conn.search_s(suffix, ldap.SCOPE_SUBTREE, "(objectClass=*)", ["*", *KEEP_OPERATIONAL])
    entries.sort(key=lambda item: (depth(item[0]), item[0].lower()))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")  # noqa: UP017 (image Python may predate 3.11)
    path = os.path.join(directory, f"directory-{stamp}.ldif")
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as handle:
        writer = LDIFWriter(handle, cols=1_000_000)
        for dn, attrs in entries:
            writer.unparse(dn, attrs)
    os.replace(partial, path)  # a file under its final name is complete
    uploaded = s3put.upload_from_env(path, os.path.basename(path))
    removed = []
    cutoff = time.time() - keep_days * 86400
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        if name.startswith("directory-") and name.endswith(".ldif") and full != path and os.path.getmtime(full) < cutoff:
            os.remove(full)
            removed.append(name)
    return {"file": path, "entries": len(entries), "removed": removed, "uploaded": uploaded}


def restore(conn, path):
    with open(path, "rb") as handle:
        records = LDIFRecordList(handle)
        records.parse()
    entries = sorted(records.all_records, key=lambda item: depth(item[0]))
    added = replaced = 0
    for dn, attrs in entries:
        try:
            conn.add_s(dn, ldap.modlist.addModlist(attrs))
            added += 1
        except ldap.ALREADY_EXISTS:
            conn.modify_s(
                dn, [(ldap.MOD_REPLACE, name, values) for name, values in attrs.items() if name.lower() != "objectclass"]
            )
            replaced += 1
    return {"file": path, "added": added, "replaced": replaced}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["export", "import"])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--ca-file")
    parser.add_argument("--suffix", help="export: the directory suffix")
    parser.add_argument("--dir", help="export: the backup folder")
    parser.add_argument("--keep-days", type=int, default=30, help="export: remove exports older than this")
    parser.add_argument("--file", help="import: the LDIF to load")
    parser.add_argument("--wait", type=int, default=120, help="seconds to wait for the server")
    args = parser.parse_args(argv)
    if "LDAP_BIND_PASSWORD" not in os.environ:
        print("ldif_backup: LDAP_BIND_PASSWORD is not set", file=sys.stderr)
        return 2
    conn = connect(args.uri, args.ca_file, args.wait)
    if args.action == "export":
        if not args.suffix or not args.dir:
            parser.error("export needs --suffix and --dir")
        summary = export(conn, args.suffix, args.dir, args.keep_days)
    else:
        if not args.file:
            parser.error("import needs --file")
        summary = restore(conn, args.file)
    print(json.dumps({"action": args.action, **summary}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

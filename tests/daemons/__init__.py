"""Test harnesses for the real-daemon tier: load hpcforge-generated config into the real programs.

* :mod:`.common` - free ports, bounded waits/commands, processes that always stop (by pid/group).
* :mod:`.slurm` - :class:`~.slurm.SlurmCluster`: munge + slurmctld + slurmd per node, dynamic nodes.
* :mod:`.dirsrv` - :class:`~.dirsrv.DirectoryServer`: a throw-away 389ds instance.
* :mod:`.mariadb` - :class:`~.mariadb.MariaDBServer`: a private mariadbd.
* :mod:`.sssd` - ``sssctl config-check`` and the LDAP lookups an sssd.conf implies (or real sssd).

Each module documents what it found out about the daemon it drives; tests/test_daemon_harness.py
asserts those findings.  Tests must check prerequisites first with
``tests.helpers.require_binaries(*MODULE.REQUIRED_BINARIES)``.
"""

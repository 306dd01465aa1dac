"""Process plumbing shared by the real-daemon harnesses: ports, bounded waits, processes that always stop.

Rules every harness follows (and every new one must):

* every ``subprocess.run`` goes through :func:`run`, which always has a ``timeout=``;
* every wait goes through :func:`wait_until`, which always has a timeout and, when it gives up,
  says what it waited for, the last error seen and the tail of the daemon's log;
* every process the harness starts is a :class:`ManagedProcess` (its own session and process group,
  stopped with SIGTERM then SIGKILL to the whole group) or a :class:`PidfileDaemon` (a daemon that
  forks away; stopped by the pid in its pid file).  Both register in a module-wide registry that an
  ``atexit`` hook drains, so even a test run that dies half-way (Ctrl-C, a crashed fixture) stops
  what it started.  Nothing is ever stopped by name.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol, TypeVar

T = TypeVar("T")

#: Default bound for one command run by a harness (seconds).
DEFAULT_COMMAND_TIMEOUT = 60.0
#: How long a stopped process gets between SIGTERM and SIGKILL (seconds).
DEFAULT_STOP_GRACE = 10.0


class HarnessError(RuntimeError):
    """A daemon could not be set up, started or driven; the message says why (with log tails)."""


class HarnessTimeoutError(HarnessError, TimeoutError):
    """A bounded wait or command ran out of time."""


class WaitAbort(Exception):  # noqa: N818 - a control-flow signal, not an error class
    """Raised by a :func:`wait_until` predicate to give up at once (e.g. the daemon died)."""


# --------------------------------------------------------------------------------------------------
# ports and files


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the kernel picks it; racy by nature, but short)."""
    return free_ports(1, host)[0]


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct free TCP ports on ``host`` (all sockets are held open until every port is chosen)."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, 0))
            sockets.append(sock)
        return [int(sock.getsockname()[1]) for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    """Whether something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def tail(path: Path | str | None, lines: int = 40, max_bytes: int = 64 * 1024) -> str:
    """The last ``lines`` lines of a text file ('' when it does not exist); never raises."""
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def log_tails(paths: Iterable[Path | str | None], lines: int = 30) -> str:
    """A readable block with the tail of each existing, non-empty log file."""
    parts = []
    for path in paths:
        text = tail(path, lines)
        if text.strip():
            parts.append(f"--- last {lines} lines of {path} ---\n{text}")
    return "\n".join(parts)


def write_file(path: Path, text: str, mode: int = 0o644) -> Path:
    """Write ``text`` to ``path`` (parents created) with exactly ``mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)
    return path


def write_script(path: Path, text: str) -> Path:
    """Write an executable script (mode 0755); a ``#!/bin/sh`` line is added when there is none."""
    if not text.startswith("#!"):
        text = "#!/bin/sh\n" + text
    if not text.endswith("\n"):
        text += "\n"
    return write_file(path, text, 0o755)


# --------------------------------------------------------------------------------------------------
# bounded waits and commands


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float,
    what: str,
    *,
    interval: float = 0.2,
    log: Path | str | Sequence[Path | str] | None = None,
) -> T:
    """Call ``predicate`` until it returns something truthy, and return that; give up after ``timeout`` s.

    Exceptions raised by the predicate count as "not yet" (the last one is reported), except
    :class:`WaitAbort`, which stops the wait at once.  On giving up a :class:`HarnessTimeoutError` is
    raised whose message names ``what``, the last error and the tail of ``log`` (one path or several).
    """
    if timeout <= 0:
        raise ValueError("wait_until needs a positive timeout")
    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    logs: list[Path | str] = [] if log is None else [log] if isinstance(log, str | Path) else list(log)
    while True:
        try:
            value = predicate()
        except WaitAbort as abort:
            raise HarnessError(f"gave up waiting for {what}: {abort}\n{log_tails(logs)}") from None
        except Exception as error:
            last_error = error
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            detail = f"; last error: {last_error!r}" if last_error is not None else ""
            raise HarnessTimeoutError(f"timed out after {timeout:g}s waiting for {what}{detail}\n{log_tails(logs)}")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))


def run(
    argv: Sequence[str],
    *,
    timeout: float = DEFAULT_COMMAND_TIMEOUT,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    check: bool = False,
    cwd: Path | str | None = None,
    user: str | None = None,
    group: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` with text I/O captured and a mandatory timeout.

    A command that outlives ``timeout`` is killed (with its process group) and :class:`HarnessTimeoutError`
    is raised; with ``check=True`` a non-zero exit raises :class:`HarnessError` quoting stdout/stderr.
    """
    argv = [str(arg) for arg in argv]
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        user=user,
        group=group,
        extra_groups=[] if user is not None else None,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=5)
            raise HarnessTimeoutError(f"command timed out after {timeout:g}s: {' '.join(argv)}") from None
    result = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    if check and result.returncode != 0:
        raise HarnessError(describe_failure(result))
    return result


def describe_failure(result: subprocess.CompletedProcess[str]) -> str:
    """A message for a failed command: the command line, its exit code, stdout and stderr."""
    args = [str(arg) for arg in result.args] if isinstance(result.args, list | tuple) else [str(result.args)]
    # never print passwords given on the command line (ldap* -w, mariadb --password=)
    masked = ["***" if index > 0 and args[index - 1] in {"-w", "-p"} else arg for index, arg in enumerate(args)]
    masked = [re.sub(r"^(--password=).*", r"\1***", arg) for arg in masked]
    command = " ".join(masked)
    return (
        f"command failed with exit code {result.returncode}: {command}\n"
        f"--- stdout ---\n{(result.stdout or '').strip()}\n--- stderr ---\n{(result.stderr or '').strip()}"
    )


# --------------------------------------------------------------------------------------------------
# processes


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def pid_start_time(pid: int) -> str | None:
    """The kernel start time of ``pid`` (field 22 of /proc/PID/stat), to tell a pid from a re-used one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]


def read_pidfile(path: Path | str) -> int | None:
    """The pid in a pid file, or None when the file is missing or empty."""
    try:
        text = Path(path).read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def stop_pid(pid: int, *, grace: float = DEFAULT_STOP_GRACE, group: bool = False, sig: signal.Signals = signal.SIGTERM) -> bool:
    """Send ``sig`` to ``pid`` (or its process group), wait up to ``grace`` s, then SIGKILL.

    Returns True when the process is gone.  Zombies count as gone (their parent reaps them).
    """
    if not pid_alive(pid):
        return True
    (_kill_group if group else _kill)(pid, sig)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    (_kill_group if group else _kill)(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


class Stoppable(Protocol):
    name: str

    def stop(self) -> None: ...


class _Registry:
    """Everything started and not yet stopped; drained (newest first) at interpreter exit."""

    def __init__(self) -> None:
        self._items: list[Stoppable] = []
        self._lock = threading.Lock()

    def add(self, item: Stoppable) -> None:
        with self._lock:
            self._items.append(item)

    def discard(self, item: Stoppable) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._items.remove(item)

    def live(self) -> list[Stoppable]:
        with self._lock:
            return list(self._items)

    def stop_all(self) -> None:
        for item in reversed(self.live()):
            with contextlib.suppress(Exception):
                item.stop()


REGISTRY = _Registry()
atexit.register(REGISTRY.stop_all)


class ManagedProcess:
    """A foreground process in its own session/process group, output to ``log_path``; always stoppable.

    ``stop()`` sends SIGTERM to the whole process group, waits ``grace`` seconds, then SIGKILLs the
    group; it is idempotent and also runs from the atexit registry if a test forgot it.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        log_path: Path,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        grace: float = DEFAULT_STOP_GRACE,
        user: str | None = None,
        group: str | None = None,
    ) -> None:
        self.argv = [str(arg) for arg in argv]
        self.name = name
        self.log_path = log_path
        self.grace = grace
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[bytes] = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        try:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                user=user,
                group=group,
                extra_groups=[] if user is not None else None,
                start_new_session=True,
            )
        except BaseException:
            self._log.close()
            raise
        self.pid = self.popen.pid
        REGISTRY.add(self)

    def alive(self) -> bool:
        return self.popen.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_path, lines)

    def wait_exit(self, timeout: float) -> int:
        """Wait (bounded) for the process to exit by itself; its exit code."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise HarnessTimeoutError(f"{self.name} did not exit within {timeout:g}s\n{log_tails([self.log_path])}") from None

    def stop(self) -> None:
        try:
            if self.popen.poll() is None:
                _kill_group(self.pid, signal.SIGTERM)
                try:
                    self.popen.wait(timeout=self.grace)
                except subprocess.TimeoutExpired:
                    _kill_group(self.pid, signal.SIGKILL)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.popen.wait(timeout=5)
            # children left in the group (the leader already exited) get the same treatment
            _kill_group(self.pid, signal.SIGKILL)
        finally:
            with contextlib.suppress(OSError):
                self._log.close()
            REGISTRY.discard(self)

    def __repr__(self) -> str:
        return f"ManagedProcess({self.name!r}, pid={self.pid}, alive={self.alive()})"


class PidfileDaemon:
    """A daemon that forked away from its launcher and is known by its pid file.

    Built with :meth:`adopt` once the pid file exists.  ``stop()`` SIGTERMs the recorded pid (not a
    name), waits ``grace`` s, then SIGKILLs it; it checks the pid's start time so a re-used pid is
    never hit.
    """

    def __init__(self, name: str, pid: int, *, pidfile: Path | None = None, grace: float = DEFAULT_STOP_GRACE) -> None:
        self.name = name
        self.pid = pid
        self.pidfile = pidfile
        self.grace = grace
        self._start_time = pid_start_time(pid)
        REGISTRY.add(self)

    @classmethod
    def adopt(
        cls, name: str, pidfile: Path, *, timeout: float = 30.0, grace: float = DEFAULT_STOP_GRACE, log: Path | None = None
    ) -> PidfileDaemon:
        """Wait (bounded) for ``pidfile`` to name a live process and take charge of it."""

        def ready() -> int | None:
            pid = read_pidfile(pidfile)
            return pid if pid is not None and pid_alive(pid) else None

        pid = wait_until(ready, timeout, f"{name} to write a live pid to {pidfile}", log=log)
        return cls(name, pid, pidfile=pidfile, grace=grace)

    def alive(self) -> bool:
        return pid_alive(self.pid) and pid_start_time(self.pid) == self._start_time

    def stop(self) -> None:
        try:
            if self.alive():
                stop_pid(self.pid, grace=self.grace)
        finally:
            REGISTRY.discard(self)

    def __repr__(self) -> str:
        return f"PidfileDaemon({self.name!r}, pid={self.pid}, alive={self.alive()})"


class Stack:
    """Things to stop, in reverse order of starting; every ``stop()`` runs even when one fails."""

    def __init__(self) -> None:
        self._items: list[Stoppable] = []

    def push(self, item: Stoppable) -> None:
        self._items.append(item)

    def __iter__(self) -> Iterator[Stoppable]:
        return iter(list(self._items))

    def stop_all(self) -> list[str]:
        """Stop everything (newest first); the errors, as text (empty when all went well)."""
        errors = []
        while self._items:
            item = self._items.pop()
            try:
                item.stop()
            except Exception as error:
                errors.append(f"{item.name}: {error!r}")
        return errors


#: Environment variable the harnesses put in every daemon they start; children inherit it, which
#: lets :func:`kill_tagged` find strays (e.g. slurmstepd, which leaves slurmd's process group).
TAG_VAR = "HPCFORGE_HARNESS_TAG"


def processes_with_env(entries: Iterable[str]) -> list[int]:
    """Pids (not zombies, not this process) whose environment holds one of the exact ``KEY=VALUE`` ``entries``."""
    wanted = {entry.encode() for entry in entries}
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted.intersection(environ) and pid_alive(int(name)):
            found.append(int(name))
    return found


def processes_in(root: Path) -> list[int]:
    """Pids (not this process) whose working directory is ``root`` or below it, deleted since or not.

    slurmstepd writes its process title over its environment, so :func:`processes_with_env` cannot find it; it keeps
    the working directory slurmd gave it, inside the cluster's directory.
    """
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{name}/cwd").removesuffix(" (deleted)")
        except OSError:
            continue
        if Path(cwd).is_relative_to(root) and pid_alive(int(name)):
            found.append(int(name))
    return found


def kill_tagged(entries: Iterable[str], grace: float = 5.0, root: Path | None = None) -> list[int]:
    """Stop (SIGTERM, then SIGKILL after ``grace`` s) every process found by :func:`processes_with_env`, and with
    ``root`` by :func:`processes_in`; their pids."""
    pids = sorted(set(processes_with_env(list(entries))) | set(processes_in(root) if root is not None else ()))
    for pid in pids:
        _kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(pid_alive(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        if pid_alive(pid):
            _kill(pid, signal.SIGKILL)
    return pids


def make_tag(kind: str, where: Path | str) -> str:
    """A TAG_VAR value ``KIND:OWNERPID:OWNERSTART:WHERE`` naming this process as owner (see :func:`kill_orphans`)."""
    return f"{kind}:{os.getpid()}:{pid_start_time(os.getpid())}:{where}"


def process_tag(pid: int) -> str | None:
    """The TAG_VAR value in the environment of ``pid`` (None when untagged or unreadable)."""
    prefix = f"{TAG_VAR}=".encode()
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for entry in environ:
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def tag_owner_alive(tag: str) -> bool:
    """Whether the process that made ``tag`` (:func:`make_tag`) still runs (same pid *and* start time)."""
    parts = tag.split(":")
    if len(parts) < 3 or not parts[1].isdigit():
        return False
    owner = int(parts[1])
    return pid_alive(owner) and pid_start_time(owner) == parts[2]


def kill_orphans(kind: str) -> list[int]:
    """Stop processes tagged ``KIND:...`` by an owner process that no longer runs (a crashed earlier test run).

    Processes of live owners (this run, or another run in parallel) are left alone.  The pids stopped.
    """
    orphans = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        tag = process_tag(int(name))
        if tag is not None and tag.startswith(f"{kind}:") and not tag_owner_alive(tag) and pid_alive(int(name)):
            orphans.append(int(name))
    for pid in orphans:
        stop_pid(pid, grace=5)
    return orphans


def env_with(extra: Mapping[str, str | None]) -> dict[str, str]:
    """A copy of os.environ with ``extra`` applied (a None value removes the variable)."""
    env = dict(os.environ)
    for key, value in extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env

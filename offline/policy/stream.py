"""The policy packs' side of `offline check` while the program runs (offline/policy/check.py `StreamedCheck`).

A process of its own, started by `offline check` before the program runs, with the same working
directory and environment. It reads pickled messages on stdin, written by `StreamedCheck` (this
program's own process, nothing else):

1. `("setup", project, stack, stack_file, packs)`: start the packs and configure them, as `check_stack`
   does (offline/policy/session.py `PackSession`);
2. `("resource", RecordedResource)` for each resource, in registration order, as the program registers
   it: Remediate and Analyze on every pack (`analyze_resources`, reading them as they come);
3. `("finish", RecordedStack)` once the program is done (its outputs; no resources): AnalyzeStack
   (`analyze_stack`).

It then stops the packs and writes one pickled `StreamAnswer` on stdout. When stdin ends without
`finish` (the program failed) or anything goes wrong, the answer says it did not analyze the stack,
and `offline check` runs `check_stack`, which reports what went wrong as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from components.paths import PROJECT_ROOT

from ..program.engine import PROJECT, RecordedResource, RecordedStack
from ..program.stackfile import StackFile
from .driver import Diagnostic, ResourceFeed, analyze_resources, analyze_stack
from .packs import PackSpec
from .report import CheckResult, print_report
from .session import PackSession, check_result, given_configs


@dataclass
class StreamAnswer:
    analyzed: bool
    """True when every resource and the stack were analyzed; the fields below are then the check's."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    urns: list[str] = field(default_factory=list)
    """The resources analyzed after the root Stack, in order (`offline check` compares them with its recording)."""
    packs: list[tuple[str, str, Path]] = field(default_factory=list)
    log: str = ""
    """What the packs logged through the engine service and the driver reported, in order."""
    stopped: str = ""
    """What the packs wrote on stderr, as `check_stack` prints it when it stops them."""
    memory: dict[str, float] = field(default_factory=dict)


def serve(stdin: BinaryIO, stdout: BinaryIO) -> StreamAnswer:
    _, project, stack, stack_file, packs = pickle.load(stdin)
    log = io.StringIO()
    session = PackSession(project, stack, stack_file, log)
    feed = ResourceFeed()
    finished: list[Any] = []

    def read() -> None:
        try:
            while True:
                message = pickle.load(stdin)
                if message[0] != "resource":
                    finished.append(message[1])
                    return
                feed.add(message[1])
        except (OSError, EOFError, pickle.UnpicklingError):
            return
        finally:
            feed.close()

    threading.Thread(target=read, name="resources", daemon=True).start()
    answer = StreamAnswer(analyzed=False)
    try:
        if not session.start(packs, given_configs(packs)):
            analyzed = analyze_resources(session.running, project, stack, feed, log)
            if finished:
                diagnostics = analyzed.diagnostics + analyze_stack(session.running, analyzed, finished[0])
                answer = StreamAnswer(True, diagnostics, [r.urn for r in analyzed.resources[1:]], session.packs, log.getvalue())
    except Exception:  # check_stack reports it
        pass
    finally:
        stopped = io.StringIO()
        session.stop(stopped)
        answer.stopped = stopped.getvalue()
        answer.memory = session.memory
    pickle.dump(answer, stdout, protocol=pickle.HIGHEST_PROTOCOL)
    stdout.flush()
    return answer


def main() -> int:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return 0


class StreamedCheck:
    """`check_stack`, with the packs analyzing each resource while the program registers it.

    The engine asks the analyzers about each resource as the program registers it. Here a separate
    process (offline/policy/stream.py) starts the packs while the program runs and is handed each
    resource as the mock engine records it (`add`, `run_program`'s `on_resource`): it and the packs
    work on the second core while the program runs on the first, instead of after it (in this process
    they would wait on the program for Python's global lock). Only the time changes: the requests,
    their order and what is printed are those of `check_stack`, run by the same code
    (`analyze_resources`, `analyze_stack`). Anything that goes wrong over there (a pack that does not
    start, a config the packs refuse, a failed request) is dropped without a word: `finish` then
    answers None and the caller runs `check_stack` on the recording, which reports it as before.
    """

    def __init__(self, stack_file: StackFile, packs: Sequence[PackSpec], project: str = PROJECT) -> None:
        self.project = project
        self.stack = stack_file.name
        self.broken = False
        # Same working directory and environment as this process: the packs' paths and environment
        # (policy_pack_environment of os.environ) are the same as check_stack's.
        code = f"import sys; sys.path.insert(0, {str(PROJECT_ROOT)!r}); from offline.policy.stream import main; sys.exit(main())"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.writer = threading.Thread(target=self._write, name="policy-stream", daemon=True)
        self.writer.start()
        self._send(("setup", project, stack_file.name, stack_file, list(packs)))

    def _send(self, message: tuple[Any, ...]) -> None:
        self.outbox.put(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))

    def _write(self) -> None:
        """Hand the messages over from a thread of its own: the program's threads never wait on the pipe."""
        stdin = self.process.stdin
        assert stdin is not None
        while (data := self.outbox.get()) is not None:
            if self.broken:
                continue
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                self.broken = True
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def add(self, resource: RecordedResource) -> None:
        """Hand the packs a resource the program registered (in registration order). Its plain inputs
        stay here: the packs get the wire form (`raw_inputs`)."""
        self._send(("resource", dataclasses.replace(resource, inputs={})))

    def _close(self) -> None:
        self.outbox.put(None)
        self.writer.join()

    def _answer(self) -> StreamAnswer | None:
        """Close the stream and read the streaming process's answer (None: none came); the process has ended."""
        self._close()
        try:
            assert self.process.stdout is not None
            answer = pickle.load(self.process.stdout)
        except (OSError, EOFError, pickle.UnpicklingError):
            answer = None
        finally:
            self.process.wait()
        return answer if isinstance(answer, StreamAnswer) else None

    def abandon(self) -> StreamAnswer | None:
        """The program failed: stop the packs, report nothing (the answer is for tests)."""
        return self._answer()

    def finish(self, stack: RecordedStack, *, out: TextIO | None = None, err: TextIO | None = None) -> CheckResult | None:
        """Once every resource of `stack` was added: the check's result, printed like `check_stack`'s;
        None when the packs could not analyze the stack (the caller then runs `check_stack`)."""
        out = out or sys.stdout
        err = err or sys.stderr
        self._send(("finish", dataclasses.replace(stack, resources=[])))
        answer = self._answer()
        if answer is None or self.broken or not answer.analyzed:
            return None
        if (stack.project, stack.stack) != (self.project, self.stack) or answer.urns != [r.urn for r in stack.resources]:
            return None
        err.write(answer.log)
        result = check_result(stack, answer.diagnostics, answer.packs, answer.memory)
        print_report(result, stack, out)
        err.write(answer.stopped)
        return result

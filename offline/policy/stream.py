"""The policy packs' side of `offline check` while the program runs (offline/check.py `StreamedCheck`).

A process of its own, started by `offline check` before the program runs, with the same working
directory and environment. It reads pickled messages on stdin, written by `StreamedCheck` (this
program's own process, nothing else):

1. `("setup", project, stack, stack_file, packs)`: start the packs and configure them, as `check_stack`
   does (offline/check.py `_Session`);
2. `("resource", RecordedResource)` for each resource, in registration order, as the program registers
   it: Remediate and Analyze on every pack (`analyze_resources`, reading them as they come);
3. `("finish", RecordedStack)` once the program is done (its outputs; no resources): AnalyzeStack
   (`analyze_stack`).

It then stops the packs and writes one pickled `StreamAnswer` on stdout. When stdin ends without
`finish` (the program failed) or anything goes wrong, the answer says it did not analyze the stack,
and `offline check` runs `check_stack`, which reports what went wrong as before.
"""

from __future__ import annotations

import io
import pickle
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .driver import Diagnostic


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
    from ..check import _given_configs, _Session
    from .driver import ResourceFeed, analyze_resources, analyze_stack

    _, project, stack, stack_file, packs = pickle.load(stdin)
    log = io.StringIO()
    session = _Session(project, stack, stack_file, log)
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
        if not session.start(packs, _given_configs(packs)):
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

"""Shared shell code inlined into prolog/epilog scripts (pure): one self-contained file per deployed script.

A repository script may source a file of the repository between two marker lines:

    # --- include ../lib/gpu-common.sh ---
    # shellcheck source=SCRIPTDIR/../lib/gpu-common.sh
    . "$(dirname "${BASH_SOURCE[0]}")/../lib/gpu-common.sh"
    # --- end include ---

Run from the repository (tests, a node with the checkout), the script sources the file. Rendered into a
ConfigMap, the block is replaced by the file's text (without its shebang), between `# --- included from <path> ---`
and `# --- end included ---`: the operator mounts each script alone, so it cannot source a sibling. The path is
relative to the including script's directory and must stay inside the project; an included file may not include
another (one level keeps what runs on the node readable).
"""

from __future__ import annotations

import re
from pathlib import Path

BEGIN = re.compile(r"^# --- include (?P<path>\S+) ---$")
END = "# --- end include ---"


class IncludeError(ValueError):
    """An include block that cannot be inlined; the message names the script and what is wrong."""


def _included_path(script: Path, relative: str, root: Path) -> Path:
    path = (script.parent / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise IncludeError(f"includes {relative}, which is outside the project")
    if path.is_dir():
        raise IncludeError(f"includes {relative}, which is a directory, not a file")
    if not path.is_file():
        raise IncludeError(f"includes {relative}, which does not exist")
    return path


def inline_includes(text: str, script: Path, root: Path) -> str:
    """`text` (the script at path `script`) with each include block replaced by the included file's text."""
    lines = text.split("\n")
    out: list[str] = []
    index = 0
    while index < len(lines):
        match = BEGIN.match(lines[index])
        if match is None:
            if lines[index] == END:
                raise IncludeError(f"line {index + 1}: '{END}' without an include line before it")
            out.append(lines[index])
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if lines[i] == END), None)
        if end is None:
            raise IncludeError(f"line {index + 1}: the include of {match['path']} has no '{END}' line")
        path = _included_path(script, match["path"], root)
        body = path.read_text().split("\n")
        if body and body[0].startswith("#!"):
            body = body[1:]
        while body and body[-1] == "":
            body.pop()
        name = path.relative_to(root.resolve()).as_posix()
        nested = next((line for line in body if BEGIN.match(line)), None)
        if nested is not None:
            raise IncludeError(f"includes {name}, which includes another file ({nested.strip()}); one level only")
        out.append(f"# --- included from {name} ---")
        out.extend(body)
        out.append("# --- end included ---")
        index = end + 1
    return "\n".join(out)


def include_problem(script: Path, root: Path) -> str | None:
    """What keeps `script`'s includes from being inlined, or None."""
    try:
        inline_includes(script.read_text(), script, root)
    except IncludeError as error:
        return str(error)
    except (OSError, UnicodeDecodeError) as error:
        return f"an included file cannot be read ({error})"
    return None


__all__ = ["IncludeError", "include_problem", "inline_includes"]

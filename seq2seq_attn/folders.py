"""Folders that appear whole: written beside their target, renamed into place.

`written_whole(target)` is how the package writes a folder that something
else may be watching or reading (an export's version folder, which TF
Serving loads as soon as it appears; the model directory of `average`):
everything goes into a partial folder beside the target, named for this
host and process, and one rename makes it the target. Its mode follows the
umask, as `mkdir` does (0755 under the usual 022), so that a server running
as another user can read it; `tempfile.mkdtemp` would make it 0700.

A process killed while writing leaves its partial folder. The next writer
into the same parent removes those of processes that are gone, and only
where the name says this host: on a folder shared between hosts, a PID
means nothing on another host.
"""

import contextlib
import os
import pathlib
import re
import secrets
import shutil
import socket

# `.TARGET.partial-PID@HOST-XXXXXXXX`: hidden, and not a version number
# (TF Serving takes only integer folder names for versions).
_PARTIAL = re.compile(
    r"\.(?P<target>.+)\.partial-(?P<pid>\d+)@(?P<host>.+)-[0-9a-f]{8}"
)


def partial_name(target):
    """The name of this process's partial folder for `target`."""
    host, pid, token = socket.gethostname(), os.getpid(), secrets.token_hex(4)
    return f".{pathlib.Path(target).name}.partial-{pid}@{host}-{token}"


def _alive(pid):
    """Whether process `pid` exists here (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove_abandoned(parent):
    """Removes the partial folders in `parent` that processes of this host
    left when they died (a `kill -9`, a crash); returns their names."""
    removed = []
    host = socket.gethostname()
    for path in sorted(pathlib.Path(parent).glob(".*.partial-*")):
        match = _PARTIAL.fullmatch(path.name)
        if not match or not path.is_dir() or match["host"] != host:
            continue
        if not _alive(int(match["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


@contextlib.contextmanager
def written_whole(target):
    """Yields a new partial folder beside `target` to write into; renames
    it to `target` when the block ends, and removes it if the block raises.

    Raises:
        FileExistsError: `target` exists (other than as an empty folder,
            which the rename replaces), or appeared meanwhile.
    """
    target = pathlib.Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_abandoned(target.parent)
    partial = target.parent / partial_name(target)
    partial.mkdir()
    try:
        yield partial
        try:
            os.rename(partial, target)
        except OSError as error:
            if target.exists():
                raise FileExistsError(
                    f"{target}: exists and is not empty"
                ) from error
            raise
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise

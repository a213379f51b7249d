"""One writer per model directory: an exclusive lock held by the process
that trains into it.

The lock is `fcntl.flock` on `MODEL_DIR/train.lock`, taken before the
trainer writes anything and held until the process ends, when the OS
releases it: a `kill -9` leaves no stale lock, and the same command resumes
at once. The file names the holder (PID and host) for the refusal of a
second process. Reading a directory that is being trained (translate,
evaluate, export) takes no lock: they read the newest intact checkpoint.

Under `multi_worker`, the chief takes the lock; the workers write only their
own `workers/N/` folders and take none.
"""

import contextlib
import fcntl
import os
import pathlib
import shutil
import socket

LOCK_FILE = "train.lock"

# Locks this process holds: {resolved directory: open lock file}. A second
# trainer in the same process (a notebook cell run again) shares the lock.
_held = {}


class RunDirectoryLockedError(RuntimeError):
    """Another process is training into the model directory."""


def _holder(path):
    """The holder a lock file names ("PID N on HOST"), or a stand-in."""
    try:
        pid, _, host = path.read_text().strip().partition(" ")
    except OSError:
        pid = ""
    if not pid.isdigit():
        return "a process that has not yet written its PID"
    return f"PID {pid} on {host or 'an unnamed host'}"


def hold_run_directory(directory):
    """Takes this process's exclusive lock on `directory` (made if
    missing), held until the process ends; taking it again is a no-op.

    Raises:
        RunDirectoryLockedError: another process holds it; nothing in
            `directory` is changed.
    """
    directory = pathlib.Path(directory).resolve()
    if directory in _held:
        return
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_FILE
    # O_RDWR without O_TRUNC: opening the holder's file changes nothing.
    stream = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+")
    try:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        stream.close()
        raise RunDirectoryLockedError(
            f"{directory} is being trained by {_holder(path)} "
            f"(it holds {path}); wait for it to end, or stop it and run this "
            "command again to resume"
        ) from None
    stream.seek(0)
    stream.truncate()
    stream.write(f"{os.getpid()} {socket.gethostname()}\n")
    stream.flush()
    _held[directory] = stream


def release_run_directory(directory):
    """Gives up this process's lock on `directory` (for a run directory
    that set-up removes again)."""
    stream = _held.pop(pathlib.Path(directory).resolve(), None)
    if stream is not None:
        stream.close()


@contextlib.contextmanager
def removed_if_setup_fails(path, existed, fresh):
    """On an error inside, a `fresh` run directory (new, or holding nothing
    but the lock) is left as it was found: bad data or flags leave no
    vocabulary of an empty corpus and no empty run folder. Its lock is let
    go."""
    path = pathlib.Path(path)
    try:
        yield
    except BaseException:
        if fresh and path.exists():
            if existed:
                for child in path.iterdir():
                    if child.is_dir():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            else:
                shutil.rmtree(path)
            release_run_directory(path)
        raise

"""What every command line (`python -m seq2seq_attn.<verb>`) shares."""

import errno
import importlib
import os
import runpy
import sys

from absl import app

# TensorFlow's errors that come from the files a command reads or writes.
_TF_FILE_ERRORS = (
    "NotFoundError",
    "PermissionDeniedError",
    "FailedPreconditionError",
    "DataLossError",
    "ResourceExhaustedError",
    "AlreadyExistsError",
)


def file_error_line(error):
    """The line "PATH: what" for an error of the files a command reads or
    writes, or None for any other error (a bug keeps its traceback)."""
    if isinstance(error, OSError):
        reason = error.strerror or str(error) or type(error).__name__
        if error.errno == errno.ENOSPC:
            reason += " (the disk is full)"
        if error.filename is not None:
            return f"{os.fsdecode(error.filename)}: {reason}"
        return reason
    if isinstance(error, (EOFError, UnicodeError)):
        return str(error)
    tensorflow = sys.modules.get("tensorflow")
    if tensorflow is not None and isinstance(error, tensorflow.errors.OpError):
        if type(error).__name__ in _TF_FILE_ERRORS:
            return error.message.strip().splitlines()[0]
    return None


def check_writable_file(path):
    """Refuses, before any work, an output file that cannot be written:
    its folder missing or read-only, or a folder of that name ("-" is
    stdout)."""
    if path == "-":
        return
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise ValueError(f"{path}: is a folder, not a file to write")
    if not os.path.isdir(folder):
        raise ValueError(f"{path}: cannot be written: no folder {folder}")
    if not os.access(folder, os.W_OK) or (
        os.path.exists(path) and not os.access(path, os.W_OK)
    ):
        raise ValueError(f"{path}: cannot be written: permission denied")


def check_writable_folder(path):
    """Refuses, before any work, a folder to write into that exists as a
    file or cannot be made or written."""
    path = os.path.abspath(path)
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise ValueError(f"{existing}: is a file, not a folder to write into")
    if not os.access(existing, os.W_OK):
        raise ValueError(f"{existing}: cannot be written: permission denied")


def _reporting_file_errors(main):
    """`main`, with the errors of files turned into one `error:` line on
    stderr and exit status 2."""

    def wrapped(argv):
        try:
            return main(argv)
        except Exception as error:
            line = file_error_line(error)
            if line is None:
                raise
            print(f"error: {line}", file=sys.stderr)
            sys.exit(2)

    return wrapped


def run(main, argv=None):
    """`absl.app.run(main, argv)`, with the log lines of TensorFlow's C++
    runtime hidden (CUDA probing, "failed call to cuInit" on a machine
    without a GPU, oneDNN): under `python -m` the package has set the same
    level before importing TensorFlow (`seq2seq_attn/__init__.py`); this
    covers a command started another way, whose first ops run after it.
    Errors still reach Python as exceptions; `TF_CPP_MIN_LOG_LEVEL=0` in
    the environment shows every line. An error of a file (missing,
    unreadable, a folder, a full disk, TensorFlow's own file errors) is
    one line, `error: PATH: what`, with exit status 2."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    app.run(_reporting_file_errors(main), argv)


def first_name(name, command):
    """Makes the module `name`, a command's first name
    (`seq2seq_attn.train`), stand for the module `command`
    (`seq2seq_attn.cli.train`). Run by `python -m` (`name` is
    "__main__"), it runs `command` as the main module, whose flags are then
    the ones `--helpshort` lists; imported, it is `command`."""
    if name == "__main__":
        runpy.run_module(command, run_name="__main__", alter_sys=True)
    else:
        sys.modules[name] = importlib.import_module(command)

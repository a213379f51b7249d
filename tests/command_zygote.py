"""A process that has imported TensorFlow once and forks each command.

`python tests/command_zygote.py module|script` imports TensorFlow, TF Text,
Keras and `seq2seq_attn` (not its command modules, which define absl
flags) as `python -m seq2seq_attn.<command>` or as a script of the tests
imports them, then reads one JSON request per line on stdin: a module (or
script), its arguments, environment, working directory and the files for
its stdin, stdout and stderr. For each it forks a child that runs it as
`python -m MODULE` (or `python SCRIPT`) would, and answers two JSON lines:
the child's pid, then its exit status (negative: the signal that ended it).

The child is a real process running the shipped command; what it skips is
the 5-8 s of imports that every fresh interpreter repeats (the suite starts
over a hundred). TensorFlow's runtime (thread pools, devices) starts only
at its first op, in the child: the zygote runs none. Variables that
TensorFlow or Keras read at import (`TF_CPP_MIN_LOG_LEVEL`,
`TF_ENABLE_ONEDNN_OPTS`) are the zygote's own, so `tests/commands.py`
keeps one zygote for each set of them; the start-up lines that the import
kept (as the command's own filter keeps them) are written to each child's
stderr first.
"""

import importlib
import io
import json
import os
import random
import runpy
import signal
import sys
import tempfile


def _import_once(as_module):
    """Imports what every command imports, as `python -m seq2seq_attn.X`
    does where `as_module` (the package's `__init__` reads `sys.argv` and
    `sys.orig_argv`), else as a script does; returns the start-up lines
    that the command or script would have printed."""
    argv = sys.argv
    if as_module:
        # As `python -m` run in the checkout: its package, not an installed
        # one (`tests/commands.py` forks modules only for that directory).
        sys.path.insert(
            0, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        )
        sys.argv = ["-m"]
        sys.orig_argv = [sys.executable, "-m", "seq2seq_attn"]
    with tempfile.TemporaryFile() as caught:
        saved = os.dup(2)
        os.dup2(caught.fileno(), 2)
        try:
            # The package first: its `__init__` imports TensorFlow quietly.
            for name in ("seq2seq_attn", "keras", "tensorflow_text"):
                importlib.import_module(name)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        caught.seek(0)
        sys.argv = argv
        return caught.read()


def _new_standard_streams(unbuffered):
    """`sys.stdin`, `sys.stdout` and `sys.stderr` on fds 0-2, as a fresh
    interpreter makes them (`-u`, or `PYTHONUNBUFFERED`, too)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        writing = fd > 0
        binary = open(
            fd,
            "wb" if writing else "rb",
            buffering=0 if unbuffered and writing else -1,
            closefd=False,
        )
        stream = io.TextIOWrapper(
            binary,
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=fd == 2,
            write_through=unbuffered and writing,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_child(request, startup_lines):
    """In the forked child: becomes `python -m MODULE ARGS` (or `python
    SCRIPT ARGS`) with the request's files, directory and environment."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    random.seed()
    for fd, name, mode in ((0, "stdin", "rb"), (1, "stdout", "wb")):
        with open(request[name], mode) as file:
            os.dup2(file.fileno(), fd)
    with open(request["stderr"], "wb") as file:
        os.dup2(file.fileno(), 2)
    os.write(2, startup_lines)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _new_standard_streams(bool(os.environ.get("PYTHONUNBUFFERED")))
    args = request["args"]
    if "module" in request:
        sys.path[0] = os.getcwd()
        sys.argv = [request["module"], *args]
        sys.orig_argv = [sys.executable, "-m", *sys.argv]
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    else:
        script = request["script"]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        sys.argv = [script, *args]
        sys.orig_argv = [sys.executable, *sys.argv]
        runpy.run_path(script, run_name="__main__")
    sys.exit(0)


def _answer(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def main():
    startup_lines = _import_once(sys.argv[1:] == ["module"])
    _answer(ready=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _run_child(request, startup_lines)
        _answer(pid=pid)
        _, status = os.waitpid(pid, 0)
        _answer(returncode=os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()

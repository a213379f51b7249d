"""Runs `python -m seq2seq_attn.<command>` for the tests, like `subprocess.run`.

`run(command, ...)` takes what `subprocess.run(command, capture_output=True,
...)` takes and returns the same `CompletedProcess`. A command of the form
`[sys.executable, "-m", "seq2seq_attn.<command>", ...]` (or a script of
these tests, `[sys.executable, "tests/<script>.py", ...]`) runs in a
process forked from a zygote that imported TensorFlow once
(`command_zygote.py`): the same command in its own process, without 5-8 s
of imports. Anything else, or an environment that changes what the
imports read, runs in a fresh interpreter.
"""

import atexit
import json
import locale
import os
import pathlib
import platform
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

ZYGOTE = pathlib.Path(__file__).with_name("command_zygote.py")
# `python -m seq2seq_attn.X` run here imports this checkout's package (the
# zygote does too), whichever one the interpreter has installed.
ROOT = ZYGOTE.resolve().parent.parent

# What the commands' interpreters read at import; one zygote for each set.
IMPORT_TIME = ("TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS")
# What may differ from the tests' own environment and still be read by the
# forked command as a fresh one would read it (after the imports).
READ_LATER = (
    "TF_CONFIG",
    "PYTHONUNBUFFERED",
    "SEQ2SEQ_ATTN_DATA_DIR",
    "SEQ2SEQ_ATTN_MIRROR",
)

_zygotes = {}
_lock = threading.Lock()


def run(
    command,
    *,
    input=None,
    capture_output=True,
    text=False,
    env=None,
    cwd=None,
    timeout=None,
):
    """`subprocess.run(command, capture_output=True, ...)`, forked from a
    zygote where `command` is one of the package's commands."""
    assert capture_output, "the commands' output is always captured"
    env = dict(os.environ if env is None else env)
    target = _forkable_target(command)
    if target is None or not _forkable(env) or not _in_root(target, cwd):
        return subprocess.run(
            command,
            input=input,
            capture_output=True,
            text=text,
            env=env,
            cwd=cwd,
            timeout=timeout,
        )
    kind, name, args = target
    values = _import_time_values(kind, name, env)
    env.update(values)
    request = {kind: name, "args": args, "env": env}
    with _lock:
        zygote = _zygote(kind, values)
        return zygote.run(command, request, input, text, cwd, timeout)


def _forkable_target(command):
    """`("module", name, args)` or `("script", path, args)`, or None."""
    command = [str(part) for part in command]
    if command[:1] != [sys.executable] or len(command) < 2:
        return None
    if command[1] == "-m" and command[2:3]:
        if command[2].startswith("seq2seq_attn."):
            return "module", command[2], command[3:]
    script = pathlib.Path(command[1]).resolve()
    if script.parent == ZYGOTE.parent and script.suffix == ".py":
        return "script", str(script), command[2:]
    return None


def _in_root(target, cwd):
    """Whether a module would be imported from this checkout: the zygote's
    package is `ROOT`'s, a fresh `python -m` imports that of its `cwd`."""
    return (
        target[0] != "module"
        or pathlib.Path(cwd or os.getcwd()).resolve() == ROOT
    )


def _forkable(env):
    """Whether `env` differs from ours only where a forked command reads
    it as a fresh one would."""
    ours = os.environ
    changed = {k for k in set(env) | set(ours) if env.get(k) != ours.get(k)}
    return changed <= set(IMPORT_TIME + READ_LATER)


def _import_time_values(kind, name, env):
    """The `IMPORT_TIME` variables as the imports read them: what
    `seq2seq_attn/__init__.py` sets under `python -m name`, else `env`'s."""
    from seq2seq_attn import TRAIN_COMMANDS

    values = {k: env[k] for k in IMPORT_TIME if k in env}
    if kind == "module":
        values.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        x86 = platform.machine().lower() in ("x86_64", "amd64")
        if name in TRAIN_COMMANDS and x86:
            values.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")
    return values


def _zygote(kind, values):
    key = (kind, *sorted(values.items()))
    if key not in _zygotes or _zygotes[key].process.poll() is not None:
        _zygotes[key] = _Zygote(kind, values)
    return _zygotes[key]


class _Zygote:
    """One `command_zygote.py` process and the pipe of its requests."""

    def __init__(self, kind, values):
        env = {k: v for k, v in os.environ.items() if k not in IMPORT_TIME}
        env.update(values)
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE), kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self._pending = b""
        self._answer(deadline=time.time() + 300)

    def run(self, command, request, input, text, cwd, timeout):
        with tempfile.TemporaryDirectory(prefix="command-") as folder:
            files = {n: os.path.join(folder, n) for n in ("in", "out", "err")}
            if isinstance(input, str):
                input = input.encode(locale.getpreferredencoding(False))
            pathlib.Path(files["in"]).write_bytes(input or b"")
            request = {
                **request,
                "cwd": os.path.abspath(cwd or os.getcwd()),
                "stdin": files["in"],
                "stdout": files["out"],
                "stderr": files["err"],
            }
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
            deadline = None if timeout is None else time.time() + timeout
            pid = self._answer(deadline)["pid"]
            try:
                returncode = self._answer(deadline)["returncode"]
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self._answer(None)
                stdout, stderr = _read(files, text)
                raise subprocess.TimeoutExpired(
                    command, timeout, stdout, stderr
                ) from None
            stdout, stderr = _read(files, text)
        return subprocess.CompletedProcess(command, returncode, stdout, stderr)

    def _answer(self, deadline):
        """The zygote's next answer; TimeoutError after `deadline`."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            wait = None if deadline is None else max(0, deadline - time.time())
            if not select.select([fd], [], [], wait)[0]:
                raise TimeoutError
            read = os.read(fd, 4096)
            if not read:
                self.log.seek(0)
                log = self.log.read().decode(errors="replace")
                raise RuntimeError(f"the command zygote ended:\n{log[-3000:]}")
            self._pending += read
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def _read(files, text):
    outputs = (pathlib.Path(files[n]).read_bytes() for n in ("out", "err"))
    if not text:
        return tuple(outputs)
    encoding = locale.getpreferredencoding(False)
    return tuple(
        output.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
        for output in outputs
    )


@atexit.register
def _close_zygotes():
    for zygote in _zygotes.values():
        zygote.close()

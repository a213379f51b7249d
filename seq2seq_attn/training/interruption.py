"""Ctrl-C during training: stop after the step in progress, with a
checkpoint of it, instead of wherever the signal lands (inside a
checkpoint write, say)."""

import signal
import sys
import threading


class TrainingInterrupted(KeyboardInterrupt):
    """Training stopped at Ctrl-C, after step `step`, saved as `checkpoint`.

    A `KeyboardInterrupt`, so that code that stops on one stops on this.
    """

    def __init__(self, step, checkpoint):
        super().__init__(
            f"interrupted at step {step}; {_name(checkpoint)} saved; run the "
            "same command to resume"
        )
        self.step = step
        self.checkpoint = checkpoint


class StopAtStep:
    """Within it, a first Ctrl-C (SIGINT) only sets `requested` and says so
    on stderr: the training loop stops after its step, saved. A second one
    interrupts at once (`KeyboardInterrupt`). Outside the main thread, where
    no handler can be set, Ctrl-C interrupts at once, as usual."""

    def __init__(self, stream=None):
        self.requested = False
        self._stream = stream
        self._previous = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exception):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print(
            "\nstopping after this step, with a checkpoint (Ctrl-C again to "
            "stop at once)",
            file=self._stream or sys.stderr,
            flush=True,
        )


def _name(checkpoint):
    return str(checkpoint).replace("\\", "/").rsplit("/", 1)[-1]

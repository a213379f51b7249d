"""Named points where a test can kill the training process, as `kill -9`
would, without guessing at timing.

    SEQ2SEQ_ATTN_DIE_AT=validation           the first validation
    SEQ2SEQ_ATTN_DIE_AT=checkpoint_write@10  inside the write of ckpt-10

A point may carry `@STEP` (the global step); without it the first time the
point is reached counts. Unset, nothing happens.
"""

import contextlib
import os
import signal

ENV = "SEQ2SEQ_ATTN_DIE_AT"


def _armed(point, step):
    wanted = os.environ.get(ENV, "")
    name, _, at = wanted.partition("@")
    return name == point and (not at or int(at) == step)


def _die():
    os.kill(os.getpid(), signal.SIGKILL)


def die_at(point, step):
    """Kills this process if `SEQ2SEQ_ATTN_DIE_AT` names `point` (at
    `step`)."""
    if _armed(point, step):
        _die()


@contextlib.contextmanager
def dying_inside_checkpoint_write(step):
    """While active and armed for "checkpoint_write", a checkpoint write
    dies after its shards are written to `PREFIX_temp/` and before they are
    merged into `PREFIX.index` and `PREFIX.data-*`: the state a kill in the
    middle of a write leaves."""
    if not _armed("checkpoint_write", step):
        yield
        return
    from tensorflow.python.checkpoint import functional_saver

    functional_saver.gen_io_ops.merge_v2_checkpoints = lambda *args, **kwargs: (
        _die()
    )
    yield

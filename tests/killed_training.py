"""`python -m seq2seq_attn.train FLAGS...` in this process, killed with
SIGKILL (what `kill -9` does) at a named point rather than at a guessed time:

    python tests/killed_training.py validation FLAGS...
    python tests/killed_training.py checkpoint_write@10 FLAGS...

`validation`: inside the first validation, once its perplexity is known and
before its BLEU is. `checkpoint_write@N`: inside the write of ckpt-N, after
its shards are written to `ckpt-N_temp/` and before they are merged into
`ckpt-N.index` and `ckpt-N.data-*`. The patches are the test's, made before
`train.main` runs; the product has no hook for them.
"""

import os
import runpy
import signal
import sys


def _die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)


def _arm_validation():
    from seq2seq_attn.training import validation

    validation.corpus_bleu = _die


def _arm_checkpoint_write(step):
    import tensorflow as tf

    # TensorFlow's private merge of the shards: the test's patch only.
    from tensorflow.python.checkpoint import functional_saver

    save = tf.train.CheckpointManager.save

    def save_dying_inside(self, checkpoint_number=None, **options):
        if checkpoint_number == step:
            functional_saver.gen_io_ops.merge_v2_checkpoints = _die
        return save(self, checkpoint_number=checkpoint_number, **options)

    tf.train.CheckpointManager.save = save_dying_inside


def main(point, flags):
    name, _, step = point.partition("@")
    if name == "validation":
        _arm_validation()
    elif name == "checkpoint_write":
        _arm_checkpoint_write(int(step))
    else:
        raise SystemExit(f"unknown point {point!r}")
    sys.argv = ["seq2seq_attn.train", *flags]
    runpy.run_module("seq2seq_attn.train", run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

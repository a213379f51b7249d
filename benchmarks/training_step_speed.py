"""The trainer's step on a model directory's recipe: ms per batch, by batching.

    python benchmarks/training_step_speed.py MODEL_DIR [BATCHES] [LABEL]
        (WINDOWS=1,20 in the environment: the sort windows to time)

For each sort window (default: 1, random batches as JoeyNMT draws them, and
the recipe's own), takes BATCHES + 3 batches of the recipe's training stream
(its data, vocabularies and seed) and runs the step the trainer runs
(`make_train_step`: forward, gradients on the real target positions, the
optimizer's update) from the directory's latest checkpoint: 3 to trace and
warm up, then BATCHES timed. Prints one line per window: ms per step,
target tokens per second and the share of target positions that are
padding. Any recipe works (`seq2seq_attn.train --max_steps=1` makes a model
directory); the code timed is the one on PYTHONPATH, so that trees can be
compared by running this script from each in turn, alternating.
"""

import dataclasses
import os
import pathlib
import statistics
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# As `python -m seq2seq_attn.train` sets it on x86 (its default).
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


def prepared_step(model_dir, window, batch_count, epoch_state):
    """`(train_step, stream, batches)`: the trainer's step on the latest
    checkpoint of `model_dir`, and `batch_count` batches of its recipe's
    training stream with sort window `window` (`epoch_state`: a file the
    stream may write), as arrays and as the stream the step reads."""
    import tensorflow as tf

    from seq2seq_attn.config.run import RunConfig
    from seq2seq_attn.data.training_data import training_data
    from seq2seq_attn.model_dir import load_trained
    from seq2seq_attn.training.losses import training_loss
    from seq2seq_attn.training.optimizers import make_optimizer
    from seq2seq_attn.training.step import make_train_step

    run = RunConfig.load(model_dir)
    data = training_data(
        dataclasses.replace(run.data, sort_window=window),
        model_dir / "vocab",
        epoch_state,
        seed=run.train.seed,
        log=lambda line: None,
    )
    batches = [
        ((s.numpy(), t.numpy()), o.numpy())
        for (s, t), o in data.train.take(batch_count)
    ]
    _, model, _, _ = load_trained(model_dir, "latest")
    train_step = make_train_step(
        model,
        make_optimizer(run.train, data.steps_per_epoch),
        tf.distribute.get_strategy(),
        training_loss(run.train.label_smoothing),
        tf.Variable(0, dtype=tf.int64),
    )
    ids = tf.TensorSpec([None, None], tf.int32)
    stream = iter(
        tf.data.Dataset.from_generator(
            lambda: iter(batches), output_signature=((ids, ids), ids)
        ).prefetch(4)
    )
    return train_step, stream, batches


def seconds_per_step(train_step, stream, warm_up, count):
    """The mean time of `count` steps after `warm_up` (tracing) steps."""
    for _ in range(warm_up):
        train_step(stream)
    started = time.perf_counter()
    for _ in range(count):
        train_step(stream)
    return (time.perf_counter() - started) / count


def step_times(model_dir, window, count, work):
    """`(ms per step, target tokens per step, padding share)` of `count`
    steps on batches of sort window `window`."""
    train_step, stream, batches = prepared_step(
        model_dir, window, count + 3, work / f"epoch_{window}.json"
    )
    ms = 1000 * seconds_per_step(train_step, stream, 3, count)
    timed = batches[3:]
    tokens = statistics.mean(int((o != 0).sum()) for _, o in timed)
    padding = statistics.mean(
        1 - (t != 0).sum() / t.size for (_, t), _ in timed
    )
    return ms, tokens, padding


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.split("\n\n")[1])
    model_dir = pathlib.Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    label = sys.argv[3] if len(sys.argv) > 3 else ""
    from seq2seq_attn.config.run import RunConfig

    own = RunConfig.load(model_dir).data.sort_window
    windows = os.environ.get("WINDOWS", f"1,{own}")
    with tempfile.TemporaryDirectory() as work:
        for window in sorted({int(w) for w in windows.split(",")}):
            ms, tokens, padding = step_times(
                model_dir, window, count, pathlib.Path(work)
            )
            print(
                f"{label} {model_dir.name} window={window}: {ms:.1f} ms/step, "
                f"{1000 * tokens / ms:.1f} target tokens/s, "
                f"target padding {padding:.1%}",
                flush=True,
            )


if __name__ == "__main__":
    main()

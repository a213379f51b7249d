"""Training step time with and without XLA (`--jit_compile`), same batches.

    python benchmarks/jit_compile_speed.py \
        --flagfile=configs/multi30k/joey_match.flags [--batches=40] \
        [--bucket_width=10] [--rounds=2] [--data_dir=../shared/data]

Takes --batches batches of Multi30k train the way `--jit_compile` training
does (buckets every --bucket_width tokens, padded to the bucket's length),
compiles the forward and backward passes (no optimizer update) once for
every batch shape, both as an ordinary graph function and with XLA, then
times all the batches with each, alternating --rounds times. Prints the
compile time, the mean milliseconds per batch and target tokens per second
of each, and the ratio.
"""

import argparse
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flagfile", required=True)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--bucket_width", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    args = parser.parse_args()

    import keras
    import tensorflow as tf
    from multi30k_inputs import (
        encoded_train,
        first_batches,
        model_and_summed_loss,
    )

    from seq2seq_attn.data import make_dataset
    from seq2seq_attn.data.batching import bucket_boundaries_for
    from seq2seq_attn.train import run_config_from_flagfile

    run = run_config_from_flagfile(args.flagfile)
    data = run.data
    encoded, source, target = encoded_train(run, args.data_dir, "jit_vocab")
    width = args.bucket_width
    dataset = make_dataset(
        encoded,
        batch_size=data.batch_size,
        bucket_boundaries=bucket_boundaries_for(1022, width),  # as training
        pad_to_bucket_boundary=True,
        seed=run.train.seed,
    )
    batches, tokens = first_batches(dataset, args.batches)
    shapes = {tuple(b[0].shape) + (b[1].shape[1],) for b in batches}
    keras.utils.set_random_seed(run.train.seed)
    model, loss_fn = model_and_summed_loss(run, source, target)

    def step(source_ids, target_in, target_out):
        with tf.GradientTape() as tape:
            logits = model([source_ids, target_in], training=True)
            loss = loss_fn(target_out, logits)
        return loss, tape.gradient(loss, model.trainable_variables)

    functions = {
        "graph": tf.function(step),
        "XLA": tf.function(step, jit_compile=True),
    }
    print(
        f"{args.flagfile}: {model.count_params():,} parameters, "
        f"{len(batches)} batches, {len(shapes)} shapes, {tokens:,} target "
        f"tokens"
    )
    for name, function in functions.items():
        started = time.perf_counter()
        seen = set()
        for batch in batches:
            shape = tuple(batch[0].shape) + (batch[1].shape[1],)
            if shape not in seen:
                seen.add(shape)
                function(*batch)[0].numpy()
        print(
            f"{name}: traced/compiled in {time.perf_counter() - started:.1f} s"
        )

    times = {name: [] for name in functions}
    for _ in range(args.rounds):
        for name, function in functions.items():
            started = time.perf_counter()
            for batch in batches:
                function(*batch)[0].numpy()
            times[name].append(time.perf_counter() - started)
    for name, seconds in times.items():
        best = min(seconds)
        print(
            f"{name}: {1000 * best / len(batches):.0f} ms/batch, "
            f"{tokens / best:,.0f} target tokens/s (best of "
            f"{args.rounds}: {', '.join(f'{s:.1f}' for s in seconds)} s)"
        )
    ratio = min(times["graph"]) / min(times["XLA"])
    print(f"XLA / graph speed: {ratio:.2f}x")


if __name__ == "__main__":
    main()

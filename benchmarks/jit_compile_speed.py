"""Training step time with and without XLA (`--jit_compile`), same batches.

    python benchmarks/jit_compile_speed.py \
        --flagfile=configs/multi30k/joey_match.flags [--batches=40] \
        [--bucket_width=10] [--rounds=2] [--data_dir=../shared/data] \
        [--profile=12]

Takes --batches batches of Multi30k train the way `--jit_compile` training
does (buckets every --bucket_width tokens, padded to the bucket's length),
compiles the forward and backward passes (no optimizer update) once for
every batch shape, both as an ordinary graph function and with XLA, then
times all the batches with each, alternating --rounds times. Prints the
compile time, the mean milliseconds per batch and target tokens per second
of each, and the ratio. With --profile=N, also where each one's time goes:
the N kernels that take the most time per batch (TensorFlow's profiler,
summed over the threads, so they can add up to more than the wall time):
the graph's ops by op type, and XLA's compiled kernels (its dots, fusions,
copies, slices) by name, each counted without the kernels it calls.
"""

import argparse
import collections
import glob
import os
import pathlib
import re
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def kernel_times(function, batches):
    """`({kernel: milliseconds per batch}, kernels run per batch)` over one
    profiled pass of `batches`,
    each kernel's own time (the kernels it calls subtracted), summed over
    the threads. A graph op is named by its type; an XLA kernel by its HLO
    name without the numbers (`dot`, `add_tanh_fusion`, `copy`)."""
    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for batch in batches:
            function(*batch)[0].numpy()
        tf.profiler.experimental.stop()
        (path,) = glob.glob(f"{logdir}/plugins/profile/*/*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(pathlib.Path(path).read_bytes())
    times, count = collections.Counter(), 0
    for plane in space.planes:
        names = {key: meta.name for key, meta in plane.event_metadata.items()}
        for line in plane.lines:
            if line.name.startswith("tf_Compute"):  # graph ops, "name:type"
                for event in line.events:
                    name, _, op_type = names[event.metadata_id].rpartition(":")
                    if name and "::" not in names[event.metadata_id]:
                        times[op_type] += event.duration_ps
                        count += 1
            elif "Eigen" in line.name:  # XLA's kernels, nested in calls
                for name, own in _own_times(line.events, names):
                    times[re.sub(r"(\.\d+|\.clone)+$", "", name)] += own
                    count += 1
    milliseconds = {
        kernel: picoseconds / 1e9 / len(batches)
        for kernel, picoseconds in times.items()
    }
    return milliseconds, count / len(batches)


def _own_times(events, names):
    """(name, own duration) of each event of one thread's line: its
    duration less that of the events nested in it."""
    ordered = sorted(events, key=lambda e: (e.offset_ps, -e.duration_ps))
    own = [e.duration_ps for e in ordered]
    open_events = []  # indices of the events that enclose the current one
    for index, event in enumerate(ordered):
        while open_events and (
            ordered[open_events[-1]].offset_ps
            + ordered[open_events[-1]].duration_ps
            <= event.offset_ps
        ):
            open_events.pop()
        if open_events:
            own[open_events[-1]] -= event.duration_ps
        open_events.append(index)
    return [
        (names[e.metadata_id], t) for e, t in zip(ordered, own, strict=True)
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flagfile", required=True)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--bucket_width", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="also print the N kernels that take the most time in each",
    )
    args = parser.parse_args()

    import keras
    import tensorflow as tf
    from multi30k_inputs import (
        encoded_train,
        first_batches,
        model_and_summed_loss,
    )

    from seq2seq_attn.cli.train import run_config_from_flagfile
    from seq2seq_attn.data import make_dataset
    from seq2seq_attn.data.batching import bucket_boundaries_for

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
    for name, function in functions.items() if args.profile else ():
        kernels, count = kernel_times(function, batches)
        total = sum(kernels.values())
        wall = 1000 * min(times[name]) / len(batches)
        print(
            f"{name}: {total:.0f} ms of kernel time per batch "
            f"({total / wall:.2f}x its {wall:.0f} ms of wall time), "
            f"{count:,.0f} kernels, the most:"
        )
        for kernel in sorted(kernels, key=kernels.get)[::-1][: args.profile]:
            milliseconds = kernels[kernel]
            print(
                f"  {kernel:40s} {milliseconds:8.1f} ms "
                f"({100 * milliseconds / total:4.1f}%)"
            )


if __name__ == "__main__":
    main()

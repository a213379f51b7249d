"""Where the time of one search step goes, on a trained model.

    python benchmarks/profile_decoding.py --model_dir=runs/m30k_rnnsearch \
        [--beam_size=5] [--batch_size=64] [--precision=float32] \
        [--data_dir=../shared/data] [--ops=15]

Takes the middle batch of test2016 by source length (as `Translator` batches
it) and times, each as a traced function run 50 times after a warm-up:
  - the decoder step (embedding, recurrence, attention, vocabulary
    projection) for all B x K rows;
  - that, plus choosing each row's K best tokens and their log-probabilities
    (`top_candidates`, every row live);
and the whole search of the batch divided by its number of steps (where only
the live hypotheses take a step, and the beams are reordered): `beam_search`,
or `greedy_search` with `--beam_size=1`. The
parts read the weights cast once beforehand, as the search does (under
`--precision=bfloat16`). With `--ops=N`, also the N ops that take the most
time in the whole search (TensorFlow's profiler, summed over its compute
threads), which splits the step into its matmuls and the rest.
"""

import argparse
import collections
import glob
import os
import pathlib
import re
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def timed(function, repeats=50):
    function()  # trace
    started = time.perf_counter()
    for _ in range(repeats):
        function()
    return 1000 * (time.perf_counter() - started) / repeats


def op_times(function, repeats=5):
    """{"op name (type)": (milliseconds, count)} per call of `function`,
    from a TensorFlow profile of `repeats` calls, summed over the threads
    that run ops (so they can add up to more than the wall time)."""
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    function()  # trace
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        for _ in range(repeats):
            function()
        tf.profiler.experimental.stop()
        (path,) = glob.glob(f"{logdir}/plugins/profile/*/*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(pathlib.Path(path).read_bytes())
    times, counts = collections.Counter(), collections.Counter()
    for plane in space.planes:
        names = {key: meta.name for key, meta in plane.event_metadata.items()}
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):
                continue
            for event in line.events:
                # "name:type" for an op; others are spans around ops.
                full_name = names[event.metadata_id]
                name, _, op_type = full_name.rpartition(":")
                if not name or "::" in full_name:
                    continue
                name = re.sub(
                    r"while/body/_\d+/|in_model_precision_\d+/", "", name
                )
                op = f"{name} ({op_type})"
                times[op] += event.duration_ps / 1e9 / repeats
                counts[op] += 1 / repeats
    return {op: (times[op], round(counts[op])) for op in times}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--beam_size", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument(
        "--precision", default="float32", choices=("float32", "bfloat16")
    )
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument(
        "--ops",
        type=int,
        default=0,
        help="also list the N ops that take the most time in a search",
    )
    args = parser.parse_args()

    import numpy as np
    import tensorflow as tf
    from multi30k_inputs import test2016

    from seq2seq_attn.data import BOS_ID
    from seq2seq_attn.decoding.beam_search import beam_search
    from seq2seq_attn.decoding.greedy_search import greedy_search
    from seq2seq_attn.decoding.search_step import top_candidates
    from seq2seq_attn.model_dir import load_translator
    from seq2seq_attn.models.inference import map_rows

    _, test = test2016(args.model_dir, args.data_dir)
    translator = load_translator([args.model_dir], precision=args.precision)
    rows = sorted(
        (row.numpy() for row in translator.encode(test.sources)), key=len
    )
    middle = len(rows) // 2
    chunk = rows[middle - args.batch_size // 2 : middle + args.batch_size // 2]
    source = np.zeros((len(chunk), max(map(len, chunk))), "int32")
    for r, row in enumerate(chunk):
        source[r, : len(row)] = row
    form, k = translator.form, args.beam_size
    n = len(chunk) * k
    encoded, state = form.encode(tf.constant(source))
    tile = lambda x: tf.repeat(x, k, axis=0)  # noqa: E731
    encoded = map_rows(tile, encoded)
    state = tf.nest.map_structure(tile, state)
    tokens = tf.fill([n], BOS_ID)
    live = tf.ones([n], tf.bool)

    @tf.function
    def decoder_step():
        return form.step(tokens, 0, state, encoded)[0]

    @tf.function
    def step_and_best_tokens():
        return top_candidates(form, tokens, 0, state, encoded, k, live)[0]

    @tf.function
    def search():
        if k == 1:
            result = greedy_search(form, tf.constant(source))
        else:
            # All K hypotheses: the longest of them took the last step.
            result = beam_search(
                form, tf.constant(source), beam_size=k, nbest=k
            )
        return tf.reduce_max(result.lengths)

    search()  # trace
    started = time.perf_counter()
    repeats = 5
    for _ in range(repeats):
        steps = int(search())
    whole = (time.perf_counter() - started) / repeats
    # Traced inside the context: the functions capture the cast weights.
    with form.weights_cast_once():
        step = timed(decoder_step)
        with_best = timed(step_and_best_tokens)
    print(
        f"{args.model_dir}, {args.precision}: batch of {len(chunk)} "
        f"sentences x {k} beams = {n} rows, source length {source.shape[1]}"
    )
    print(
        f"decoder step with the vocabulary projection, {n} rows: {step:.2f} ms"
    )
    print(f"K best tokens, log-probabilities: {with_best - step:.2f} ms")
    print(
        f"whole search: {1000 * whole:.0f} ms for {steps} steps = "
        f"{1000 * whole / steps:.2f} ms per step (only live hypotheses take "
        f"a step{'; beams reordered' if k > 1 else ''})"
    )
    if args.ops:
        times = op_times(search)
        total = sum(ms for ms, _ in times.values())
        print(
            f"op time per search step, summed over TensorFlow's threads: "
            f"{total / steps:.2f} ms"
        )
        ranked = sorted(times.items(), key=lambda item: -item[1][0])
        for op, (ms, count) in ranked[: args.ops]:
            print(
                f"  {ms / steps:6.2f} ms per step ({100 * ms / total:4.1f}%): "
                f"{op}{f' x {count // steps}' if count >= 2 * steps else ''}"
            )


if __name__ == "__main__":
    main()

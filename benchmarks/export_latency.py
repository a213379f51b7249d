"""Latency and throughput of an exported SavedModel, loaded the way a server
would load it (only tensorflow and tensorflow_text imported).

    python benchmarks/export_latency.py --export=exports/m30k_rnnsearch/1 \
        [--data_dir=../shared/data] [--requests=200] \
        [--batch_sizes=64,256,1024,4096]

Prints the p50 and p95 latency of `serving_default` for one sentence (the
first `--requests` sentences of Multi30k test2016, one request each), the
throughput in sentences/s at batch 64 over the 1,000 test sentences, and
then, for each of `--batch_sizes`, the throughput of requests of that many
sentences (test2016 repeated as needed, at least 1,024 sentences in all)
and its ratio to batch 64's: a server should not slow down per sentence
when a client sends a large batch.
"""

import argparse
import gzip
import os
import pathlib
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402, F401  (registers the TF Text ops)

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--export", required=True)
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--language", default="en")
    parser.add_argument("--batch_sizes", default="64,256,1024,4096")
    args = parser.parse_args()

    name = f"test_2016_flickr.lc.norm.tok.{args.language}.gz"
    with gzip.open(
        pathlib.Path(args.data_dir) / "multi30k" / "tok" / name, "rt"
    ) as f:
        sentences = [line.rstrip("\n") for line in f]
    serve = tf.saved_model.load(args.export).signatures["serving_default"]
    serve(text=tf.constant(sentences[:1]))  # warm-up
    serve(text=tf.constant(sentences[:64]))

    latencies = []
    for sentence in sentences[: args.requests]:
        started = time.perf_counter()
        serve(text=tf.constant([sentence]))
        latencies.append(time.perf_counter() - started)
    p50, p95 = np.percentile(latencies, [50, 95]) * 1000

    started = time.perf_counter()
    for start in range(0, len(sentences), 64):
        serve(text=tf.constant(sentences[start : start + 64]))
    throughput = len(sentences) / (time.perf_counter() - started)
    print(
        f"{args.export}: one sentence p50 {p50:.0f} ms, p95 {p95:.0f} ms "
        f"({args.requests} requests); batch 64: {throughput:.1f} sentences/s "
        f"({len(sentences)} sentences)",
        flush=True,
    )
    base = None
    for size in map(int, args.batch_sizes.split(",")):
        speed = batch_throughput(serve, sentences, size)
        base = base or speed
        print(
            f"batch {size}: {speed:.1f} sentences/s, "
            f"{speed / base:.2f}x the first batch size's",
            flush=True,
        )


def batch_throughput(serve, sentences, size, at_least=1024):
    """Sentences/s of requests of `size` sentences, over at least
    `at_least` sentences."""
    request = [sentences[i % len(sentences)] for i in range(size)]
    calls = max(1, -(-at_least // size))
    started = time.perf_counter()
    for _ in range(calls):
        serve(text=tf.constant(request))
    return calls * size / (time.perf_counter() - started)


if __name__ == "__main__":
    main()

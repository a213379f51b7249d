"""Padding and throughput of the `tf.data` pipeline on Multi30k train.

    python benchmarks/data_pipeline.py [--data_dir ../shared/data]

Prints, for batches of 80 sentences (Bahdanau B.2) unsorted, sorted in
windows of 20 batches, bucketed by length, and batched by tokens: the share of
padded positions over an epoch and the pipeline's throughput in sentences/s;
then the sentences/s that training an RNNsearch consumes on this machine, and
the ratio of the two.
"""

import argparse
import os
import pathlib
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from seq2seq_attn.data import (  # noqa: E402
    WordTokenizer,
    encode_corpus,
    load_corpus,
    make_dataset,
    padding_fraction,
)
from seq2seq_attn.models import ModelConfig, build_model  # noqa: E402

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def epoch_rate(dataset):
    """Sentences per second over one full epoch (after one warm-up batch)."""
    iterator = iter(dataset)
    next(iterator)
    sentences, started = 0, time.perf_counter()
    for (source, _), _ in iterator:
        sentences += int(source.shape[0])
    return sentences / (time.perf_counter() - started)


def training_rate(encoded, vocab_sizes, steps):
    """Sentences per second consumed by RNNsearch training steps."""
    config = ModelConfig(
        architecture="rnnsearch",
        source_vocab_size=vocab_sizes[0],
        target_vocab_size=vocab_sizes[1],
        embedding_dim=256,
        hidden_units=256,
        attention_units=256,
        maxout_units=256,
        initializer="glorot",
    )
    model = build_model(config)
    model.compile(
        optimizer=keras.optimizers.Adam(3e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=0
        ),
    )
    dataset = make_dataset(encoded, batch_size=80, sort_window=20).repeat()
    model.fit(dataset, steps_per_epoch=5, epochs=1, verbose=0)  # trace
    started = time.perf_counter()
    model.fit(dataset, steps_per_epoch=steps, epochs=1, verbose=0)
    return steps * 80 / (time.perf_counter() - started), config


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
    parser.add_argument("--train_steps", type=int, default=30)
    args = parser.parse_args()

    corpus = load_corpus(
        "multi30k", "train", "en", "de", variant="tok", data_dir=args.data_dir
    )
    print(corpus.report.summary())
    vocab = pathlib.Path(tempfile.mkdtemp())
    source = WordTokenizer.build(corpus.sources, vocab / "en", max_size=30000)
    target = WordTokenizer.build(corpus.targets, vocab / "de", max_size=30000)
    started = time.perf_counter()
    encoded = encode_corpus(corpus, source, target, 50, 50)
    print(
        f"{encoded.report.summary()} "
        f"(tokenized in {time.perf_counter() - started:.2f} s)"
    )

    print("\n| batching | padding | pipeline sentences/s |\n|---|---:|---:|")
    layouts = {
        "80 sentences, unsorted": dict(sort_window=1),
        "80 sentences, sorted in windows of 20 (Bahdanau B.2)": dict(
            sort_window=20
        ),
        "80 sentences, buckets every 2 tokens": dict(
            bucket_boundaries=list(range(3, 52, 2))
        ),
        "about 2,000 tokens per batch": dict(
            batch_by="tokens", batch_size=2000
        ),
    }
    rates = {}
    for name, options in layouts.items():
        dataset = make_dataset(encoded, seed=0, **{"batch_size": 80, **options})
        rates[name] = epoch_rate(dataset)
        padding = padding_fraction(dataset)
        print(f"| {name} | {padding:.1%} | {rates[name]:,.0f} |")

    rate, config = training_rate(
        encoded, (source.vocab_size, target.vocab_size), args.train_steps
    )
    slowest = min(rates.values())
    print(
        f"\nRNNsearch training (embeddings {config.embedding_dim}, "
        f"n = {config.hidden_units}, batch 80, sorted windows): "
        f"{rate:.1f} sentences/s consumed; the slowest pipeline layout gives "
        f"{slowest:,.0f} sentences/s, {slowest / rate:,.0f} times as many"
    )


if __name__ == "__main__":
    main()

"""What several benchmarks set up the same way: a flagfile's Multi30k
training pairs, vocabularies and model, or a trained model's test2016."""

import os
import pathlib


def encoded_train(run, data_dir, vocab_name):
    """Multi30k train for `run` (a `RunConfig`), encoded with word
    vocabularies of its sizes, built under $TMPDIR/`vocab_name`.

    Returns:
        `(encoded, source_tokenizer, target_tokenizer)`.
    """
    from seq2seq_attn.data import WordTokenizer, encode_corpus, load_corpus

    data = run.data
    train = load_corpus(
        "multi30k",
        "train",
        data.source,
        data.target,
        variant=data.variant,
        data_dir=data_dir,
    )
    work = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / vocab_name
    source = WordTokenizer.build(
        train.sources, work / "source", max_size=data.source_vocab_size
    )
    target = WordTokenizer.build(
        train.targets, work / "target", max_size=data.target_vocab_size
    )
    encoded = encode_corpus(
        train, source, target, data.max_source_length, data.max_target_length
    )
    return encoded, source, target


def first_batches(dataset, count):
    """`(batches, target_tokens)`: the first `count` batches of a dataset
    from `make_dataset`, as `(source, target_in, target_out)` triples."""
    import tensorflow as tf

    batches = [
        (source_ids, target_in, target_out)
        for (source_ids, target_in), target_out in dataset.take(count)
    ]
    tokens = sum(
        int(tf.reduce_sum(tf.cast(b[2] != 0, tf.int32))) for b in batches
    )
    return batches, tokens


def model_and_summed_loss(run, source, target):
    """The model of `run` sized to the vocabularies, and the summed masked
    token cross-entropy the trainer uses."""
    import keras

    from seq2seq_attn.models.builder import build_model

    model = build_model(
        run.model.replace(
            source_vocab_size=source.vocab_size,
            target_vocab_size=target.vocab_size,
        )
    )
    loss_fn = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=0, reduction="sum"
    )
    return model, loss_fn


def test2016(model_dir, data_dir):
    """`(data_config, corpus)`: Multi30k test2016 in the languages and
    variant a trained model was trained on."""
    from seq2seq_attn.config.run import RunConfig
    from seq2seq_attn.data import load_corpus

    data = RunConfig.load(model_dir).data
    corpus = load_corpus(
        "multi30k",
        "test2016",
        data.source,
        data.target,
        variant=data.variant,
        data_dir=data_dir,
    )
    return data, corpus

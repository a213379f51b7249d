"""Where the training time of a flagfile's model goes, on real batches.

    python benchmarks/profile_training.py \
        --flagfile=configs/multi30k/joey_match.flags [--batches=30] \
        [--mixed_precision=mixed_bfloat16] [--data_dir=../shared/data]

Builds the flagfile's model and vocabularies from Multi30k train, takes
--batches batches the way training does (sorted windows), and prints the
mean milliseconds per batch of, each after a warm-up pass:
  - the training step: forward, loss, gradients (no optimizer update), on
    the real target positions only (`packed_model`), as the trainer does
    without XLA;
  - the forward pass alone;
  - the output layer alone (RNNsearch's maxout deep output or Luong's
    softmax projection, with the loss and all its gradients) on inputs of
    the same shapes (one row per real target position);
so that the rest (embeddings, encoder, attention and the recurrences) is the
difference.
"""

import argparse
import functools
import os
import pathlib
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"


def timed(function, batches):
    function(*batches[0])  # trace
    times = []
    for batch in batches:
        started = time.perf_counter()
        function(*batch)
        times.append(time.perf_counter() - started)
    return 1000 * statistics.mean(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flagfile", required=True)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--mixed_precision", default="")
    parser.add_argument("--data_dir", default=str(DEFAULT_DATA))
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
    from seq2seq_attn.models import packed_model
    from seq2seq_attn.models.shared_layers import real_target_positions

    if args.mixed_precision:
        keras.mixed_precision.set_global_policy(args.mixed_precision)
    run = run_config_from_flagfile(args.flagfile)
    data = run.data
    encoded, source, target = encoded_train(run, args.data_dir, "profile_vocab")
    dataset = make_dataset(
        encoded,
        batch_size=data.batch_size,
        sort_window=data.sort_window,
        seed=run.train.seed,
    )
    batches, tokens = first_batches(dataset, args.batches)
    model, loss_fn = model_and_summed_loss(run, source, target)
    packed = packed_model(model)

    ids = tf.TensorSpec([None, None], tf.int32)
    compiled = tf.function(input_signature=[ids, ids, ids])

    @compiled
    def step(source_ids, target_in, target_out):
        with tf.GradientTape() as tape:
            logits = packed([source_ids, target_in], training=True)
            loss = loss_fn(labels(target_in, target_out), logits)
        return tape.gradient(loss, model.trainable_variables)

    @compiled
    def forward(source_ids, target_in, target_out):
        return loss_fn(
            labels(target_in, target_out),
            packed([source_ids, target_in], training=True),
        )

    names = {layer.name for layer in model.layers}
    if "deep_output" in names:
        head = model.get_layer("deep_output")
    elif "output_projection" in names:
        head = model.get_layer("output_projection")
    else:  # --tie_embeddings: the target embedding read backwards
        tied = model.get_layer("target_embedding")
        head = functools.partial(tied, reverse=True)
        head.name = "output_projection"
        head.trainable_variables = tied.trainable_variables
    dtype = keras.mixed_precision.global_policy().compute_dtype
    config = run.model

    def labels(target_in, target_out):
        return real_target_positions(target_in, target_out)[0]

    def head_inputs(target_in):
        rows = tf.reduce_sum(tf.cast(target_in != 0, tf.int32))
        if head.name == "deep_output":
            widths = [
                config.hidden_units,
                config.embedding_dim,
                2 * config.encoder_size,
            ]
        else:
            widths = [config.hidden_units]
        return [
            tf.random.normal([rows, width], dtype=dtype) for width in widths
        ]

    @compiled
    def output_layer(source_ids, target_in, target_out):
        inputs = head_inputs(target_in)
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            loss = loss_fn(labels(target_in, target_out), head(*inputs))
        return tape.gradient(loss, [*head.trainable_variables, *inputs])

    full = timed(step, batches)
    forward_ms = timed(forward, batches)
    head_ms = timed(output_layer, batches)
    print(
        f"{args.flagfile} ({args.mixed_precision or 'float32'}): "
        f"{model.count_params():,} parameters, {len(batches)} batches of "
        f"{data.batch_size}, {tokens / len(batches):.0f} target tokens each"
    )
    print(f"training step (forward + gradients): {full:7.1f} ms/batch")
    print(f"  forward pass only:                 {forward_ms:7.1f} ms/batch")
    print(
        f"  output layer + loss + gradients:   {head_ms:7.1f} ms/batch "
        f"({100 * head_ms / full:.0f}%)"
    )
    print(
        f"  the rest (encoder, attention, recurrences): "
        f"{full - head_ms:7.1f} ms/batch ({100 * (full - head_ms) / full:.0f}%)"
    )


if __name__ == "__main__":
    main()

"""`python -m seq2seq_attn.demo`: a small model learns to reverse sequences.

A first look at the package that needs no data: it builds a small model of
either paper, trains it on random sequences to output them reversed, decodes
a few held-out ones greedily with the inference form (encoder plus one
decoder step) and prints their alignments, which should lie on the
anti-diagonal.
"""

import time

import numpy as np
from absl import flags

from seq2seq_attn import cli
from seq2seq_attn.special_tokens import BOS_ID as BOS
from seq2seq_attn.special_tokens import EOS_ID as EOS
from seq2seq_attn.special_tokens import PAD_ID

FLAGS = flags.FLAGS
flags.DEFINE_enum(
    "architecture", "rnnsearch", ["rnnsearch", "rnnencdec", "luong"], "Model."
)
flags.DEFINE_integer("pairs", 2000, "Training sequences.")
flags.DEFINE_integer("epochs", 8, "Passes over the training sequences.")
flags.DEFINE_integer(
    "vocab_size", 24, "Vocabulary size, reserved ids included."
)
flags.DEFINE_integer("max_length", 9, "Longest sequence.")
flags.DEFINE_integer("seed", 0, "Random seed.")


def reversal_data(rng, pairs, vocab_size, max_length):
    """Random sequences and their reversals, as padded model inputs."""
    source = np.zeros((pairs, max_length), "int32")
    target_in = np.zeros((pairs, max_length + 1), "int32")
    target_out = np.zeros((pairs, max_length + 1), "int32")
    for row in range(pairs):
        length = rng.integers(3, max_length + 1)
        words = rng.integers(4, vocab_size, size=length)
        source[row, :length] = words
        target_in[row, 0] = BOS
        target_in[row, 1 : length + 1] = words[::-1]
        target_out[row, :length] = words[::-1]
        target_out[row, length] = EOS
    return source, target_in, target_out


def greedy(form, source, max_steps):
    """Greedy decoding with the inference form; returns tokens, alignments."""
    encoded, state = form.encode(source)
    tokens = np.full((source.shape[0],), BOS, "int32")
    outputs, alignments = [], []
    for step in range(max_steps):
        logits, alignment, state = form.step(tokens, step, state, encoded)
        tokens = np.asarray(logits).argmax(-1).astype("int32")
        outputs.append(tokens)
        alignments.append(np.asarray(alignment))
    return np.stack(outputs, 1), np.stack(alignments, 1)


def show_alignment(source, output, alignment):
    """The alignment as characters, darker for more weight."""
    shades = " .:-=+*#%@"
    source = [int(x) for x in source if x]
    lines = ["      " + " ".join(f"{x:>3}" for x in source)]
    for step, token in enumerate(output):
        row = alignment[step, : len(source)]
        cells = " ".join(f"  {shades[min(9, int(w * 10))]}" for w in row)
        lines.append(f"{int(token):>4}  {cells}")
        if token == EOS:
            break
    return "\n".join(lines)


def main(argv):
    del argv
    import keras

    from seq2seq_attn.models import InferenceForm, ModelConfig, build_model

    keras.utils.set_random_seed(FLAGS.seed)
    rng = np.random.default_rng(FLAGS.seed)
    source, target_in, target_out = reversal_data(
        rng, FLAGS.pairs, FLAGS.vocab_size, FLAGS.max_length
    )
    config = ModelConfig(
        architecture=FLAGS.architecture,
        source_vocab_size=FLAGS.vocab_size,
        target_vocab_size=FLAGS.vocab_size,
        embedding_dim=32,
        hidden_units=64,
        attention_units=64,
        maxout_units=32,
        num_layers=1,
        initializer="glorot",
    )
    model = build_model(config)
    model.summary()
    model.compile(
        optimizer=keras.optimizers.Adam(0.005),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD_ID
        ),
    )
    started = time.time()
    model.fit(
        (source, target_in),
        target_out,
        batch_size=64,
        epochs=FLAGS.epochs,
        verbose=2,
    )
    print(f"trained in {time.time() - started:.0f} s")

    test_source, _, test_out = reversal_data(
        rng, 200, FLAGS.vocab_size, FLAGS.max_length
    )
    outputs, alignments = greedy(
        InferenceForm(model), test_source, FLAGS.max_length + 1
    )
    correct = [
        np.array_equal(
            out[: list(ref).index(EOS) + 1], ref[: list(ref).index(EOS) + 1]
        )
        for out, ref in zip(outputs, test_out, strict=True)
    ]
    print(f"held-out sequences reversed exactly: {np.mean(correct):.1%}")
    if config.architecture != "rnnencdec":
        for row in range(2):
            print(
                show_alignment(test_source[row], outputs[row], alignments[row])
            )


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()

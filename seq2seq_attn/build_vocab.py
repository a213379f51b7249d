"""`python -m seq2seq_attn.build_vocab`: learn source and target tokenizers.

    python -m seq2seq_attn.build_vocab --corpus=multi30k --variant=tok \
        --source=en --target=de --tokenizer=word --vocab_size=30000 \
        --output_dir=vocab/multi30k_en_de

writes `OUTPUT_DIR/source/` and `OUTPUT_DIR/target/` (each loadable with
`seq2seq_attn.data.load_tokenizer`) from the training split, and prints what
was read and, for named corpora, the <unk> rate on the validation split.
"""

import pathlib

from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus", None, "Named corpus: multi30k or anki.")
flags.DEFINE_string("split", "train", "Split to learn from.")
flags.DEFINE_string("source", None, "Source language code, e.g. en.")
flags.DEFINE_string("target", None, "Target language code, e.g. de.")
flags.DEFINE_enum("variant", "raw", ["raw", "tok"], "multi30k: raw or tok.")
flags.DEFINE_string("source_file", None, "Line-aligned source text.")
flags.DEFINE_string("target_file", None, "Line-aligned target text.")
flags.DEFINE_string("tsv_file", None, "Tab-separated pairs (.txt, .gz, .zip).")
flags.DEFINE_string("data_dir", None, "Local corpus directory (no download).")
flags.DEFINE_enum(
    "invalid_utf8", "error", ["error", "replace", "skip"], "Invalid UTF-8."
)
flags.DEFINE_enum(
    "tokenizer",
    "sentencepiece",
    ["word", "wordpiece", "sentencepiece"],
    "sentencepiece (raw text), wordpiece, or word (pre-tokenised text).",
)
flags.DEFINE_integer(
    "vocab_size", 30000, "Entries per side, reserved included."
)
flags.DEFINE_integer(
    "target_vocab_size", None, "Target entries, if not --vocab_size."
)
flags.DEFINE_bool(
    "lowercase",
    False,
    "Lowercase (word, wordpiece) or case-fold (sentencepiece).",
)
flags.DEFINE_string("output_dir", None, "Where to write source/ and target/.")
flags.mark_flag_as_required("output_dir")


def main(argv):
    del argv
    from seq2seq_attn.data.corpora import open_corpus
    from seq2seq_attn.data.tokenizers import build_tokenizer, unk_rate

    options = dict(
        corpus=FLAGS.corpus,
        source=FLAGS.source,
        target=FLAGS.target,
        variant=FLAGS.variant,
        data_dir=FLAGS.data_dir,
        invalid_utf8=FLAGS.invalid_utf8,
    )
    corpus = open_corpus(
        split=FLAGS.split,
        source_file=FLAGS.source_file,
        target_file=FLAGS.target_file,
        tsv_file=FLAGS.tsv_file,
        **options,
    )
    print(corpus.report.summary())
    output = pathlib.Path(FLAGS.output_dir)
    sizes = {
        "source": FLAGS.vocab_size,
        "target": FLAGS.target_vocab_size or FLAGS.vocab_size,
    }
    texts = {"source": corpus.sources, "target": corpus.targets}
    tokenizers = {}
    for side in ("source", "target"):
        tokenizers[side] = build_tokenizer(
            FLAGS.tokenizer,
            texts[side],
            output / side,
            sizes[side],
            lowercase=FLAGS.lowercase,
        )
        print(
            f"{side}: {FLAGS.tokenizer} tokenizer, "
            f"{tokenizers[side].vocab_size} entries, in {output / side}"
        )
    if FLAGS.corpus:
        validation = open_corpus(split="val", **options)
        for side, held_out in (
            ("source", validation.sources),
            ("target", validation.targets),
        ):
            rate = unk_rate(tokenizers[side], held_out)
            print(f"{side} <unk> rate on {FLAGS.corpus} val: {rate:.2%}")


if __name__ == "__main__":
    app.run(main)

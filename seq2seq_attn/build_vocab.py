"""`python -m seq2seq_attn.build_vocab`: learn source and target tokenizers.

    python -m seq2seq_attn.build_vocab --corpus=multi30k --variant=tok \
        --source=en --target=de --tokenizer=word --vocab_size=30000 \
        --output_dir=vocab/multi30k_en_de

writes `OUTPUT_DIR/source/` and `OUTPUT_DIR/target/` (each loadable with
`seq2seq_attn.data.load_tokenizer`, and what `train --vocab_dir` takes) from
a seeded sample of at most `--sample_lines` training pairs spread over the
whole corpus, read as the trainer reads it (a pre-pass over the files, then
the sampled lines only). Prints what was read and the <unk> rate on the
validation pairs (of a named corpus or TFDS dataset).
"""

import pathlib
import sys

from absl import app, flags

from seq2seq_attn import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("corpus", None, "Named corpus: multi30k or anki.")
flags.DEFINE_string("source", None, "Source language code, e.g. en.")
flags.DEFINE_string("target", None, "Target language code, e.g. de.")
flags.DEFINE_enum("variant", "raw", ["raw", "tok"], "multi30k: raw or tok.")
flags.DEFINE_string(
    "source_file", None, "Line-aligned source text (several: comma-separated)."
)
flags.DEFINE_string(
    "target_file", None, "Line-aligned target text (several: comma-separated)."
)
flags.DEFINE_string(
    "tsv_file", None, "Tab-separated pairs (.txt or .gz; comma-separated)."
)
flags.DEFINE_string(
    "tfds_dataset",
    None,
    "A TFDS translation dataset (its train split), e.g. wmt14_translate/de-en.",
)
flags.DEFINE_string(
    "data_dir", None, "Local corpus directory (no download); TFDS's, too."
)
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
flags.DEFINE_bool(
    "split_punctuation",
    False,
    "word: also split at punctuation (the papers' shortlists on raw text).",
)
flags.DEFINE_integer(
    "sample_lines",
    1_000_000,
    "Learn from at most this many pairs, a seeded sample of the corpus.",
)
flags.DEFINE_string("output_dir", None, "Where to write source/ and target/.")
flags.mark_flag_as_required("output_dir")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    from seq2seq_attn.data.download import DownloadError

    try:
        build_from_flags()
    except (ValueError, FileNotFoundError, DownloadError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def build_from_flags():
    """Samples the corpus the flags name and writes its vocabularies."""
    from seq2seq_attn.data.tokenizers import unk_rate
    from seq2seq_attn.data.training_data import (
        build_vocabularies,
        parallel_text,
        validation_corpus,
    )
    from seq2seq_attn.training.config import DataConfig

    data = DataConfig(
        corpus=FLAGS.corpus,
        source=FLAGS.source or "en",
        target=FLAGS.target or "de",
        variant=FLAGS.variant,
        train_source_file=FLAGS.source_file,
        train_target_file=FLAGS.target_file,
        train_tsv_file=FLAGS.tsv_file,
        tfds_dataset=FLAGS.tfds_dataset,
        data_dir=FLAGS.data_dir,
        invalid_utf8=FLAGS.invalid_utf8,
        tokenizer=FLAGS.tokenizer,
        source_vocab_size=FLAGS.vocab_size,
        target_vocab_size=FLAGS.target_vocab_size or FLAGS.vocab_size,
        lowercase=FLAGS.lowercase,
        split_punctuation=FLAGS.split_punctuation,
        vocab_sample_lines=FLAGS.sample_lines,
    )
    text = parallel_text(data)
    scan = text.scan(data.invalid_utf8)
    print(scan.summary(data.invalid_utf8))
    sample = text.sample(FLAGS.sample_lines, seed=0, lines=scan.pairs)
    print(f"sampled {len(sample[0]):,} of {scan.pairs:,} pairs")
    output = pathlib.Path(FLAGS.output_dir)
    tokenizers = build_vocabularies(data, output, sample)
    validation = validation_corpus(data)
    if validation is not None:
        for tokenizer, side, held_out in zip(
            tokenizers,
            ("source", "target"),
            (validation.sources, validation.targets),
            strict=True,
        ):
            rate = unk_rate(tokenizer, held_out)
            print(f"{side} <unk> rate on the validation pairs: {rate:.2%}")


if __name__ == "__main__":
    cli.run(main)

"""`python -m seq2seq_attn.build_vocab`: learn source and target tokenizers.

    python -m seq2seq_attn.build_vocab --corpus=multi30k --variant=tok \
        --source=en --target=de --tokenizer=word --vocab_size=30000 \
        --output_dir=vocab/multi30k_en_de

writes `OUTPUT_DIR/source/` and `OUTPUT_DIR/target/` (each loadable with
`seq2seq_attn.data.load_tokenizer`, and what `train --vocab_dir` takes) from
a seeded sample of at most `--vocab_sample_lines` training pairs spread
over the whole corpus, read as the trainer reads it (a pre-pass over the
files, then the sampled lines only) and built by the trainer's own function.
Its flags are the train CLI's data flags (names, defaults and help; the
older `--source_file`, `--target_file`, `--tsv_file` and `--sample_lines`
still work), and `--vocab_size` sets both sides; `--joint_vocab` builds one
vocabulary from both sides' text and writes it as both (what
`--tie_embeddings=all` trains with). Prints what was read and
the <unk> rate on the validation pairs (of a named corpus, a TFDS dataset,
or `--valid_source_file`/`--valid_target_file`).
"""

import pathlib
import sys

from absl import app, flags

from seq2seq_attn import cli
from seq2seq_attn.cli import config_flags
from seq2seq_attn.config.run import DataConfig
from seq2seq_attn.data.download import DownloadError
from seq2seq_attn.data.sources import parallel_text, validation_corpus
from seq2seq_attn.data.tokenizers import unk_rate
from seq2seq_attn.data.vocabularies import vocabularies_of_text

FLAGS = flags.FLAGS
# The fields of `DataConfig` that say what is read and how it is tokenized:
# flags of the same names, defaults and help as the train CLI's.
VOCABULARY_FIELDS = (
    "corpus",
    "source",
    "target",
    "variant",
    "train_source_file",
    "train_target_file",
    "train_tsv_file",
    "tfds_dataset",
    "valid_source_file",
    "valid_target_file",
    "data_dir",
    "invalid_utf8",
    "tokenizer",
    "source_vocab_size",
    "target_vocab_size",
    "joint_vocab",
    "lowercase",
    "split_punctuation",
    "vocab_sample_lines",
    "sentencepiece_max_characters",
)
config_flags.define_config_flags(
    {"data": DataConfig}, __name__, only={"data": VOCABULARY_FIELDS}
)
# The names this command had before it shared the train CLI's.
flags.DEFINE_alias("source_file", "train_source_file")
flags.DEFINE_alias("target_file", "train_target_file")
flags.DEFINE_alias("tsv_file", "train_tsv_file")
flags.DEFINE_alias("sample_lines", "vocab_sample_lines")
flags.DEFINE_integer(
    "vocab_size",
    None,
    "Entries per side, reserved included: sets --source_vocab_size, and "
    "--target_vocab_size where that is not given.",
)
flags.DEFINE_string("output_dir", None, "Where to write source/ and target/.")
flags.mark_flag_as_required("output_dir")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    try:
        build_from_flags()
    except (ValueError, FileNotFoundError, DownloadError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def data_config_from_flags():
    """The `DataConfig` of the vocabulary flags."""
    values = {name: FLAGS[name].value for name in VOCABULARY_FIELDS}
    if FLAGS.vocab_size is not None:
        values["source_vocab_size"] = FLAGS.vocab_size
        if not FLAGS["target_vocab_size"].present:
            values["target_vocab_size"] = FLAGS.vocab_size
    config_flags.resolve_corpus(values)
    return DataConfig(**values)


def build_from_flags():
    """Samples the corpus the flags name and writes its vocabularies, as
    the trainer's chief would (`vocabularies.vocabularies_of_text`)."""
    data = data_config_from_flags()
    text = parallel_text(data)
    scan = text.scan(data.invalid_utf8)
    print(scan.summary(data.invalid_utf8))
    output = pathlib.Path(FLAGS.output_dir)
    tokenizers = vocabularies_of_text(data, text, scan.pairs, output)
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


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()

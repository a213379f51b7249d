"""The flags of the commands that translate with trained model directories
(translate, evaluate): the models, their input, and the search
(`search_flags`)."""

from absl import flags

from seq2seq_attn.cli import search_flags

FLAGS = flags.FLAGS
flags.DEFINE_list(
    "model_dir", None, "Model directory, or several for an ensemble."
)
flags.DEFINE_enum("checkpoint", "best", ["best", "latest"], "Which checkpoint.")
flags.DEFINE_bool(
    "replace_unk", False, "Replace <unk> by the attended source word."
)
flags.DEFINE_string(
    "unk_dictionary", None, "source<TAB>target word dictionary."
)
flags.DEFINE_enum(
    "precision",
    "float32",
    ["float32", "bfloat16", "float16"],
    "Compute precision; bfloat16 uses the CPU's AMX/AVX-512 BF16 units.",
)
flags.DEFINE_enum(
    "invalid_utf8",
    "error",
    ["error", "replace", "skip"],
    "A line of invalid UTF-8 in the input: an error, replaced (U+FFFD), or "
    "skipped (evaluate drops the pair; translate writes an empty line).",
)
flags.mark_flag_as_required("model_dir")


def translator_from_flags(command):
    """The `Translator` the flags describe, for `command`."""
    from seq2seq_attn.decoding.unk_replacement import load_dictionary
    from seq2seq_attn.model_dir import load_translator

    dictionary = None
    if FLAGS.unk_dictionary:
        dictionary = load_dictionary(FLAGS.unk_dictionary)
    return load_translator(
        FLAGS.model_dir,
        FLAGS.checkpoint,
        precision=FLAGS.precision,
        search=search_flags.search_config_from_flags(command),
        replace_unk=FLAGS.replace_unk,
        dictionary=dictionary,
    )

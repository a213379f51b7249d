"""The search flags shared by the translate and evaluate CLIs."""

from absl import flags

FLAGS = flags.FLAGS
flags.DEFINE_list(
    "model_dir", None, "Model directory, or several for an ensemble."
)
flags.DEFINE_enum("checkpoint", "best", ["best", "latest"], "Which checkpoint.")
flags.DEFINE_integer("beam_size", 5, "Beam width; 1 is greedy search.")
flags.DEFINE_enum(
    "length_penalty", "average", ["none", "average", "gnmt"], "Length scoring."
)
flags.DEFINE_float("alpha", 0.75, "Length penalty exponent.")
flags.DEFINE_float("beta", 0.0, "Coverage penalty weight (GNMT).")
flags.DEFINE_integer("nbest", 1, "Hypotheses per sentence (<= beam_size).")
flags.DEFINE_bool(
    "replace_unk", False, "Replace <unk> by the attended source word."
)
flags.DEFINE_string(
    "unk_dictionary", None, "source<TAB>target word dictionary."
)
flags.DEFINE_float("max_length_a", 1.5, "Output limit: a * source length + b.")
flags.DEFINE_float("max_length_b", 5, "Output limit: a * source length + b.")
flags.DEFINE_integer(
    "max_input_tokens", 100, "Cut longer inputs to this many tokens (0: none)."
)
flags.DEFINE_integer("batch_size", 64, "Sentences per search call.")
flags.DEFINE_enum(
    "precision",
    "float32",
    ["float32", "bfloat16", "float16"],
    "Compute precision; bfloat16 uses the CPU's AMX/AVX-512 BF16 units.",
)
flags.mark_flag_as_required("model_dir")


def translator_from_flags():
    """The `Translator` the search flags describe."""
    from seq2seq_attn.decoding.scoring import Scoring
    from seq2seq_attn.decoding.unk_replacement import load_dictionary
    from seq2seq_attn.model_dir import load_translator

    dictionary = None
    if FLAGS.unk_dictionary:
        dictionary = load_dictionary(FLAGS.unk_dictionary)
    return load_translator(
        FLAGS.model_dir,
        FLAGS.checkpoint,
        precision=FLAGS.precision,
        beam_size=FLAGS.beam_size,
        scoring=Scoring(FLAGS.length_penalty, FLAGS.alpha, FLAGS.beta),
        nbest=FLAGS.nbest,
        max_length_a=FLAGS.max_length_a,
        max_length_b=FLAGS.max_length_b,
        batch_size=FLAGS.batch_size,
        max_input_tokens=FLAGS.max_input_tokens or None,
        replace_unk=FLAGS.replace_unk,
        dictionary=dictionary,
    )


def warn_if_cut(results, stream=None):
    """Says on stderr how many inputs `--max_input_tokens` cut."""
    import sys

    cut = [r for r in results if r.input_tokens > len(r.source_ids)]
    if cut:
        longest = max(r.input_tokens for r in cut)
        print(
            f"warning: {len(cut)} input line(s) of up to {longest} tokens "
            f"were cut to --max_input_tokens={FLAGS.max_input_tokens}",
            file=stream or sys.stderr,
        )

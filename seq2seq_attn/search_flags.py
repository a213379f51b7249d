"""The search flags of translate, evaluate and the export, defined once.

Their defaults are `SearchConfig`'s (and `Scoring`'s); where a command's use
differs (the export's nbest), `use_command_defaults` applies
`search_config.COMMAND_DEFAULTS`.
"""

import sys

from absl import flags

from seq2seq_attn.config.scoring import LENGTH_PENALTIES, Scoring
from seq2seq_attn.config.search import COMMAND_DEFAULTS, SearchConfig

FLAGS = flags.FLAGS
_SEARCH = SearchConfig()
_SCORING = Scoring()
flags.DEFINE_integer("beam_size", _SEARCH.beam_size, "Beam width; 1: greedy.")
flags.DEFINE_integer(
    "nbest", _SEARCH.nbest, "Hypotheses per sentence (<= beam_size)."
)
flags.DEFINE_enum(
    "length_penalty",
    _SCORING.length_penalty,
    list(LENGTH_PENALTIES),
    "Length scoring.",
)
flags.DEFINE_float("alpha", _SCORING.alpha, "Length penalty exponent.")
flags.DEFINE_float("beta", _SCORING.beta, "Coverage penalty weight (GNMT).")
flags.DEFINE_float(
    "max_length_a", _SEARCH.max_length_a, "Output limit: a * |x| + b tokens."
)
flags.DEFINE_float(
    "max_length_b", _SEARCH.max_length_b, "Output limit: a * |x| + b tokens."
)
flags.DEFINE_integer(
    "no_repeat_ngram_size",
    _SEARCH.no_repeat_ngram_size,
    "Never write a token that repeats an n-gram of the same output "
    "(n > 0; 0: off).",
)
flags.DEFINE_integer(
    "max_input_tokens",
    _SEARCH.max_input_tokens,
    "Cut longer inputs to this many tokens (0: no limit).",
)
flags.DEFINE_integer(
    "batch_size",
    _SEARCH.batch_size,
    "Sentences per search; more are sorted by length and split.",
)
flags.DEFINE_float(
    "memory_budget_gb",
    _SEARCH.memory_budget_gb,
    "The most memory one search of --batch_size sentences may take, by its "
    "estimate (beam x batch x vocabulary); checked before any work.",
)


def use_command_defaults(command):
    """Sets the defaults of `command` where they differ (its --help shows
    them)."""
    for name, value in COMMAND_DEFAULTS[command].items():
        FLAGS.set_default(name, value)


def search_config_from_flags(command):
    """The `SearchConfig` the flags describe; a default nbest is capped at
    the beam size."""
    options = dict(
        beam_size=FLAGS.beam_size,
        scoring=Scoring(FLAGS.length_penalty, FLAGS.alpha, FLAGS.beta),
        max_length_a=FLAGS.max_length_a,
        max_length_b=FLAGS.max_length_b,
        no_repeat_ngram_size=FLAGS.no_repeat_ngram_size,
        max_input_tokens=FLAGS.max_input_tokens or None,
        batch_size=FLAGS.batch_size,
        memory_budget_gb=FLAGS.memory_budget_gb,
    )
    if FLAGS["nbest"].present:
        options["nbest"] = FLAGS.nbest
    return SearchConfig.for_command(command, **options)


def warn_if_cut(results, limit, stream=None):
    """Says on stderr how many inputs were cut to `limit` tokens (the
    translator's `max_input_tokens`), and by what."""
    cut = [r for r in results if r.cut]
    if cut:
        longest = max(r.input_tokens for r in cut)
        by = (
            f"--max_input_tokens={limit}"
            if limit == FLAGS.max_input_tokens
            else f"{limit} tokens, the most the model reads (its location "
            "score addresses max_source_positions positions)"
        )
        print(
            f"warning: {len(cut)} input line(s) of up to {longest} tokens or "
            f"more were cut to {by}",
            file=stream or sys.stderr,
        )

"""The search flags of translate, evaluate and the export, defined once.

Their defaults are `SearchConfig`'s (and `Scoring`'s); where a command's use
differs (the export's nbest), `use_command_defaults` applies
`search_config.COMMAND_DEFAULTS`.
"""

import sys

from absl import flags

from seq2seq_attn.cli.config_flags import define_config_flags
from seq2seq_attn.config.scoring import LENGTH_PENALTIES, Scoring
from seq2seq_attn.config.search import COMMAND_DEFAULTS, SearchConfig

FLAGS = flags.FLAGS
# One flag per field, of its name, default and docstring (the scoring's
# fields flat beside the search's).
SECTIONS = define_config_flags(
    {"search": SearchConfig, "scoring": Scoring},
    __name__,
    skip={"search": ("scoring",)},
    choices={"length_penalty": LENGTH_PENALTIES},
)


def use_command_defaults(command):
    """Sets the defaults of `command` where they differ (its --help shows
    them)."""
    for name, value in COMMAND_DEFAULTS[command].items():
        FLAGS.set_default(name, value)


def search_config_from_flags(command):
    """The `SearchConfig` the flags describe (`--max_input_tokens=0`: no
    limit); a default nbest is capped at the beam size."""
    values = {"search": {}, "scoring": {}}
    for name, section in SECTIONS.items():
        if name != "nbest" or FLAGS[name].present:
            values[section][name] = FLAGS[name].value
    options = values["search"]
    options["max_input_tokens"] = options["max_input_tokens"] or None
    return SearchConfig.for_command(
        command, scoring=Scoring(**values["scoring"]), **options
    )


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

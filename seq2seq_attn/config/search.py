"""How to search: one frozen value that translate, evaluate, the trainer's
validation and the export share, validated once."""

import dataclasses

from seq2seq_attn.config.scoring import Scoring

# Where a command's use differs, so does its default: the export's
# `translate_nbest` signature exists to return several hypotheses.
COMMAND_DEFAULTS = {"translate": {}, "evaluate": {}, "export": {"nbest": 5}}
# The largest output limit a * |x| + b may ask for.
MAX_LENGTH_A = 1000
MAX_LENGTH_B = 1_000_000
# The longest n-gram the repetition block compares (one op per token of it).
MAX_NGRAM = 10


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """The search of translate, evaluate and the export.

    Attributes:
        beam_size: K; 1 is greedy search.
        nbest: hypotheses returned per sentence, at most `beam_size`.
        scoring: a `Scoring` (length normalisation, coverage penalty).
        max_length_a, max_length_b: the output limit, ceil(a * |x| + b)
            tokens with </s> (a at most 1,000, b from 1 to 1,000,000).
        no_repeat_ngram_size: n > 0: no hypothesis writes a token that
            repeats one of its own n-grams (a guard against loops; 0: off,
            as in the papers).
        max_input_tokens: longer inputs are cut to this many tokens (None:
            no limit); the default keeps a stray long line from taking
            gigabytes.
        batch_size: sentences per search call; larger inputs are sorted by
            length and searched in chunks of this many.
    """

    beam_size: int = 5
    nbest: int = 1
    scoring: Scoring = Scoring()
    max_length_a: float = 1.5
    max_length_b: float = 5
    no_repeat_ngram_size: int = 0
    max_input_tokens: int | None = 100
    batch_size: int = 64

    def __post_init__(self):
        if self.beam_size < 1:
            raise ValueError(f"beam_size must be >= 1, got {self.beam_size}")
        if not 1 <= self.nbest <= self.beam_size:
            raise ValueError(
                f"nbest must be in [1, beam_size={self.beam_size}], "
                f"got {self.nbest}"
            )
        # NaN fails these comparisons too, and the upper limits keep
        # ceil(a * |x| + b) a count of tokens (an int32 in the graph).
        if not 0 <= self.max_length_a <= MAX_LENGTH_A:
            raise ValueError(
                f"max_length_a must be a number in [0, {MAX_LENGTH_A}], "
                f"got {self.max_length_a}"
            )
        if not 1 <= self.max_length_b <= MAX_LENGTH_B:
            raise ValueError(
                f"max_length_b must be a number in [1, {MAX_LENGTH_B:,}], "
                f"got {self.max_length_b}"
            )
        if not 0 <= self.no_repeat_ngram_size <= MAX_NGRAM:
            raise ValueError(
                f"no_repeat_ngram_size must be in [0, {MAX_NGRAM}] (0: off), "
                f"got {self.no_repeat_ngram_size}"
            )
        if self.max_input_tokens is not None and self.max_input_tokens < 1:
            raise ValueError(
                "max_input_tokens must be positive (or None for no limit), "
                f"got {self.max_input_tokens}"
            )
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")

    @classmethod
    def for_command(cls, command, **options):
        """The config of `command` ("translate", "evaluate", "export"):
        its defaults (`COMMAND_DEFAULTS`) under `options`; a default nbest
        is capped at the beam size."""
        defaults = dict(COMMAND_DEFAULTS[command])
        if "nbest" in defaults:
            beam_size = options.get("beam_size", cls.beam_size)
            defaults["nbest"] = min(defaults["nbest"], beam_size)
        return cls(**{**defaults, **options})

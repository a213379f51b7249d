"""How to search: one frozen value that translate, evaluate, the trainer's
validation and the export share, validated once."""

import dataclasses
import math

from seq2seq_attn.config.fields import INT32_MAX, check_sizes, sized
from seq2seq_attn.config.scoring import Scoring

# Where a command's use differs, so does its default: the export's
# `translate_nbest` signature exists to return several hypotheses.
COMMAND_DEFAULTS = {"translate": {}, "evaluate": {}, "export": {"nbest": 5}}
# The largest output limit a * |x| + b may ask for.
MAX_LENGTH_A = 1000
MAX_LENGTH_B = 1_000_000
# The longest n-gram the repetition block compares (one op per token of it).
MAX_NGRAM = 10
# The bytes read of an input (64 a token, `text_to_ids.input_bytes`), and
# the 16 times as many searched for its leading whitespace
# (`text_to_ids.LEADING_WINDOW`), are int32 offsets in the graph.
MAX_INPUT_TOKENS = INT32_MAX // (64 * 16)


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """The search of translate, evaluate and the export.

    Attributes:
        beam_size: the beam width K; 1 is greedy search.
        nbest: hypotheses returned per sentence, at most `beam_size`.
        scoring: a `Scoring` (length normalisation, coverage penalty).
        max_length_a, max_length_b: the output limit, ceil(a * |x| + b)
            tokens with </s> (a at most 1,000, b from 1 to 1,000,000).
        no_repeat_ngram_size: n > 0: no hypothesis writes a token that
            repeats one of its own n-grams (a guard against loops; 0: off,
            as in the papers).
        max_input_tokens: longer inputs are cut to this many tokens (None,
            0 on the command line: no limit); the default keeps a stray
            long line from taking gigabytes.
        batch_size: sentences per search call; larger inputs are sorted by
            length and searched in chunks of this many.
        memory_budget_gb: the most memory one search call may take, by
            its estimate (`search_bytes`: beam x batch x vocabulary, and
            the alignments kept), checked before any work; raise it on a
            larger host.

    Sizes have a ceiling (what an int32 of the graph holds), and beam_size
    x batch_size, the rows of one search, does too.
    """

    beam_size: int = sized(5, 1)
    nbest: int = 1
    scoring: Scoring = Scoring()
    max_length_a: float = 1.5
    max_length_b: float = 5
    no_repeat_ngram_size: int = 0
    max_input_tokens: int | None = sized(
        100,
        1,
        MAX_INPUT_TOKENS,
        "the bytes read, 64 a token, are int32 offsets",
        optional=True,
    )
    batch_size: int = sized(64, 1)
    memory_budget_gb: float = 8.0

    def __post_init__(self):
        check_sizes(self, "")
        rows = self.beam_size * self.batch_size
        if rows > INT32_MAX:
            raise ValueError(
                f"beam_size x batch_size (the rows of one search) must be at "
                f"most {INT32_MAX:,} (an int32 of the graph), got {rows:,}"
            )
        if not self.memory_budget_gb > 0:
            raise ValueError(
                "memory_budget_gb must be a positive number, got "
                f"{self.memory_budget_gb}"
            )
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

    def search_bytes(self, vocab_size, models=1):
        """An estimate of the memory one search call of `batch_size`
        sentences takes: for each of its beam_size x batch_size hypotheses,
        12 float32 a target vocabulary entry for each model (the logits,
        log-probabilities, scores and the top-k over beam x vocabulary),
        and 2 a cell of its alignments (output x input tokens). Fitted with
        room to spare to the peak RSS of searches on the fixtures' models
        (benchmarks/RESULTS.md); the encoder's states, a few per source
        token, are small beside them."""
        source = self.max_input_tokens or 0
        output = math.ceil(self.max_length_a * source + self.max_length_b)
        per_row = 12 * vocab_size * models + 2 * output * source
        return 4 * self.beam_size * self.batch_size * per_row

    def check_memory(self, vocab_size, models=1):
        """Refuses, before any work, a search whose `search_bytes` exceed
        `memory_budget_gb`, naming the flags that lower or raise it."""
        needed = self.search_bytes(vocab_size, models) / 2**30
        if needed > self.memory_budget_gb:
            raise ValueError(
                f"a search of beam_size={self.beam_size} x batch_size="
                f"{self.batch_size} over {vocab_size:,} target words"
                f"{f' ({models} models)' if models > 1 else ''} needs about "
                f"{needed:,.1f} GB, over memory_budget_gb="
                f"{self.memory_budget_gb:g}: lower --beam_size or "
                "--batch_size, or raise --memory_budget_gb"
            )

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

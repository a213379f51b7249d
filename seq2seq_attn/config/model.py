"""The frozen configuration every model is built from."""

import dataclasses
import json

from seq2seq_attn.config.fields import check_sizes, from_dict, sized

ARCHITECTURES = ("rnnsearch", "rnnencdec", "luong")
SCORES = ("dot", "general", "concat", "location", "none")
MODES = ("global", "local-m", "local-p")
INITIALIZERS = ("bahdanau", "luong", "glorot")
TIES = ("none", "target", "all")
# The fields each architecture's model never reads: a flag that sets one
# is refused by the train command (a config that holds one still loads).
# rnnencdec has no alignment model, but its recipes give n'
# (`--attention_units`) as Bahdanau A.2.3 lists it for both models: kept.
_LUONG_ONLY = (
    "score",
    "attention_mode",
    "window",
    "max_source_positions",
    "input_feeding",
    "reverse_source",
    "num_layers",
    "init_scale",
)
IGNORED_FIELDS = {
    "rnnsearch": _LUONG_ONLY,
    "rnnencdec": _LUONG_ONLY,
    "luong": ("maxout_units", "maxout_pool_size"),
}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Everything that decides a model's shape and initial weights.

    Attributes:
        architecture: "rnnsearch" (Bahdanau et al. 2015), "rnnencdec" (Cho et
            al. 2014a, Bahdanau's baseline) or "luong" (Luong et al. 2015).
        source_vocab_size: K_x, including the reserved ids.
        target_vocab_size: K_y, including the reserved ids.
        embedding_dim: m (620 in Bahdanau A.2.3, 1000 in Luong 4.1).
        hidden_units: n (1000 in both papers), the decoder's state size.
        encoder_units: the encoder's state size per direction for rnnsearch
            and rnnencdec (n in Bahdanau A.2.1); defaults to `hidden_units`.
            Luong's decoder starts from the encoder's states, so there it
            must equal `hidden_units`.
        attention_units: n', the alignment model's size for rnnsearch (1000 in
            Bahdanau A.2.3), or the size of Luong's concat and local-p
            networks; defaults to `hidden_units`.
        maxout_units: l, the maxout layer of rnnsearch and rnnencdec (500).
        maxout_pool_size: inputs per maxout unit (2).
        num_layers: stacked LSTM layers of luong (4).
        score: luong's score function, or "none" for no attention.
        attention_mode: "global", "local-m" or "local-p" (luong).
        window: D of local attention (10).
        max_source_positions: source positions the "location" score can
            address: training keeps `max_source_length` within them, and
            translation cuts longer inputs to them (and says so).
        input_feeding: luong's input feeding (Sec. 3.3).
        reverse_source: feed luong's encoder the source reversed.
        dropout: dropout probability (Luong Sec. 4.1: 0.2, between the
            stacked LSTM layers). Bahdanau et al. use none; for rnnsearch and
            rnnencdec it drops embeddings and the deep output's inputs.
        initializer: "bahdanau" (B.1), "luong" (uniform, Sec. 4.1) or
            "glorot" (Keras defaults).
        init_scale: the range of the "luong" uniform initializer (0.1).
        tie_embeddings: "none" (as both papers), "target" (the output
            projection is the target embedding: W_s = E for luong, W_o = E
            for the deep output; needs embedding_dim equal to hidden_units,
            or to maxout_units), or "all" (the source embedding is that
            same matrix too: one joint vocabulary, `--joint_vocab`).
    """

    architecture: str = "rnnsearch"
    source_vocab_size: int = sized(30000, 5)
    target_vocab_size: int = sized(30000, 5)
    embedding_dim: int = sized(620, 1)
    hidden_units: int = sized(1000, 1)
    encoder_units: int | None = sized(None, 1)
    attention_units: int | None = sized(None, 1)
    maxout_units: int = sized(500, 1)
    maxout_pool_size: int = sized(2, 1)
    num_layers: int = sized(1, 1)
    score: str = "general"
    attention_mode: str = "global"
    window: int = sized(10, 0)
    max_source_positions: int = sized(50, 1)
    input_feeding: bool = True
    reverse_source: bool = False
    dropout: float = 0.0
    initializer: str = "bahdanau"
    init_scale: float = 0.1
    tie_embeddings: str = "none"

    def __post_init__(self):
        def check(condition, message):
            if not condition:
                raise ValueError(f"ModelConfig: {message}")

        check(
            self.architecture in ARCHITECTURES,
            f"architecture must be one of {ARCHITECTURES}, "
            f"got {self.architecture!r}",
        )
        check(
            self.score in SCORES,
            f"score must be one of {SCORES}, got {self.score!r}",
        )
        check(
            self.attention_mode in MODES,
            f"attention_mode must be one of {MODES}, "
            f"got {self.attention_mode!r}",
        )
        check(
            self.initializer in INITIALIZERS,
            f"initializer must be one of {INITIALIZERS}, "
            f"got {self.initializer!r}",
        )
        check(
            self.tie_embeddings in TIES,
            f"tie_embeddings must be one of {TIES}, "
            f"got {self.tie_embeddings!r}",
        )
        check_sizes(self, "ModelConfig")
        check(
            self.architecture != "luong"
            or self.encoder_size == self.hidden_units,
            "luong's decoder starts from the encoder's states: encoder_units "
            f"({self.encoder_units}) must equal hidden_units "
            f"({self.hidden_units})",
        )
        self._check_tie(check)
        check(
            0.0 <= self.dropout < 1.0,
            f"dropout must be in [0, 1), got {self.dropout}",
        )
        check(
            0.0 < self.init_scale < float("inf"),
            f"init_scale must be positive and finite, got {self.init_scale}",
        )
        check(
            not (
                self.architecture == "luong"
                and self.score == "none"
                and self.input_feeding
            ),
            "input_feeding needs attention: set score or input_feeding=False",
        )

    def _check_tie(self, check):
        if self.tie_embeddings == "none":
            return
        luong = self.architecture == "luong"
        width, name = (
            (self.hidden_units, "hidden_units")
            if luong
            else (self.maxout_units, "maxout_units")
        )
        check(
            self.embedding_dim == width,
            f"tie_embeddings={self.tie_embeddings} projects the "
            f"{'attentional vector' if luong else 'maxout layer'} "
            f"({name}={width}) through the target embedding: embedding_dim "
            f"({self.embedding_dim}) must equal it",
        )
        check(
            self.tie_embeddings != "all"
            or self.source_vocab_size == self.target_vocab_size,
            "tie_embeddings=all shares one embedding between the sides: "
            f"source_vocab_size ({self.source_vocab_size}) must equal "
            f"target_vocab_size ({self.target_vocab_size}); build one joint "
            "vocabulary (--joint_vocab)",
        )

    @property
    def attention_size(self):
        """n' with its default applied."""
        return self.attention_units or self.hidden_units

    @property
    def encoder_size(self):
        """The encoder's units per direction with its default applied."""
        return self.encoder_units or self.hidden_units

    def to_dict(self):
        """A plain dict of the fields (JSON-serialisable)."""
        return dataclasses.asdict(self)

    def to_json(self):
        """The config as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, values):
        """Builds a config from a dict, naming any unknown key."""
        return from_dict(cls, values, "ModelConfig")

    @classmethod
    def from_json(cls, text):
        """Inverse of `to_json`."""
        return cls.from_dict(json.loads(text))

    def replace(self, **changes):
        """A copy with some fields changed (and checked again)."""
        return dataclasses.replace(self, **changes)

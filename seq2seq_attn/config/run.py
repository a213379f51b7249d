"""The frozen configs of a training run, and how a model directory holds them.

A run is `RunConfig(model, data, train)`. The train CLI turns its flags into
one and writes it to `MODEL_DIR/config.json` beside the vocabularies, so that
translate, evaluate and export need only `--model_dir`.
"""

import dataclasses
import json
import math
import pathlib

from seq2seq_attn.config.fields import (
    INT32_MAX,
    check_sizes,
    from_dict,
    resumable,
    resumable_fields,
    sized,
)
from seq2seq_attn.config.model import IGNORED_FIELDS, ModelConfig

# What to do with a line that is not UTF-8 (the corpus readers take it too).
INVALID_UTF8 = ("error", "replace", "skip")
OPTIMIZERS = ("adadelta", "sgd", "adam")
MIXED_PRECISION = ("", "mixed_float16", "mixed_bfloat16")
VARIANTS = ("raw", "tok")
TOKENIZERS = ("sentencepiece", "wordpiece", "word")
BATCH_BY = ("sentences", "tokens")
SCHEDULES = ("constant", "halving")
STRATEGIES = ("default", "mirrored", "multi_worker")
# The layout of config.json this version writes; a file without the key is
# format 1 (seq2seq_attn 0.1.0). Raise it when a field changes meaning, so
# that an older version refuses the file instead of misreading it.
FORMAT_VERSION = 1


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file and a rename, so
    that a kill leaves the old file or the new one, never half of one."""
    path = pathlib.Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)
    return path


def read_json(path):
    """The JSON value in the file at `path`; a damaged one (not JSON, not
    UTF-8) is a `ValueError` that names the file: `PATH: damaged (...)`."""
    path = pathlib.Path(path)
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: damaged, not JSON ({error})") from None


def _check(condition, message):
    if not condition:
        raise ValueError(message)


def _check_fields(config, section, choices, minimums=None):
    """Refuses a non-finite number in any field of `config` (NaN and the
    infinities, by name), a value outside `choices[field]`, and a number
    below `minimums[field]` (the sizes' floors are on their fields:
    `check_sizes`)."""
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if isinstance(value, float):
            _check(
                math.isfinite(value),
                f"{section}: {field.name} must be a finite number, got {value}",
            )
    for name, allowed in choices.items():
        value = getattr(config, name)
        _check(
            value in allowed,
            f"{section}: {name} must be one of {allowed}, got {value!r}",
        )
    for name, minimum in (minimums or {}).items():
        value = getattr(config, name)
        _check(
            value >= minimum,
            f"{section}: {name} must be >= {minimum}, got {value}",
        )


def bleu_tokenizers():
    """The sacreBLEU tokenizers `bleu_tokenize` may name."""
    from sacrebleu.metrics import BLEU

    return tuple(BLEU.TOKENIZERS)


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """Which text a run reads and how it is tokenized and batched.

    Attributes:
        corpus: "multi30k" (Multi30k Task 1: en, de, fr) or "anki"
            (Tatoeba pairs from manythings.org: en with es or fr, the other
            language picking the archive; split 90/5/5 into train, val
            and test by a permutation of seed 2015,
            `data.corpora.anki_split`), or None for files.
        source, target: language codes.
        variant: "raw" (text as people write it) or "tok" (multi30k's
            lowercased, Moses-tokenised copy, for published figures).
        train_source_file, train_target_file: line-aligned training files
            (plain or .gz) instead of a corpus; several, comma-separated,
            pair up in order.
        train_tsv_file: tab-separated training pairs (plain or .gz; several
            comma-separated) instead.
        tfds_dataset: a TensorFlow Datasets translation dataset to train on
            instead, e.g. "wmt14_translate/de-en" (its "train" split; its
            "validation" split validates; `source` and `target` pick the
            direction; needs the `tfds` extra).
        max_train_pairs: train on at most this many pairs: every k-th pair
            of the corpus (k = pairs / max_train_pairs, rounded up), so that
            each of its sub-corpora keeps its share (0: all).
        valid_source_file, valid_target_file: line-aligned validation files.
        valid_test_sets: validate on sacreBLEU test sets instead, in the
            direction `source`-`target`: comma-separated, concatenated,
            e.g. "wmt12,wmt13" (Bahdanau 4.1's newstest2012 and 2013);
            downloaded once into ~/.sacrebleu.
        data_dir: a local corpus directory (no download); for
            `tfds_dataset`, TFDS's data directory.
        invalid_utf8: "error", "replace" or "skip".
        tokenizer: "sentencepiece" (raw text in and out, normalised in the
            graph), "wordpiece", or "word" (a shortlist of whitespace-split
            words, for pre-tokenised text, or with `split_punctuation` for
            raw text).
        source_vocab_size, target_vocab_size: entries, reserved included
            (30,000 in Bahdanau 4.1, 50,000 in Luong 4.1).
        joint_vocab: build one vocabulary from both sides' text (the two
            sizes equal), used as the source and the target vocabulary;
            what tie_embeddings="all" needs.
        lowercase: lowercase (word, wordpiece) or case-fold
            (sentencepiece).
        split_punctuation: word only: also split words at punctuation and
            symbols, in the graph (the papers' word shortlists on raw text,
            close to the Moses tokenizer they ran beforehand); the spaces
            it puts in are taken out of translations by rule.
        vocab_dir: prebuilt vocabularies (`source/`, `target/`, as
            `build_vocab` writes them) to copy into the model directory
            instead of building them.
        vocab_sample_lines: build the vocabularies from at most this many
            pairs, a seeded sample spread over the whole corpus (kept on
            disk while they are built, not in memory).
        sentencepiece_max_characters: SentencePiece learns from at most
            this many characters of that sample per vocabulary, every k-th
            sentence past it (its trainer holds about 20 bytes a character);
            0: all of it. The word and wordpiece counts read all of it.
        shuffle_buffer: training pairs shuffled together (memory and the
            checkpointed data iterator grow with it, about 0.5 KB a pair,
            not with the corpus; a corpus sorted by source is best shuffled
            once beforehand).
        max_source_length, max_target_length: longer pairs are filtered from
            training (30 or 50 words in the papers).
        batch_size: sentences per batch (80 in Bahdanau B.2, 128 in Luong),
            or tokens with `batch_by="tokens"`.
        batch_by: "sentences" or "tokens".
        sort_window: batches sorted together by length (20 in Bahdanau B.2).
        bucket_width: bucket by length every this many tokens (0: off).
        valid_max_sentences: validate on at most this many pairs (0: all).
        bleu_tokenize: sacreBLEU tokenizer for validation: "13a" (the
            standard signature, detokenised output against raw references)
            or "none" (the Multi30k convention on tok/ text).

    The fields declared `resumable` may change when a run is resumed (the
    training files may move, not change: their content is checked); the
    others (the vocabularies, the data and how it is batched) are fixed by
    the checkpoint.
    """

    corpus: str | None = "multi30k"
    source: str = "en"
    target: str = "de"
    variant: str = "raw"
    train_source_file: str | None = resumable(None)
    train_target_file: str | None = resumable(None)
    train_tsv_file: str | None = resumable(None)
    tfds_dataset: str | None = None
    max_train_pairs: int = sized(0, 0)
    valid_source_file: str | None = resumable(None)
    valid_target_file: str | None = resumable(None)
    valid_test_sets: str | None = resumable(None)
    data_dir: str | None = resumable(None)
    invalid_utf8: str = "error"
    tokenizer: str = "sentencepiece"
    source_vocab_size: int = sized(30000, 5)
    target_vocab_size: int = sized(30000, 5)
    joint_vocab: bool = False
    lowercase: bool = False
    split_punctuation: bool = False
    vocab_dir: str | None = resumable(None)
    vocab_sample_lines: int = sized(1_000_000, 1, resumable=True)
    sentencepiece_max_characters: int = sized(30_000_000, 0, resumable=True)
    shuffle_buffer: int = sized(20_000, 1)
    max_source_length: int = sized(50, 1)
    max_target_length: int = sized(50, 1)
    batch_size: int = sized(80, 1)
    batch_by: str = "sentences"
    sort_window: int = sized(20, 1)
    bucket_width: int = sized(0, 0)
    valid_max_sentences: int = sized(0, 0, resumable=True)
    bleu_tokenize: str = resumable("13a")

    def __post_init__(self):
        given = [
            bool(self.corpus),
            bool(self.train_source_file or self.train_target_file),
            bool(self.train_tsv_file),
            bool(self.tfds_dataset),
        ]
        _check(
            sum(given) == 1,
            "data: give one of corpus, train_source_file/train_target_file, "
            "train_tsv_file or tfds_dataset",
        )
        check_sizes(self, "data")
        _check(
            self.batch_size * self.sort_window <= INT32_MAX,
            f"data: batch_size x sort_window (the batches sorted together) "
            f"must be at most {INT32_MAX:,} (an int32 of the graph), got "
            f"{self.batch_size * self.sort_window:,}",
        )
        _check(
            self.tokenizer == "word" or not self.split_punctuation,
            f"data: split_punctuation is a word tokenizer option; "
            f"{self.tokenizer} splits punctuation itself",
        )
        _check(
            not self.joint_vocab
            or self.source_vocab_size == self.target_vocab_size,
            "data: joint_vocab builds one vocabulary for both sides: "
            f"source_vocab_size ({self.source_vocab_size}) and "
            f"target_vocab_size ({self.target_vocab_size}) must be equal",
        )
        _check_fields(
            self,
            "data",
            choices=dict(
                variant=VARIANTS,
                tokenizer=TOKENIZERS,
                batch_by=BATCH_BY,
                invalid_utf8=INVALID_UTF8,
                bleu_tokenize=bleu_tokenizers(),
            ),
        )


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """How the model is optimised.

    Attributes:
        optimizer: "adadelta" (Bahdanau B.2: rho 0.95, epsilon 1e-6), "sgd"
            (Luong 4.1) or "adam".
        learning_rate: the (initial) learning rate.
        rho, epsilon: Adadelta's.
        schedule: "constant", or "halving" (Luong 4.1: halve every epoch
            after `halve_after_epochs`).
        halve_after_epochs: epochs at the full rate before halving starts.
        clip_norm: rescale the gradients when their global norm exceeds it
            (1 in Bahdanau B.2, 5 in Luong 4.1; 0: off).
        epochs: passes over the training data.
        max_steps: stop after this many updates (0: no limit); the last
            one is validated, as an epoch's end is.
        seed: seeds initialisation, shuffling and dropout.
        checkpoint_every: save every this many steps (and at each epoch end).
        keep_checkpoints: how many recent checkpoints to keep.
        early_stopping_patience: stop after this many validations without a
            better BLEU (0: off).
        mixed_precision: "" or a Keras policy ("mixed_float16",
            "mixed_bfloat16"); logits stay float32.
        jit_compile: compile the forward and backward passes with XLA, once
            per batch shape (needs `bucket_width`, whose batches are then
            padded to their bucket's length).
        strategy: "default", "mirrored" or "multi_worker" (from TF_CONFIG).
        num_cpu_devices: split the CPU into this many logical devices (for
            "mirrored" without GPUs; 0: leave it).
        log_every: steps between TensorBoard scalar writes.
        divergence_factor: stop, as for a non-finite loss, when a step's
            loss exceeds this many times the median of the last
            `divergence_window` steps (0: off).
        divergence_window: steps whose median loss the guard compares with.
        accumulate_batches: k, batches whose gradients make one update (an
            effective batch k times larger than memory holds; the learning
            rate schedule, `epochs`, `max_steps` and `checkpoint_every` count
            updates; 1: an update per batch, as in the papers).
        label_smoothing: e of the training loss's targets, (1 - e) on the
            reference token and e spread evenly over the vocabulary
            (Szegedy et al. 2016; 0: off, the papers' loss); validation
            perplexity is measured without it.
        ema_decay: d of an exponential moving average of the weights,
            updated after every update (avg <- d avg + (1 - d) weights,
            with a warm-up; `training.weight_average`) and used instead of
            them for validation, `best/` and so translate and the export
            (0: off, the papers' weights; 0.999 averages about the last
            1,000 updates).

    The fields declared `resumable` may change when a run is resumed; the
    others (the optimizer and its state) are fixed by the checkpoint.
    """

    optimizer: str = "adam"
    learning_rate: float = resumable(3e-4)
    rho: float = 0.95
    epsilon: float = 1e-6
    schedule: str = "constant"
    halve_after_epochs: int = sized(5, 0, resumable=True)
    clip_norm: float = resumable(1.0)
    epochs: int = sized(10, 1, resumable=True)
    max_steps: int = sized(0, 0, resumable=True)
    seed: int = sized(1234, 0)
    checkpoint_every: int = sized(500, 1, resumable=True)
    keep_checkpoints: int = sized(3, 1, resumable=True)
    early_stopping_patience: int = sized(0, 0, resumable=True)
    mixed_precision: str = ""
    jit_compile: bool = False
    strategy: str = "default"
    num_cpu_devices: int = sized(0, 0, 1024, "virtual devices of one CPU")
    log_every: int = sized(50, 1, resumable=True)
    divergence_factor: float = resumable(10.0)
    divergence_window: int = sized(100, 1, resumable=True)
    accumulate_batches: int = sized(1, 1)
    label_smoothing: float = 0.0
    ema_decay: float = 0.0

    def __post_init__(self):
        _check(self.learning_rate > 0, "train: learning_rate must be positive")
        check_sizes(self, "train")
        _check(
            self.divergence_factor == 0 or self.divergence_factor > 1,
            "train: divergence_factor must be 0 (off) or above 1",
        )
        _check(
            0.0 <= self.label_smoothing < 1.0,
            "train: label_smoothing must be in [0, 1), got "
            f"{self.label_smoothing}",
        )
        _check(
            0.0 <= self.ema_decay < 1.0,
            f"train: ema_decay must be in [0, 1), got {self.ema_decay}",
        )
        _check_fields(
            self,
            "train",
            choices=dict(
                optimizer=OPTIMIZERS,
                schedule=SCHEDULES,
                strategy=STRATEGIES,
                mixed_precision=MIXED_PRECISION,
            ),
            minimums=dict(rho=0.0, epsilon=0.0, clip_norm=0.0),
        )


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """Everything a training run needs: model, data and training configs."""

    model: ModelConfig
    data: DataConfig
    train: TrainConfig

    def __post_init__(self):
        _check(
            not self.train.jit_compile or self.data.bucket_width > 0,
            "train: jit_compile needs bucket_width (--bucket_width=10, say): "
            "XLA compiles the training step once per batch shape, and "
            "buckets pad the batches to a few shapes",
        )
        _check(
            self.model.tie_embeddings != "all"
            or self.data.joint_vocab
            or self.data.vocab_dir,
            "model: tie_embeddings=all shares one embedding between the "
            "sides, so both need one vocabulary: add --joint_vocab (or a "
            "joint --vocab_dir from build_vocab --joint_vocab)",
        )

    def check_trainable(self):
        """Refuses what would fail once training meets a long pair: a
        location score (Luong's a_t = softmax(W_a h_t)) addresses
        `max_source_positions` source positions, so the training pairs are
        kept within them. Checked by the trainer, not on loading: a model
        directory written before still loads, and its inputs are cut."""
        model, data = self.model, self.data
        if model.architecture == "luong" and model.score == "location":
            positions = model.max_source_positions
            _check(
                0 < data.max_source_length <= positions,
                f"data: max_source_length ({data.max_source_length}) must be "
                f"in [1, max_source_positions={positions}], the source "
                "positions the location score addresses: lower it, or raise "
                "--max_source_positions",
            )

    def differences(self, other):
        """`[(section, field, mine, other's)]` for every field that differs,
        the vocabulary sizes of the model excepted (the tokenizers set
        them), and the model fields that both runs' architecture ignores
        (`IGNORED_FIELDS`: a run recorded with one resumes without it)."""
        found = []
        ignored = set(IGNORED_FIELDS.get(self.model.architecture, ()))
        if self.model.architecture != other.model.architecture:
            ignored = set()
        for section in ("model", "data", "train"):
            mine, theirs = getattr(self, section), getattr(other, section)
            for field in dataclasses.fields(mine):
                if section == "model" and (
                    field.name.endswith("_vocab_size") or field.name in ignored
                ):
                    continue
                a, b = getattr(mine, field.name), getattr(theirs, field.name)
                if a != b:
                    found.append((section, field.name, a, b))
        return found

    def to_json(self):
        """Indented JSON of the three configs and the format version."""
        return json.dumps(
            {
                "format_version": FORMAT_VERSION,
                "model": self.model.to_dict(),
                "data": dataclasses.asdict(self.data),
                "train": dataclasses.asdict(self.train),
            },
            indent=2,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text):
        """Inverse of `to_json`; unknown keys are named in the error, and a
        format newer than this version reads is refused."""
        return cls._from_values(json.loads(text))

    @classmethod
    def _from_values(cls, values):
        if not isinstance(values, dict):
            raise ValueError("config.json: expected an object of sections")
        _check_format_version(values.get("format_version", 1))
        return cls(
            **{
                name: from_dict(
                    kind, values.get(name, {}), f"config.json: {name}"
                )
                for name, kind in SECTIONS.items()
            }
        )

    def save(self, model_dir):
        """Writes `model_dir/config.json`."""
        path = pathlib.Path(model_dir) / "config.json"
        return write_atomically(path, self.to_json() + "\n")

    @classmethod
    def load(cls, model_dir):
        """Reads `model_dir/config.json`."""
        path = pathlib.Path(model_dir) / "config.json"
        if not path.is_file():
            raise FileNotFoundError(
                f"{model_dir} is not a model directory: config.json missing"
            )
        return cls._from_values(read_json(path))


def _check_format_version(version):
    from seq2seq_attn import __version__

    _check(
        type(version) is int and version >= 1,
        f"config.json: format_version must be an integer >= 1, got {version!r}",
    )
    _check(
        version <= FORMAT_VERSION,
        f"config.json: format_version {version} was written by a newer "
        f"seq2seq_attn; this one ({__version__}) reads formats up to "
        f"{FORMAT_VERSION}: upgrade it (pip install -U seq2seq_attn)",
    )


SECTIONS = {"model": ModelConfig, "data": DataConfig, "train": TrainConfig}
# What a resumed run may change, by section: the fields declared
# `resumable`; every other field is fixed by the checkpoint.
RESUMABLE = {name: resumable_fields(kind) for name, kind in SECTIONS.items()}

"""Tokenizers on tensorflow-text: word shortlist, WordPiece, SentencePiece.

All three are `tf.Module`s with the same methods, so that training, decoding
and the SavedModel export run them inside TensorFlow graphs:

- `tokenize(strings)` -> int32 `tf.RaggedTensor` of ids (no <s> or </s>);
- `detokenize(ids)` -> strings, dropping <pad>, <s> and everything from the
  first </s> on;
- `tokens(strings)` -> the token strings, for heatmaps and unk replacement;
- `save(directory)` / `load_tokenizer(directory)`.

Ids follow `special_tokens`: 0 <pad>, 1 <unk>, 2 <s>, 3 </s>. Vocabulary
tables are built from the vocabulary files once read; the files are held as
`tf.saved_model.Asset`s, so an export carries them in its assets too.
"""

import collections
import hashlib
import io
import itertools
import json
import pathlib
import shutil

import tensorflow as tf
import tensorflow_text as tf_text

from seq2seq_attn import compat
from seq2seq_attn.special_tokens import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    RESERVED_TOKENS,
    UNK,
    UNK_ID,
)

CONFIG_FILE = "tokenizer.json"
KINDS = ("word", "wordpiece", "sentencepiece")
# SentencePiece's built-in normalisation rules (normalization_rule_name).
NORMALIZATIONS = ("nmt_nfkc", "nmt_nfkc_cf", "nfkc", "nfkc_cf", "identity")


def _vocabulary_table(tokens, key_is_token):
    """A static table between `tokens` and their ids (line numbers), built
    from the vocabulary already read, so that its entries are constants of
    the graph. Each table is a resource of its own, never another
    vocabulary's: a file's table would be named after `str(filename)`, for
    an `Asset` a memory address that a later tokenizer can get again."""
    tokens = tf.constant(tokens, tf.string)
    ids = tf.range(tf.size(tokens, out_type=tf.int64), dtype=tf.int64)
    if key_is_token:
        initializer = tf.lookup.KeyValueTensorInitializer(tokens, ids)
        return tf.lookup.StaticHashTable(initializer, default_value=UNK_ID)
    initializer = tf.lookup.KeyValueTensorInitializer(ids, tokens)
    return tf.lookup.StaticHashTable(initializer, default_value=UNK)


def _read_vocabulary(path):
    lines = pathlib.Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if tuple(lines[: len(RESERVED_TOKENS)]) != RESERVED_TOKENS:
        raise ValueError(
            f"{path}: a vocabulary must start with {list(RESERVED_TOKENS)}, "
            f"found {lines[: len(RESERVED_TOKENS)]}"
        )
    first_line = {}
    for number, token in enumerate(lines, 1):
        if token in first_line:
            raise ValueError(
                f"{path}:{number}: {token!r} is already on line "
                f"{first_line[token]}; a vocabulary lists each token once"
            )
        first_line[token] = number
    return lines


def _write_vocabulary(path, tokens):
    seen = set(RESERVED_TOKENS)
    lines = list(RESERVED_TOKENS)
    for token in tokens:
        if token in seen or not token or "\n" in token:
            continue
        seen.add(token)
        lines.append(token)
    pathlib.Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def _as_ragged(ids):
    if isinstance(ids, tf.RaggedTensor):
        return ids
    return tf.RaggedTensor.from_tensor(tf.convert_to_tensor(ids))


def strip_special(ids):
    """Drops <pad>, <s> and everything from the first </s> on: ragged int."""
    ids = tf.cast(_as_ragged(ids), tf.int64)
    is_eos = tf.cast(tf.equal(ids, EOS_ID), tf.int32)
    before_eos = tf.equal(tf.cumsum(is_eos, axis=1), 0)
    keep = before_eos & tf.not_equal(ids, PAD_ID) & tf.not_equal(ids, BOS_ID)
    return tf.ragged.boolean_mask(ids, keep)


class Tokenizer(tf.Module):
    """What the three tokenizers share; see the module docstring."""

    kind = None
    # The values each option of `tokenizer.json` may take.
    OPTION_VALUES = {}

    def __init__(self, directory, options):
        super().__init__(name=f"{self.kind}_tokenizer")
        self.directory = pathlib.Path(directory)
        self.options = dict(options)

    @property
    def vocab_size(self):
        """Number of ids, the reserved ones included."""
        raise NotImplementedError

    def tokenize(self, strings):
        """Ids of each string: int32 `tf.RaggedTensor` [B, None], without
        <s> or </s>."""
        raise NotImplementedError

    def detokenize(self, ids):
        """Text of each row of ids (dense or ragged): string [B]; <pad> and
        <s> are dropped, and everything from the first </s> on."""
        raise NotImplementedError

    def tokens(self, strings):
        """The token strings of each string: `tf.RaggedTensor` [B, None]."""
        raise NotImplementedError

    def files(self):
        """The files that define this tokenizer (beside tokenizer.json)."""
        raise NotImplementedError

    def id_to_token(self, ids):
        """The token string of each id (any shape, dense or ragged)."""
        raise NotImplementedError

    def fingerprint(self):
        """sha256 over the defining files: ties a model to its vocabulary."""
        digest = hashlib.sha256()
        for path in self.files():
            digest.update(pathlib.Path(path).read_bytes())
        return digest.hexdigest()

    def save(self, directory):
        """Copies the tokenizer's files and config to `directory`."""
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for path in self.files():
            target = directory / pathlib.Path(path).name
            if pathlib.Path(path).resolve() != target.resolve():
                shutil.copyfile(path, target)
        config = {"kind": self.kind, "options": self.options}
        (directory / CONFIG_FILE).write_text(
            json.dumps(config, indent=2) + "\n"
        )
        return directory

    def check_vocab_size(self, expected, side):
        """Raises a clear error if the model expects another vocabulary."""
        if self.vocab_size != expected:
            raise ValueError(
                f"the {side} vocabulary in {self.directory} has "
                f"{self.vocab_size} entries but the model was built for "
                f"{expected}: it does not belong to this model"
            )


# Punctuation and symbols (Unicode classes P and S) split off the words
# around them, for a word shortlist on raw text: close to the Moses
# tokenizer the papers ran before training ("l'homme." -> "l ' homme .").
PUNCTUATION = r"[\p{P}\p{S}]"
WHITESPACE = r"[\s\p{Z}]+"

# What a split at punctuation does to spacing, undone as far as a rule can
# (RE2, in the graph): "ein T - Shirt ( rot ) , 3 . 5 m ." -> "ein T-Shirt
# (rot), 3.5 m." Approximate: a spaced dash between words is joined too,
# and quotes stay spaced. (RE2's \w is ASCII only: letters and digits are
# \p{L} and \p{N}. The last rule runs twice, for "grün - weiß - rote".)
UNSPLIT_PUNCTUATION = (
    (r"(\d) ([.,:]) (\d)", r"\1\2\3"),
    (r" ([.,!?;:%)\]}])", r"\1"),
    (r"([(\[{]) ", r"\1"),
    (r"([\p{L}\p{N}]) ([-'’/]) ([\p{L}\p{N}])", r"\1\2\3"),
    (r"([\p{L}\p{N}]) ([-'’/]) ([\p{L}\p{N}])", r"\1\2\3"),
)


def unsplit_punctuation(text):
    """Takes out the spaces that `UNSPLIT_PUNCTUATION` undoes: string [B]."""
    for pattern, rewrite in UNSPLIT_PUNCTUATION:
        text = tf.strings.regex_replace(text, pattern, rewrite)
    return text


def split_words(strings, lowercase=False, split_punctuation=False):
    """The words of each string, as a word shortlist reads them: split on
    whitespace, and also around punctuation if `split_punctuation`,
    optionally lowercased: `tf.RaggedTensor` of strings [B, None]."""
    strings = tf.convert_to_tensor(strings, dtype=tf.string)
    if lowercase:
        strings = tf.strings.lower(strings, encoding="utf-8")
    if split_punctuation:
        return tf_text.regex_split(
            strings, f"{WHITESPACE}|{PUNCTUATION}", PUNCTUATION
        )
    # Not `WhitespaceTokenizer`: in tensorflow-text 2.20 it splits inside
    # multi-byte spaces ("Madagascar\xa02" -> b"Madagascar\xc2", "2").
    return tf_text.regex_split(strings, WHITESPACE)


class VocabularyFileTokenizer(Tokenizer):
    """A tokenizer defined by one vocabulary file (a token per line, the
    reserved tokens first, id = line number) and a lowercasing option."""

    VOCAB_FILE = None
    OPTION_VALUES = {"lowercase": (False, True)}

    def __init__(self, directory, lowercase=False):
        super().__init__(directory, {"lowercase": lowercase})
        self.lowercase = lowercase
        path = self.directory / self.VOCAB_FILE
        self.vocab_asset = tf.saved_model.Asset(str(path))
        self._vocabulary = _read_vocabulary(path)
        self._ids = _vocabulary_table(self._vocabulary, key_is_token=True)
        self._tokens = _vocabulary_table(self._vocabulary, key_is_token=False)

    @classmethod
    def _from_tokens(cls, tokens, directory, **options):
        """Writes the vocabulary file and config, and loads the tokenizer."""
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        _write_vocabulary(directory / cls.VOCAB_FILE, tokens)
        tokenizer = cls(directory, **options)
        tokenizer.save(directory)
        return tokenizer

    @property
    def vocab_size(self):
        return len(self._vocabulary)

    def files(self):
        return [self.directory / self.VOCAB_FILE]

    def id_to_token(self, ids):
        return self._tokens.lookup(tf.cast(ids, tf.int64))


class WordTokenizer(VocabularyFileTokenizer):
    """The papers' word shortlist (Bahdanau 4.1: 30,000; Luong 4.1: 50,000).

    Text is split on whitespace (Unicode's, in the graph with
    `tensorflow_text.regex_split`), for text that is already tokenised, such
    as Multi30k's `tok/` files; with `split_punctuation`, also around
    punctuation and symbols, for raw text. Optionally lowercased; words
    outside the shortlist become <unk>. Detokenization joins words with
    single spaces (and with `split_punctuation` takes out the spaces before
    and after punctuation that `UNSPLIT_PUNCTUATION` knows).
    """

    kind = "word"
    VOCAB_FILE = "vocab.txt"
    OPTION_VALUES = {
        "lowercase": (False, True),
        "split_punctuation": (False, True),
    }

    def __init__(self, directory, lowercase=False, split_punctuation=False):
        super().__init__(directory, lowercase)
        self.split_punctuation = split_punctuation
        if split_punctuation:
            self.options["split_punctuation"] = True

    @classmethod
    def build(
        cls,
        texts,
        directory,
        max_size=30000,
        min_count=1,
        lowercase=False,
        split_punctuation=False,
        chunk=8192,
    ):
        """Learns the shortlist: the `max_size` entries (reserved ones
        included) most frequent words with at least `min_count` occurrences,
        the words split as `tokenize` splits them; ties are broken
        alphabetically, so the result is deterministic."""
        counts = collections.Counter()
        texts = iter(texts)
        while block := list(itertools.islice(texts, chunk)):
            words = split_words(block, lowercase, split_punctuation)
            counts.update(words.flat_values.numpy().tolist())
        ranked = sorted(
            (item for item in counts.items() if item[1] >= min_count),
            key=lambda item: (-item[1], item[0]),
        )
        words = [
            word.decode("utf-8", "replace")
            for word, _ in ranked[: max_size - len(RESERVED_TOKENS)]
        ]
        return cls._from_tokens(
            words,
            directory,
            lowercase=lowercase,
            split_punctuation=split_punctuation,
        )

    def tokens(self, strings):
        return split_words(strings, self.lowercase, self.split_punctuation)

    def tokenize(self, strings):
        words = self.tokens(strings)
        return tf.cast(
            words.with_flat_values(self._ids.lookup(words.flat_values)),
            tf.int32,
        )

    def detokenize(self, ids):
        ids = strip_special(ids)
        words = ids.with_flat_values(self._tokens.lookup(ids.flat_values))
        text = tf.strings.reduce_join(words, axis=-1, separator=" ")
        return unsplit_punctuation(text) if self.split_punctuation else text


class WordPieceTokenizer(VocabularyFileTokenizer):
    """WordPiece with a vocabulary learnt from the training text.

    Learning uses tensorflow-text's `bert_vocab_from_dataset`; tokenizing uses
    `tensorflow_text.BertTokenizer` (split on whitespace and punctuation,
    then WordPiece). Detokenization glues the pieces into words, joins words
    with single spaces and then takes out the spaces that the split at
    punctuation put in (`UNSPLIT_PUNCTUATION`), which a rule can only
    approximate: SentencePiece restores text exactly.
    """

    kind = "wordpiece"
    VOCAB_FILE = "wordpiece.txt"

    def __init__(self, directory, lowercase=False):
        super().__init__(directory, lowercase)
        self._tokenizer = tf_text.BertTokenizer(
            self._ids,
            token_out_type=tf.int64,
            unknown_token=UNK,
            lower_case=lowercase,
        )

    @classmethod
    def build(cls, texts, directory, vocab_size=8000, lowercase=False):
        """Learns a WordPiece vocabulary of about `vocab_size` entries."""
        from tensorflow_text.tools.wordpiece_vocab import (
            bert_vocab_from_dataset,
        )

        dataset = tf.data.Dataset.from_generator(
            lambda: iter(texts), output_signature=tf.TensorSpec([], tf.string)
        ).batch(1024)
        pieces = bert_vocab_from_dataset.bert_vocab_from_dataset(
            dataset,
            vocab_size=vocab_size,
            reserved_tokens=list(RESERVED_TOKENS),
            bert_tokenizer_params={"lower_case": lowercase},
        )
        return cls._from_tokens(pieces, directory, lowercase=lowercase)

    def tokenize(self, strings):
        ids = self._tokenizer.tokenize(tf.convert_to_tensor(strings, tf.string))
        return tf.cast(ids.merge_dims(-2, -1), tf.int32)

    def tokens(self, strings):
        ids = tf.cast(self.tokenize(strings), tf.int64)
        return ids.with_flat_values(self._tokens.lookup(ids.flat_values))

    def detokenize(self, ids):
        words = self._tokenizer.detokenize(strip_special(ids))
        text = tf.strings.reduce_join(words, axis=-1, separator=" ")
        return unsplit_punctuation(text)


def _train_sentencepiece(texts, vocab_size, model_type, seed, normalization):
    """The bytes of a SentencePiece model trained on `texts` (an iterable,
    read once: the trainer holds what it reads); a vocabulary larger than
    the text supports is a ValueError that names the limit."""
    import sentencepiece

    read = 0

    def sentences():
        nonlocal read
        for text in texts:
            read += 1
            yield text

    model = io.BytesIO()
    sentencepiece.set_random_generator_seed(seed)
    try:
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=sentences(),
            model_writer=model,
            vocab_size=vocab_size,
            model_type=model_type,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            pad_piece=RESERVED_TOKENS[PAD_ID],
            unk_piece=RESERVED_TOKENS[UNK_ID],
            bos_piece=RESERVED_TOKENS[BOS_ID],
            eos_piece=RESERVED_TOKENS[EOS_ID],
            normalization_rule_name=normalization,
            remove_extra_whitespaces=normalization != "identity",
            byte_fallback=True,
            character_coverage=1.0,
            num_threads=1,
            minloglevel=2,
        )
    except RuntimeError as error:
        if "Vocabulary size too high" not in str(error):
            raise ValueError(
                f"sentencepiece could not build a vocabulary from "
                f"{read:,} sentences: {str(error).split('] ')[-1]}"
            ) from None
        raise ValueError(
            f"sentencepiece: {read:,} training sentences support "
            f"fewer than {vocab_size:,} pieces ({str(error).split('] ')[-1]}):"
            " lower the vocabulary size (--source_vocab_size, "
            "--target_vocab_size)"
        ) from None
    return model.getvalue()


class SentencePieceTokenizer(Tokenizer):
    """A SentencePiece model, trained with the `sentencepiece` package and run
    through `tensorflow_text.SentencepieceTokenizer`: raw text in, raw text
    out.

    The model file carries its own normalisation, which the tokenize op
    applies in the graph (and so in an export): by default `nmt_nfkc`
    (Unicode NFKC, control characters removed, runs of whitespace collapsed
    and trimmed), `nmt_nfkc_cf` to case-fold as well, or `identity`. With
    byte fallback no text is unknown, and `detokenize(tokenize(x))` is the
    normalised `x` (`x` itself with `identity`, the rule of models built
    before the option, whose tokenizer.json names none).
    """

    kind = "sentencepiece"
    MODEL_FILE = "sentencepiece.model"
    OPTION_VALUES = {"normalization": ("identity", "nmt_nfkc", "nmt_nfkc_cf")}

    def __init__(self, directory, normalization="identity"):
        super().__init__(directory, {"normalization": normalization})
        self.model_asset = tf.saved_model.Asset(
            str(self.directory / self.MODEL_FILE)
        )
        path = self.directory / self.MODEL_FILE
        model = path.read_bytes()
        try:
            self._tokenizer = compat.sentencepiece_tokenizer(model, tf.int32)
            self._vocab_size = int(self._tokenizer.vocab_size())
        except tf.errors.OpError as error:
            raise ValueError(
                f"{path}: not a SentencePiece model, or one cut short "
                f"({error.message.strip().splitlines()[0][:200]})"
            ) from None

    @classmethod
    def build(
        cls,
        texts,
        directory,
        vocab_size=8000,
        model_type="unigram",
        seed=0,
        normalization="nmt_nfkc",
    ):
        """Trains a model of `vocab_size` pieces on `texts`, with one of
        SentencePiece's `NORMALIZATIONS`."""
        if normalization not in NORMALIZATIONS:
            raise ValueError(
                f"sentencepiece normalization must be one of "
                f"{NORMALIZATIONS}, got {normalization!r}"
            )

        model = _train_sentencepiece(
            texts, vocab_size, model_type, seed, normalization
        )
        directory = pathlib.Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / cls.MODEL_FILE).write_bytes(model)
        tokenizer = cls(directory, normalization)
        tokenizer.save(directory)
        return tokenizer

    @property
    def vocab_size(self):
        return self._vocab_size

    def files(self):
        return [self.directory / self.MODEL_FILE]

    def tokenize(self, strings):
        return self._tokenizer.tokenize(
            tf.convert_to_tensor(strings, tf.string)
        )

    def tokens(self, strings):
        ids = self.tokenize(strings)
        return ids.with_flat_values(
            self._tokenizer.id_to_string(ids.flat_values)
        )

    def detokenize(self, ids):
        return self._tokenizer.detokenize(tf.cast(strip_special(ids), tf.int32))

    def id_to_token(self, ids):
        return self._tokenizer.id_to_string(tf.cast(ids, tf.int32))


TOKENIZERS = {
    cls.kind: cls
    for cls in (WordTokenizer, WordPieceTokenizer, SentencePieceTokenizer)
}


def load_tokenizer(directory):
    """Loads the tokenizer saved in `directory` (by `save` or `build`)."""
    directory = pathlib.Path(directory)
    config_path = directory / CONFIG_FILE
    if not config_path.is_file():
        raise FileNotFoundError(
            f"no tokenizer in {directory}: {CONFIG_FILE} missing"
        )
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(
            f"{config_path}: not a tokenizer config ({error})"
        ) from None
    kind = config.get("kind") if isinstance(config, dict) else None
    if kind not in TOKENIZERS:
        raise ValueError(f"{config_path}: unknown tokenizer kind {kind!r}")
    options = config.get("options", {})
    allowed = TOKENIZERS[kind].OPTION_VALUES
    unknown = (
        sorted(set(options) - set(allowed)) if isinstance(options, dict) else 0
    )
    if unknown or not isinstance(options, dict):
        raise ValueError(
            f"{config_path}: unknown option(s) {unknown or options!r} for a "
            f"{kind} tokenizer (it takes {sorted(allowed)})"
        )
    for name, value in options.items():
        # `type` too: JSON's 1 is not true here.
        if not any(
            type(value) is type(v) and value == v for v in allowed[name]
        ):
            raise ValueError(
                f"{config_path}: option {name}={json.dumps(value)} must be "
                f"one of {', '.join(json.dumps(v) for v in allowed[name])}"
            )
    return TOKENIZERS[kind](directory, **options)


def build_tokenizer(
    kind,
    texts,
    directory,
    vocab_size,
    lowercase=False,
    seed=0,
    split_punctuation=False,
):
    """Builds a tokenizer of `kind` ("word", "wordpiece", "sentencepiece")
    from training `texts` and saves it to `directory`. `lowercase`: word and
    wordpiece lowercase; sentencepiece case-folds (`nmt_nfkc_cf`).
    `split_punctuation`: word only (the others split it already)."""
    if split_punctuation and kind != "word":
        raise ValueError(
            f"split_punctuation is a word tokenizer option; {kind} splits "
            "punctuation itself"
        )
    if kind == "word":
        return WordTokenizer.build(
            texts,
            directory,
            max_size=vocab_size,
            lowercase=lowercase,
            split_punctuation=split_punctuation,
        )
    if kind == "wordpiece":
        return WordPieceTokenizer.build(
            texts, directory, vocab_size=vocab_size, lowercase=lowercase
        )
    if kind == "sentencepiece":
        return SentencePieceTokenizer.build(
            texts,
            directory,
            vocab_size=vocab_size,
            seed=seed,
            normalization="nmt_nfkc_cf" if lowercase else "nmt_nfkc",
        )
    raise ValueError(f"tokenizer kind must be one of {KINDS}, got {kind!r}")


def unk_rate(tokenizer, texts):
    """Share of tokens that are <unk> when `tokenizer` reads `texts`."""
    from seq2seq_attn.data.text_to_ids import sentence_ids_in_chunks

    ids = sentence_ids_in_chunks(tokenizer, list(texts)).flat_values.numpy()
    return float((ids == UNK_ID).mean()) if ids.size else 0.0

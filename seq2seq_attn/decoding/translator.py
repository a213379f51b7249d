"""The translation task: text in, translations out, through one generate
function.

`Translator` owns the model, its tokenizers and the search; its `generate`
(`generation.generate`, traced once) tokenizes, cuts, sorts, searches in
chunks and detokenizes in the graph, and the SavedModel's signatures trace
the same function. In Python, `translations` tokenizes a list of
sentences once (`generation.source_ids`), gives their ids to the search
part of that function (`generate_from_ids`) in length order, `batch_size`
at a time, and turns its tensors into `Translation`s.
"""

import dataclasses
import sys

import numpy as np
import tensorflow as tf

from seq2seq_attn.config.search import SearchConfig
from seq2seq_attn.data.text_to_ids import bounded_text, input_bytes
from seq2seq_attn.decoding.generation import (
    TEXT,
    forced_alignments,
    generate,
    generate_from_ids,
    source_ids,
)
from seq2seq_attn.decoding.unk_replacement import replace_unknown_words
from seq2seq_attn.models.builder import alignment_model
from seq2seq_attn.models.inference import as_form
from seq2seq_attn.special_tokens import EOS_ID, PAD_ID, UNK_ID

SOURCE_IDS = tf.RaggedTensorSpec([None, None], tf.int32, ragged_rank=1)


@dataclasses.dataclass
class Translation:
    """One input sentence's result.

    Attributes:
        text: the best translation ("" for an empty input).
        score: its ranking score.
        nbest: `(text, score)` pairs, best first (N of them).
        tokens: the best hypothesis's target ids, </s> excluded.
        source_ids: the source ids the model read.
        alignment: [len(tokens) + 1, len(source_ids)] attention weights of the
            best hypothesis (the last row is </s>'s), or None for empty input.
        input_tokens: the source tokens before `max_input_tokens` cut them
            (more than `len(source_ids)` if they did; of a very long input,
            those in the bytes read, `text_to_ids.input_bytes`).
        cut: whether `max_input_tokens` cut the input (the search's, or the
            model's own where it reads fewer: `Translator`).
    """

    text: str
    score: float
    nbest: list
    tokens: np.ndarray
    source_ids: np.ndarray
    alignment: np.ndarray | None
    input_tokens: int = 0
    cut: bool = False


class Translator:
    """The translation task: a trained model, its two tokenizers and a
    `SearchConfig`, with one in-graph generate function (`generation`) that
    Python, evaluate, the trainer's validation and the SavedModel's
    signatures all run.

    Args:
        model: a model from `build_model`, or an `EnsembleForm` (several
            models sharing vocabularies, Luong 4.2).
        source_tokenizer, target_tokenizer: the model's tokenizers.
        search: a `SearchConfig`; or give its fields as keyword `options`
            (`beam_size=5`, `nbest`, `scoring`, `max_length_a`,
            `max_length_b`, `no_repeat_ngram_size=0`, `max_input_tokens=100`,
            `batch_size=64`). A model that reads fewer source tokens
            (Luong's location score: `max_source_positions`) lowers
            `max_input_tokens` to those, in `config`.
        replace_unk: replace each <unk> of the output by the source word it
            attends to most (Luong 4.2); needs a word target tokenizer.
        dictionary: with `replace_unk`, a source -> target word mapping (see
            `unk_replacement.load_dictionary`).
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        search=None,
        replace_unk=False,
        dictionary=None,
        **options,
    ):
        if search is not None and options:
            raise ValueError(
                f"give a SearchConfig or its fields, not both: {options}"
            )
        if replace_unk and getattr(target_tokenizer, "kind", None) != "word":
            raise ValueError(
                "replace_unk needs a word-level target vocabulary; subword "
                "vocabularies have no <unk> to replace"
            )
        self.form = as_form(model)
        self.config = _within_the_model(
            search or SearchConfig.for_command("translate", **options),
            self.form.max_source_tokens,
        )
        self.replace_unk = replace_unk
        self.dictionary = dictionary
        # The Keras models (several for an ensemble).
        forms = getattr(self.form, "forms", [self.form])
        self.models = [form.model for form in forms]
        self.config.check_memory(target_tokenizer.vocab_size, len(self.models))
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer
        self._aligner = None
        self._traced = {}

    def graph_generate(self, text, nbest=None, details=True):
        """`generation.generate` of string [B] `text` with this task's
        model, tokenizers and search, as graph ops: what the SavedModel's
        signatures trace."""
        return generate(
            self.form,
            self.source_tokenizer,
            self.target_tokenizer,
            self.config,
            text,
            nbest or self.config.nbest,
            details,
        )

    def generate(self, text, nbest=None, details=True):
        """`graph_generate` as one traced `tf.function` per (nbest,
        details): string [B] in, a dict of tensors out."""
        key = (nbest or self.config.nbest, details)
        traced = self._traced_once(
            ("text", *key), lambda text: self.graph_generate(text, *key), TEXT
        )
        return traced(tf.convert_to_tensor(text, tf.string))

    def generate_from_ids(self, ids, nbest=None, details=True):
        """`generation.generate_from_ids` of int32 ragged [B, (T)] source
        ids (from `tokenize`), as one traced `tf.function` per (nbest,
        details)."""
        key = (nbest or self.config.nbest, details)
        traced = self._traced_once(
            ("ids", *key),
            lambda ids: generate_from_ids(
                self.form, self.target_tokenizer, self.config, ids, *key
            ),
            SOURCE_IDS,
        )
        return traced(ids)

    def _traced_once(self, key, function, spec):
        """`function` of one input of `spec` as a `tf.function`, made once
        per `key` and kept."""
        if key not in self._traced:
            self._traced[key] = tf.function(
                function, input_signature=[spec], autograph=False
            )
        return self._traced[key]

    def align(self, text, target):
        """Forced decoding of `target` [B] as translations of `text` [B]
        (Luong 5.4): `source_tokens` [B, Tx], `target_tokens` [B, Ty]
        (padded with ""), `alignment` float32 [B, Ty, Tx]."""
        if len(self.models) > 1:
            raise ValueError("align takes one model, not an ensemble")
        if self._aligner is None:
            self._aligner = alignment_model(self.models[0])
        return forced_alignments(
            self._aligner,
            self.source_tokenizer,
            self.target_tokenizer,
            self.config.max_input_tokens,
            text,
            target,
        )

    def tokenize(self, sentences, chunk=8192):
        """`(ids, input_tokens, cut)` of a list of sentences, as `generate`
        makes them (`generation.source_ids`), `chunk` sentences at a time:
        int32 ragged [B, (T)] source ids cut to `max_input_tokens`, and
        NumPy [B] arrays of the tokens before the cut and whether it cut."""
        parts = [
            source_ids(
                self.source_tokenizer,
                tf.constant(sentences[start : start + chunk], tf.string),
                self.config.max_input_tokens,
            )
            for start in range(0, len(sentences), chunk)
        ] or [(tf.ragged.constant([], tf.int32, ragged_rank=1), [], [])]
        ids, input_tokens, cut = zip(*parts, strict=True)
        return (
            tf.concat(ids, axis=0),
            np.concatenate(input_tokens).astype(np.int32),
            np.concatenate(cut).astype(bool),
        )

    def encode(self, sentences):
        """Source ids of each sentence (cut to `max_input_tokens`): int32
        ragged [B, (T)]."""
        return self.tokenize(list(sentences))[0]

    def translate(self, sentences, progress=False):
        """The best translation of one sentence (a string) or of each of a
        list of sentences (a list of strings, in their order).

        An empty or whitespace-only sentence gives "". With `progress`, a
        progress bar goes to stderr. `translations` gives the scores, the
        n-best lists and the alignments too.
        """
        if isinstance(sentences, str):
            return self.translations([sentences])[0].text
        return [t.text for t in self.translations(sentences, progress)]

    def translations(self, sentences, progress=False):
        """The `Translation` of each of a list of sentences, in their order.

        An empty or whitespace-only sentence gives an empty translation.
        The sentences are tokenized once (`tokenize`), sorted by length
        and searched `batch_size` at a time (`generate_from_ids`), the
        chunks `generate`'s own sort would make of the whole list; with
        `progress`, a progress bar goes to stderr.
        """
        if isinstance(sentences, (str, bytes)):
            raise TypeError(
                "translations() takes a list of sentences, got one string "
                f"({sentences[:40]!r}); translate(sentence) takes one"
            )
        sentences = list(sentences)
        ids, input_tokens, cut = self.tokenize(sentences)
        order = np.argsort(ids.row_lengths().numpy(), kind="stable")
        results = [None] * len(sentences)
        size = self.config.batch_size
        for done in range(0, len(order), size):
            chunk = order[done : done + size]
            found = self.generate_from_ids(tf.gather(ids, chunk))
            found = {name: x.numpy() for name, x in found.items()}
            found.update(input_tokens=input_tokens[chunk], cut=cut[chunk])
            for row, i in enumerate(chunk):
                results[i] = _translation(found, row)
            if self.replace_unk:
                self._replace_unknown_words(
                    [results[i] for i in chunk], sentences, chunk
                )
            if progress:
                _progress(done + len(chunk), len(order))
        if progress and len(order):
            sys.stderr.write("\n")
        return results

    def _replace_unknown_words(self, translations, sentences, indices):
        texts = tf.constant([sentences[i] for i in indices], tf.string)
        limit = self.config.max_input_tokens
        if limit:
            texts, _ = bounded_text(texts, input_bytes(limit))
        sources = self.source_tokenizer.tokens(texts)
        for translation, source in zip(
            translations, sources.to_list(), strict=True
        ):
            if not (translation.tokens == UNK_ID).any():
                continue
            words = self.target_tokenizer.id_to_token(
                translation.tokens
            ).numpy()
            replaced = replace_unknown_words(
                [w.decode("utf-8") for w in words],
                translation.alignment,
                [w.decode("utf-8") for w in source],
                self.dictionary,
            )
            translation.text = " ".join(replaced)
            translation.nbest[0] = (translation.text, translation.score)


def _within_the_model(config, max_source_tokens):
    """`config` whose `max_input_tokens` is at most `max_source_tokens`
    (None: any number), the cut of every input the model reads."""
    limit = config.max_input_tokens
    if max_source_tokens and (limit is None or limit > max_source_tokens):
        return dataclasses.replace(config, max_input_tokens=max_source_tokens)
    return config


def _translation(found, row):
    """The `Translation` of row `row` of `generate`'s outputs (NumPy)."""
    source_ids = found["source_ids"][row]
    source_ids = source_ids[: int((source_ids != PAD_ID).sum())]
    translation = Translation(
        "", 0.0, [("", 0.0)], source_ids, source_ids, None
    )
    if len(source_ids):
        length = found["lengths"][row, 0]
        best = found["tokens"][row, 0, :length]
        if length and best[-1] == EOS_ID:
            best = best[:-1]
        translation = Translation(
            text=found["texts"][row, 0].decode("utf-8"),
            score=float(found["scores"][row, 0]),
            nbest=[
                (text.decode("utf-8"), float(score))
                for text, score in zip(
                    found["texts"][row], found["scores"][row], strict=True
                )
            ],
            tokens=best,
            source_ids=source_ids,
            alignment=found["alignments"][row, :length, : len(source_ids)],
        )
    translation.input_tokens = int(found["input_tokens"][row])
    translation.cut = bool(found["cut"][row])
    return translation


def _progress(done, total, width=30):
    filled = int(width * done / max(total, 1))
    sys.stderr.write(
        f"\rtranslating [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
    )
    sys.stderr.flush()

"""From sentences to translations: tokenize, search in batches, detokenize.

`Translator` sorts the input by length so that batches carry little padding,
runs one traced search function per batch, and returns the results in input
order. Strings are handled only here, at the edge; the search sees ids.
"""

import dataclasses
import sys

import numpy as np
import tensorflow as tf

from seq2seq_attn.data.special_tokens import EOS_ID, UNK_ID
from seq2seq_attn.data.text_to_ids import (
    input_bytes,
    padded_ids,
    sentence_ids_in_chunks,
    utf8_prefix,
)
from seq2seq_attn.decoding.search import detokenize_hypotheses
from seq2seq_attn.decoding.search import search as search_ids
from seq2seq_attn.decoding.search_config import SearchConfig
from seq2seq_attn.decoding.unk_replacement import replace_unknown_words
from seq2seq_attn.models.inference import as_form


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
        cut: whether `max_input_tokens` cut the input.
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
    """Translates sentences with a trained model.

    Args:
        model: a model from `build_model` (or `load_trained`), or an
            `InferenceForm`/`EnsembleForm`.
        source_tokenizer, target_tokenizer: the model's tokenizers.
        search: a `SearchConfig`; or give its fields as keyword `options`
            (`beam_size=5`, `nbest`, `scoring`, `max_length_a`,
            `max_length_b`, `max_input_tokens=100`, `batch_size=64`).
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
        self.config = search or SearchConfig.for_command("translate", **options)
        self.replace_unk = replace_unk
        self.dictionary = dictionary
        self.form = as_form(model)
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer

        @tf.function(
            input_signature=[
                tf.RaggedTensorSpec([None, None], tf.int32, 1, tf.int64),
                tf.TensorSpec([None], tf.int32),
            ],
            autograph=False,
        )
        def search_batch(ids, rows):
            """The search of the sentences `rows` of ragged `ids`."""
            source_ids = padded_ids(tf.gather(ids, rows))
            result = search_ids(self.form, source_ids, self.config)
            texts = detokenize_hypotheses(self.target_tokenizer, result.tokens)
            return (
                result.tokens,
                result.lengths,
                result.scores,
                result.alignments,
                texts,
            )

        self._search = search_batch

    def encode(self, sentences):
        """Source ids of each sentence (cut to `max_input_tokens`): int32
        ragged [B, (T)]."""
        return sentence_ids_in_chunks(
            self.source_tokenizer,
            list(sentences),
            self.config.max_input_tokens,
        )

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
        With `progress`, a progress bar goes to stderr.
        """
        if isinstance(sentences, (str, bytes)):
            raise TypeError(
                "translations() takes a list of sentences, got one string "
                f"({sentences[:40]!r}); translate(sentence) takes one"
            )
        sentences = list(sentences)
        limit = self.config.max_input_tokens
        # The tokens of the bytes that can hold `limit` of them, counted
        # past the limit to tell the cut inputs.
        max_bytes = limit and input_bytes(limit)
        full = sentence_ids_in_chunks(
            self.source_tokenizer, sentences, bound_bytes=max_bytes
        )
        input_tokens = full.row_lengths().numpy()
        ids = full[:, :limit]
        rows = [np.asarray(row, "int32") for row in ids.to_list()]
        results = [
            Translation("", 0.0, [("", 0.0)], row, row, None) for row in rows
        ]
        order = sorted(
            (i for i, row in enumerate(rows) if len(row)),
            key=lambda i: len(rows[i]),
        )
        for done in range(0, len(order), self.config.batch_size):
            chunk = order[done : done + self.config.batch_size]
            found = [
                x.numpy()
                for x in self._search(ids, tf.constant(chunk, tf.int32))
            ]
            for r, i in enumerate(chunk):
                results[i] = _translation([x[r] for x in found], rows[i])
                results[i].input_tokens = int(input_tokens[i])
                results[i].cut = bool(
                    input_tokens[i] > len(rows[i])
                    or max_bytes
                    and _byte_length(sentences[i]) > max_bytes
                )
            if self.replace_unk:
                self._replace_unknown_words(
                    [results[i] for i in chunk], sentences, chunk
                )
            if progress:
                _progress(done + len(chunk), len(order))
        if progress and order:
            sys.stderr.write("\n")
        return results

    def _replace_unknown_words(self, translations, sentences, indices):
        texts = tf.constant([sentences[i] for i in indices], tf.string)
        limit = self.config.max_input_tokens
        if limit:
            texts = utf8_prefix(texts, input_bytes(limit))
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


def _byte_length(sentence):
    """The UTF-8 bytes of a sentence given as `str` or `bytes`."""
    if isinstance(sentence, str):
        return len(sentence.encode("utf-8", "surrogatepass"))
    return len(sentence)


def _translation(found, source_ids):
    """The `Translation` of one sentence from its row of a search's
    `(tokens, lengths, scores, alignments, texts)`."""
    tokens, lengths, scores, alignments, texts = found
    length = lengths[0]
    best = tokens[0, :length]
    if length and best[-1] == EOS_ID:
        best = best[:-1]
    return Translation(
        text=texts[0].decode("utf-8"),
        score=float(scores[0]),
        nbest=[
            (text.decode("utf-8"), float(score))
            for text, score in zip(texts, scores, strict=True)
        ],
        tokens=best,
        source_ids=source_ids,
        alignment=alignments[0, :length, : len(source_ids)],
    )


def _progress(done, total, width=30):
    filled = int(width * done / max(total, 1))
    sys.stderr.write(
        f"\rtranslating [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
    )
    sys.stderr.flush()

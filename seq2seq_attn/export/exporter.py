"""A SavedModel that translates raw text, for stock TF Serving.

Tokenization, beam search and detokenization all run inside the graph, with
core TensorFlow ops and tensorflow-text ops only (no `py_function`, no custom
op), and the vocabularies travel in the SavedModel's assets. Signatures:

- `serving_default`: `text` string [B] -> `translation` string [B],
  `score` float32 [B];
- `translate_nbest`: `text` -> `translations` string [B, N], `scores` [B, N];
- `align`: `text`, `target` string [B] -> `source_tokens` string [B, Tx],
  `target_tokens` string [B, Ty] (padded with ""), `alignment` float32
  [B, Ty, Tx], by forced decoding of `target`.

Every row gets a defined output: invalid UTF-8 is replaced by U+FFFD, input
is cut to `max_input_tokens` tokens, and an input with no token (empty or
whitespace only) translates to "" with score 0. A request of the wrong form
(a scalar or a 2-D `text`, `text` and `target` of different lengths) gets an
`InvalidArgumentError` that says so, checked before any TF Text op runs: those
ops may crash the process on a scalar. The search runs on sorted chunks of
`batch_size` sentences inside the graph, so that a large request costs what
its chunks cost, no more per sentence.
"""

import dataclasses
import os
import pathlib
import re
import shutil
import tempfile

import keras
import tensorflow as tf

from seq2seq_attn.data.special_tokens import PAD_ID
from seq2seq_attn.data.text_to_ids import padded_ids, sentence_ids
from seq2seq_attn.decoding.forced_alignment import forced_alignment
from seq2seq_attn.decoding.search import detokenize_hypotheses, search
from seq2seq_attn.decoding.search_config import SearchConfig
from seq2seq_attn.models.builder import alignment_model
from seq2seq_attn.models.inference import InferenceForm

TEXT = tf.TensorSpec([None], tf.string, name="text")
TARGET = tf.TensorSpec([None], tf.string, name="target")


def checked_vector(strings, name):
    """`strings` if it is a vector, else an `InvalidArgumentError` naming
    `name`. `EnsureShape` runs in the graph, whatever the signature's static
    shape says; a rank assertion would be resolved at trace time instead."""
    return tf.ensure_shape(strings, [None], name=f"{name}_must_be_a_vector")


def checked_pair(text, target):
    """`text` and `target`, checked to be vectors of the same length."""
    text = checked_vector(text, "text")
    target = checked_vector(target, "target")
    same_rows = tf.debugging.assert_equal(
        tf.shape(text)[0],
        tf.shape(target)[0],
        message="align: text and target must have the same number of rows",
    )
    with tf.control_dependencies([same_rows]):
        return tf.identity(text), tf.identity(target)


class TranslationModule:
    """What is exported: model, tokenizers and the signature functions.

    `export` writes it through `keras.export.ExportArchive`, which tracks the
    model's variables and the tokenizers' tables and assets in a form that a
    TF1 session loader (TF Serving, `saved_model_cli run`) restores; a
    `tf.Module` holding the Keras model directly does not.

    Args:
        model: a trained model from `build_model`.
        source_tokenizer, target_tokenizer: its tokenizers.
        search: a `SearchConfig` (`serving_default` returns its best
            hypothesis, `translate_nbest` its `nbest`); or give its fields
            as keyword `options`, with the export's defaults
            (`SearchConfig.for_command("export")`: 5 hypotheses). A
            request's sentences are sorted by length and searched in chunks
            of `batch_size`; inputs are cut to `max_input_tokens`.
    """

    def __init__(
        self, model, source_tokenizer, target_tokenizer, search=None, **options
    ):
        if search is not None and options:
            raise ValueError(
                f"give a SearchConfig or its fields, not both: {options}"
            )
        self.config = search or SearchConfig.for_command("export", **options)
        self.model = model
        self._form = InferenceForm(model)
        self._aligner = alignment_model(model)
        self.source_tokenizer = source_tokenizer
        self.target_tokenizer = target_tokenizer

    def _source_ids(self, text):
        return padded_ids(
            sentence_ids(
                self.source_tokenizer, text, self.config.max_input_tokens
            )
        )

    def _search(self, text, nbest):
        """Texts and scores [B, nbest]: the rows sorted by length, searched
        `batch_size` at a time, and put back in their order."""
        source = self._source_ids(checked_vector(text, "text"))
        lengths = tf.reduce_sum(tf.cast(source != PAD_ID, tf.int32), axis=1)
        order = tf.argsort(lengths, stable=True)
        size = self.config.batch_size
        chunks = (tf.shape(source)[0] + size - 1) // size

        def search_chunk(index, texts, scores):
            rows = order[index * size : (index + 1) * size]
            width = tf.maximum(tf.reduce_max(tf.gather(lengths, rows)), 1)
            chunk_texts, chunk_scores = self._search_rows(
                tf.gather(source, rows)[:, :width], nbest
            )
            return (
                index + 1,
                texts.write(index, chunk_texts),
                scores.write(index, chunk_scores),
            )

        def results(dtype):
            return tf.TensorArray(
                dtype,
                size=chunks,
                infer_shape=False,
                element_shape=[None, nbest],
            )

        _, texts, scores = tf.while_loop(
            lambda index, *_: index < chunks,
            search_chunk,
            (tf.constant(0), results(tf.string), results(tf.float32)),
        )
        back = tf.math.invert_permutation(order)
        return (
            tf.gather(texts.concat(), back),
            tf.gather(scores.concat(), back),
        )

    def _search_rows(self, source, nbest):
        """Texts and scores [B, nbest] of source ids [B, Tx]; a row with no
        token gets "" and 0."""
        config = dataclasses.replace(self.config, nbest=nbest)
        result = search(self._form, source, config)
        texts = detokenize_hypotheses(self.target_tokenizer, result.tokens)
        empty = tf.reduce_all(tf.equal(source, PAD_ID), axis=1)[:, None]
        texts = tf.where(empty, "", texts)
        scores = tf.where(empty, 0.0, result.scores)
        return texts, scores

    def serve(self, text):
        """`serving_default`: text [B] -> translation [B], score [B]."""
        texts, scores = self._search(text, 1)
        return {"translation": texts[:, 0], "score": scores[:, 0]}

    def translate_nbest(self, text):
        """`translate_nbest`: text [B] -> translations [B, N], scores [B, N]."""
        texts, scores = self._search(text, self.config.nbest)
        return {"translations": texts, "scores": scores}

    def align(self, text, target):
        """`align`: forced decoding of `target` -> source_tokens [B, Tx],
        target_tokens [B, Ty] (padded with ""), alignment [B, Ty, Tx]."""
        text, target = checked_pair(text, target)
        source = self._source_ids(text)
        target_ids = sentence_ids(
            self.target_tokenizer, target, self._max_target_tokens()
        )
        target, alignment = forced_alignment(self._aligner, source, target_ids)
        return {
            "source_tokens": self._tokens(self.source_tokenizer, source),
            "target_tokens": self._tokens(self.target_tokenizer, target),
            "alignment": alignment,
        }

    def _max_target_tokens(self):
        """A target to align may be twice as long as an input may."""
        limit = self.config.max_input_tokens
        return None if limit is None else 2 * limit

    @staticmethod
    def _tokens(tokenizer, ids):
        """The token strings of padded ids, "" on padding."""
        return tf.where(ids == PAD_ID, "", tokenizer.id_to_token(ids))


def next_version(export_dir):
    """1 + the largest integer folder name in `export_dir` (1 if none)."""
    export_dir = pathlib.Path(export_dir)
    versions = [
        int(path.name)
        for path in export_dir.glob("*")
        if path.is_dir() and path.name.isdigit()
    ]
    return max(versions, default=0) + 1


# A version being written: `.N.partial-PID-XXXX` beside the versions, a
# name TF Serving does not take for a version.
PARTIAL = re.compile(r"\.\d+\.partial-(\d+)-.+")


def _alive(pid):
    """Whether process `pid` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def remove_abandoned_exports(export_dir):
    """Removes the partial versions of exports whose process died (a
    `kill -9` or a crash); returns their names."""
    removed = []
    for path in pathlib.Path(export_dir).glob(".*.partial-*"):
        match = PARTIAL.fullmatch(path.name)
        if match and path.is_dir() and not _alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def check_export_dir(export_dir, version=None):
    """Refuses, before any work, a `version` below 1 or an `export_dir`
    that names a file."""
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or version < 1
    ):
        raise ValueError(
            f"version must be a positive integer (TF Serving loads only "
            f"those), got {version!r}"
        )
    export_dir = pathlib.Path(export_dir)
    if export_dir.exists() and not export_dir.is_dir():
        raise NotADirectoryError(
            f"{export_dir}: is a file; --export_dir is the folder of the "
            "version folders"
        )


def export(module, export_dir, version=None):
    """Writes `module` to `export_dir/<version>/` and returns that path.

    The version is written into a partial folder beside it and renamed into
    place once `saved_model.pb`, the variables and the assets are complete,
    so that TF Serving, which watches `export_dir` for the newest version,
    never sees half of one. A failed export removes its partial folder (and
    those that killed exports left behind)."""
    check_export_dir(export_dir, version)
    export_dir = pathlib.Path(export_dir)
    export_dir.mkdir(parents=True, exist_ok=True)
    remove_abandoned_exports(export_dir)
    version = version or next_version(export_dir)
    path = export_dir / str(version)
    if path.exists():
        raise FileExistsError(f"{path} exists; choose another --version")
    archive = keras.export.ExportArchive()
    archive.track(module.model)
    archive.track(module.source_tokenizer)
    archive.track(module.target_tokenizer)
    archive.add_endpoint("serving_default", module.serve, [TEXT])
    archive.add_endpoint("translate_nbest", module.translate_nbest, [TEXT])
    archive.add_endpoint("align", module.align, [TEXT, TARGET])
    partial = pathlib.Path(
        tempfile.mkdtemp(
            prefix=f".{version}.partial-{os.getpid()}-", dir=export_dir
        )
    )
    try:
        archive.write_out(str(partial), verbose=False)
        try:
            # Fails on a version folder another export has just written.
            os.rename(partial, path)
        except OSError as error:
            if path.exists():
                raise FileExistsError(
                    f"{path} exists; choose another --version"
                ) from error
            raise
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return path

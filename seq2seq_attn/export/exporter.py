"""A SavedModel that translates raw text, for stock TF Serving.

Tokenization, beam search and detokenization all run inside the graph, with
core TensorFlow ops and tensorflow-text ops only (no `py_function`, no custom
op), and the vocabularies travel in the SavedModel's assets. The signatures
are traces of the `Translator`'s own functions (`graph_generate`, `align`),
the ones Python's `translate` runs:

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

import pathlib

import keras

from seq2seq_attn.decoding.generation import TARGET, TEXT
from seq2seq_attn.folders import written_whole


def signatures(translator):
    """The SavedModel's signature functions, each a trace of the
    translator's own functions (`Translator.graph_generate`, `align`)."""

    def serve(text):
        """`serving_default`: text [B] -> translation [B], score [B]."""
        found = translator.graph_generate(text, 1, details=False)
        return {
            "translation": found["texts"][:, 0],
            "score": found["scores"][:, 0],
        }

    def translate_nbest(text):
        """`translate_nbest`: text [B] -> translations [B, N], scores [B, N]."""
        found = translator.graph_generate(text, details=False)
        return {"translations": found["texts"], "scores": found["scores"]}

    return {
        "serving_default": (serve, [TEXT]),
        "translate_nbest": (translate_nbest, [TEXT]),
        "align": (translator.align, [TEXT, TARGET]),
    }


def next_version(export_dir):
    """1 + the largest integer folder name in `export_dir` (1 if none)."""
    export_dir = pathlib.Path(export_dir)
    versions = [
        int(path.name)
        for path in export_dir.glob("*")
        if path.is_dir() and path.name.isdigit()
    ]
    return max(versions, default=0) + 1


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


def export(translator, export_dir, version=None):
    """Writes a `Translator` (one model: `align` needs one) to
    `export_dir/<version>/` and returns that path. `serving_default` returns
    the best hypothesis of its search, `translate_nbest` its `nbest`.

    The version is written into a partial folder beside it and renamed into
    place once `saved_model.pb`, the variables and the assets are complete
    (`folders.written_whole`), so that TF Serving, which watches
    `export_dir` for the newest version, never sees half of one. Its mode
    follows the umask, so that a server running as another user reads it.
    A failed export removes its partial folder (and those that killed
    exports on this host left behind)."""
    check_export_dir(export_dir, version)
    export_dir = pathlib.Path(export_dir)
    export_dir.mkdir(parents=True, exist_ok=True)
    version = version or next_version(export_dir)
    path = export_dir / str(version)
    if path.exists():
        raise FileExistsError(f"{path} exists; choose another --version")
    if len(translator.models) > 1:
        raise ValueError("the export takes one model, not an ensemble")
    # `keras.export.ExportArchive` tracks the model's variables and the
    # tokenizers' tables and assets in a form that a TF1 session loader
    # (TF Serving, `saved_model_cli run`) restores; a `tf.Module` holding
    # the Keras model directly does not.
    archive = keras.export.ExportArchive()
    archive.track(translator.models[0])
    archive.track(translator.source_tokenizer)
    archive.track(translator.target_tokenizer)
    for name, (function, signature) in signatures(translator).items():
        archive.add_endpoint(name, function, signature)
    try:
        with written_whole(path) as partial:
            archive.write_out(str(partial), verbose=False)
    except FileExistsError as error:  # another export wrote it meanwhile
        raise FileExistsError(
            f"{path} exists; choose another --version"
        ) from error
    return path

"""The workarounds for upstream bugs, and the versions they were tested
with; nothing else in the package touches a private TensorFlow or TF Text
name. Tested with tensorflow 2.20.0 + tensorflow-text 2.20.0 (the oldest
supported) and tensorflow 2.21.0 + tensorflow-text 2.21.1 (the newest).

tensorflow/text#570 (seen with tensorflow-text 2.4 to 2.21.1):
`tensorflow_text.SentencepieceTokenizer` creates its model resource without
a `shared_name`, which makes the resource private to the kernel of the op
that made it. In eager mode anything that clears TensorFlow's kernel cache
(`tf.random.set_seed`, `keras.utils.set_random_seed`) deletes it, and the
next `tokenize` fails with "Resource ... SentencepieceOp ... does not
exist". TF Text has no public way to name the resource, so
`sentencepiece_tokenizer` names it after the model's sha256 (identical
models share it) through TF Text's own resource class. Where that class is
missing (a TF Text this was not tested with), the tokenizer is TF Text's as
it comes, which works until the kernel cache is cleared.

tensorflow/tensorflow#100442 (seen with tensorflow 2.21.0, not 2.20.0):
`import tensorflow` writes C++ log lines that `TF_CPP_MIN_LOG_LEVEL` does
not hold back, since they come before absl's logging is initialised
("WARNING: All log messages before absl::InitializeLog() is called are
written to STDERR", then "I... cudart_stub.cc:31] Could not find cuda
drivers", "I... port.cc:153] oneDNN custom operations are on"), twice.
`import_tensorflow_quietly` imports TensorFlow with the process's stderr
caught and writes back every line but those below the level.
"""

import hashlib
import os
import re
import sys
import tempfile

# An absl / glog line: severity letter, date, time, thread, file:line]
# ("I0000 00:00:1796610467.684773   12799 cudart_stub.cc:31] ...").
_LOG_LINE = re.compile(rb"^([IWEF])\d{4} [\d:.]+ +\d+ \S+:\d+\] ")
_BEFORE_INIT = b"WARNING: All log messages before absl::InitializeLog()"
_LEVELS = {b"I": 0, b"W": 1, b"E": 2, b"F": 3}


def sentencepiece_tokenizer(model, out_type=None):
    """A `tensorflow_text.SentencepieceTokenizer` of the serialized `model`
    (ids of `out_type`, int32 by default) whose resource survives a cleared
    kernel cache."""
    import tensorflow as tf
    import tensorflow_text as tf_text
    from tensorflow_text.python.ops import sentencepiece_tokenizer as upstream

    tokenizer = tf_text.SentencepieceTokenizer(
        model=model, out_type=out_type or tf.int32
    )
    resource_class = getattr(upstream, "_SentencepieceModelResource", None)
    if resource_class is not None:
        tokenizer._model_resource = _named_resource(
            resource_class, upstream, model
        )
    return tokenizer


def _named_resource(resource_class, upstream, model):
    name = "seq2seq_attn_sentencepiece_" + hashlib.sha256(model).hexdigest()

    class NamedModelResource(resource_class):
        def _create_resource(self):
            return upstream.gen_sentencepiece_tokenizer.sentencepiece_op(
                model=self._model, shared_name=name
            )

    return NamedModelResource(model, "SentencepieceModel")


def import_tensorflow_quietly():
    """`import tensorflow`, its start-up log lines below
    `TF_CPP_MIN_LOG_LEVEL` held back (tensorflow/tensorflow#100442); every
    other line it writes to stderr comes through, in order."""
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0")
    if "tensorflow" in sys.modules or level not in ("1", "2", "3"):
        import tensorflow  # noqa: F401

        return
    sys.stderr.flush()
    stderr = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            import tensorflow  # noqa: F401
        finally:
            sys.stderr.flush()
            os.dup2(stderr, 2)
            os.close(stderr)
            caught.seek(0)
            os.write(2, _kept_lines(caught.read(), int(level)))


def _kept_lines(text, level):
    """The lines of `text` (bytes) a `TF_CPP_MIN_LOG_LEVEL` of `level`
    shows: absl / glog lines of a lower severity, and absl's note that it
    is not initialised, are dropped."""
    kept = []
    for line in text.splitlines(keepends=True):
        if line.startswith(_BEFORE_INIT):
            continue
        found = _LOG_LINE.match(line)
        if found and _LEVELS[found.group(1)] < level:
            continue
        kept.append(line)
    return b"".join(kept)

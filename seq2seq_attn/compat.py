"""The one workaround for an upstream bug, and the versions it is pinned to
(tensorflow 2.20.0, tensorflow-text 2.20.1); nothing else in the package
touches a private TensorFlow or TF Text name.

tensorflow/text#570 (seen with tensorflow-text 2.4 to 2.20.1, on TensorFlow
2.20.0): `tensorflow_text.SentencepieceTokenizer` creates its model resource
without a `shared_name`, which makes the resource private to the kernel of
the op that made it. In eager mode anything that clears TensorFlow's kernel
cache (`tf.random.set_seed`, `keras.utils.set_random_seed`) deletes it, and
the next `tokenize` fails with "Resource ... SentencepieceOp ... does not
exist". TF Text has no public way to name the resource, so
`sentencepiece_tokenizer` names it after the model's sha256 (identical
models share it) through TF Text's own resource class. Where that class is
missing (a TF Text this was not written against), the tokenizer is TF
Text's as it comes, which works until the kernel cache is cleared.
"""

import hashlib

import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.python.ops import sentencepiece_tokenizer as _upstream

PINNED = {"tensorflow": "2.20", "tensorflow-text": "2.20"}
_RESOURCE = getattr(_upstream, "_SentencepieceModelResource", None)


def sentencepiece_tokenizer(model, out_type=tf.int32):
    """A `tensorflow_text.SentencepieceTokenizer` of the serialized `model`
    whose resource survives a cleared kernel cache."""
    tokenizer = tf_text.SentencepieceTokenizer(model=model, out_type=out_type)
    if _RESOURCE is not None:
        tokenizer._model_resource = _named_resource(model)
    return tokenizer


def _named_resource(model):
    name = "seq2seq_attn_sentencepiece_" + hashlib.sha256(model).hexdigest()

    class NamedModelResource(_RESOURCE):
        def _create_resource(self):
            return _upstream.gen_sentencepiece_tokenizer.sentencepiece_op(
                model=self._model, shared_name=name
            )

    return NamedModelResource(model, "SentencepieceModel")

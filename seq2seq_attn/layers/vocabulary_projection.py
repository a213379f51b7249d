"""The vocabulary projection of Luong et al. (2015), Eq. 6."""

import keras
from keras import ops

from seq2seq_attn.serialization import register


@register
class VocabularyProjection(keras.layers.Dense):
    """W_s h~_t (+ bias): the logits of p(y_t | y_<t, x) = softmax(W_s h~_t).

    A `Dense` layer that computes in the layer's compute dtype (bfloat16
    under a mixed policy, where the matrix product is the largest of a step)
    and returns float32 logits, so that the softmax and the loss stay in
    float32. Its weights are a `Dense` layer's (`kernel`, `bias`).
    """

    def call(self, inputs):
        return ops.cast(super().call(inputs), "float32")

    def compute_output_spec(self, inputs):
        spec = super().compute_output_spec(inputs)
        return keras.KerasTensor(spec.shape, dtype="float32")

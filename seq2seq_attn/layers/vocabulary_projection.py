"""The vocabulary projection of Luong et al. (2015), Eq. 6."""

import keras
from keras import ops

from seq2seq_attn.layers.masking import on_real_positions
from seq2seq_attn.serialization import register


@register
class VocabularyProjection(keras.layers.Dense):
    """W_s h~_t (+ bias): the logits of p(y_t | y_<t, x) = softmax(W_s h~_t).

    A `Dense` layer that computes in the layer's compute dtype (bfloat16
    under a mixed policy, where the matrix product is the largest of a step)
    and returns float32 logits, so that the softmax and the loss stay in
    float32. Its weights are a `Dense` layer's (`kernel`, `bias`).

    Call arguments:
        inputs: h~_t, [..., n].
        target_mask: optional boolean [B, Ty], True on real target positions,
            with inputs [B, Ty, n]: only those are projected, and the logits
            of the others are 0.
    """

    def call(self, inputs, target_mask=None):
        if target_mask is None:
            return self._logits(inputs)
        return on_real_positions(self._logits, target_mask, inputs)

    def _logits(self, inputs):
        return ops.cast(super().call(inputs), "float32")

    def compute_output_spec(self, inputs, target_mask=None):
        spec = super().compute_output_spec(inputs)
        return keras.KerasTensor(spec.shape, dtype="float32")

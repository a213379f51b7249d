import keras
import numpy as np
import pytest

from seq2seq_attn.layers import VocabularyProjection


@pytest.mark.parametrize(
    "policy, atol", [("float32", 1e-5), ("mixed_bfloat16", 0.1)]
)
def test_logits_are_w_s_h_in_float32(policy, atol, rng):
    # Luong Eq. 6: softmax(W_s h~_t); the layer returns the logits W_s h~_t
    # + b, always float32, computed in the policy's compute dtype.
    layer = VocabularyProjection(
        11, bias_initializer="random_normal", dtype=policy
    )
    attentional = rng.normal(size=(2, 3, 5)).astype("float32")
    logits = layer(attentional)
    assert logits.dtype == "float32"
    assert layer.kernel.dtype == "float32"
    expected = attentional @ np.asarray(layer.kernel) + np.asarray(layer.bias)
    np.testing.assert_allclose(np.asarray(logits), expected, atol=atol)
    spec = layer.compute_output_spec(keras.KerasTensor((None, 3, 5)))
    assert spec.dtype == "float32" and spec.shape == (None, 3, 11)


def test_round_trips_through_its_config():
    layer = VocabularyProjection(7, name="output_projection")
    clone = VocabularyProjection.from_config(layer.get_config())
    assert isinstance(clone, VocabularyProjection) and clone.units == 7

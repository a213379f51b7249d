import numpy as np
import numpy_reference as ref
import pytest

from seq2seq_attn.layers import MaxoutDeepOutput

pytestmark = pytest.mark.both_ends  # the layers against NumPy


@pytest.mark.parametrize("pool_size", [2, 3])
def test_matches_equation(rng, pool_size):
    layer = MaxoutDeepOutput(
        3,
        vocab_size=11,
        pool_size=pool_size,
        bias_initializer="random_normal",
    )
    s = rng.normal(size=(2, 4, 5)).astype("float32")
    ey = rng.normal(size=(2, 4, 6)).astype("float32")
    c = rng.normal(size=(2, 4, 8)).astype("float32")
    logits = np.asarray(layer(s, ey, c))
    assert logits.shape == (2, 4, 11) and logits.dtype == np.float32
    w = [
        np.asarray(v)
        for v in (
            layer.state_kernel,
            layer.embedding_kernel,
            layer.context_kernel,
            layer.maxout_bias,
            layer.output_kernel,
            layer.output_bias,
        )
    ]
    for b in range(2):
        for i in range(4):
            expected = ref.maxout_deep_output(
                s[b, i], ey[b, i], c[b, i], *w, pool=pool_size
            )
            np.testing.assert_allclose(logits[b, i], expected, atol=1e-5)

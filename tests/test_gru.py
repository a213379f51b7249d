import numpy as np
import numpy_reference as ref
import pytest
from conftest import assert_skipping_padding_changes_nothing

from seq2seq_attn.layers import GRU, BidirectionalGRU

pytestmark = pytest.mark.both_ends  # the layers against NumPy

LENGTHS = [6, 3, 1]


def _inputs(rng, extra=0):
    x = rng.normal(size=(3, 6 + extra, 4)).astype("float32")
    mask = np.arange(6 + extra)[None, :] < np.array(LENGTHS)[:, None]
    return x, mask


def _params(layer):
    return [
        np.asarray(w)
        for w in (layer.kernel, layer.recurrent_kernel, layer.bias)
    ]


def test_bidirectional_matches_equations(rng):
    x, mask = _inputs(rng)
    layer = BidirectionalGRU(5, bias_initializer="random_normal")
    annotations, backward_first = layer(x, sequence_mask=mask)
    annotations = np.asarray(annotations)
    for b, length in enumerate(LENGTHS):
        sentence = x[b, :length]
        forward = ref.gru(sentence, np.zeros(5), *_params(layer.forward))
        # The backward RNN reads x_T .. x_1 of the real sentence (A.2.1).
        backward = ref.gru(
            sentence[::-1], np.zeros(5), *_params(layer.backward)
        )[::-1]
        expected = np.concatenate([forward, backward], axis=1)
        np.testing.assert_allclose(annotations[b, :length], expected, atol=1e-5)
        assert np.all(annotations[b, length:] == 0.0)
        np.testing.assert_allclose(
            np.asarray(backward_first)[b], backward[0], atol=1e-5
        )


def test_forward_gru_final_state_is_last_real_state(rng):
    x, mask = _inputs(rng)
    layer = GRU(5)
    outputs, final = layer(x, sequence_mask=mask)
    for b, length in enumerate(LENGTHS):
        np.testing.assert_allclose(
            np.asarray(final)[b], np.asarray(outputs)[b, length - 1], atol=1e-6
        )


def test_padding_invariance(rng):
    x, mask = _inputs(rng)
    layer = BidirectionalGRU(5)
    annotations, first = layer(x, sequence_mask=mask)
    x2, mask2 = _inputs(np.random.default_rng(1), extra=4)
    x2[:, :6] = x
    annotations2, first2 = layer(x2, sequence_mask=mask2)
    np.testing.assert_allclose(
        np.asarray(annotations2)[:, :6], np.asarray(annotations), atol=1e-6
    )
    np.testing.assert_allclose(np.asarray(first2), np.asarray(first), atol=1e-6)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_skipping_padding_changes_no_output_or_gradient(rng, traced):
    # Rows in no order of length; the longest ends before the padded width.
    lengths = [3, 6, 1, 5]
    x = rng.normal(size=(4, 7, 4)).astype("float32")
    mask = np.arange(7)[None, :] < np.array(lengths)[:, None]
    layer = BidirectionalGRU(5, bias_initializer="random_normal")
    layer(x, sequence_mask=mask)
    assert_skipping_padding_changes_nothing(
        lambda x, mask, skip: layer(x, sequence_mask=mask, skip_padding=skip),
        (x, mask),
        layer.trainable_variables,
        traced,
    )


@pytest.mark.parametrize("go_backwards", [False, True])
def test_skipping_padding_keeps_the_gradient_of_the_initial_state(
    rng, go_backwards
):
    # The loop over the live rows against the masked loop, gradients of
    # the initial state included, in both directions.
    lengths = [2, 4, 1]
    x = rng.normal(size=(3, 5, 4)).astype("float32")
    h0 = rng.normal(size=(3, 6)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    layer = GRU(6, go_backwards=go_backwards, bias_initializer="random_normal")
    layer(x, sequence_mask=mask, initial_state=h0)
    assert_skipping_padding_changes_nothing(
        lambda x, h0, mask, skip: layer(
            x, sequence_mask=mask, initial_state=h0, skip_padding=skip
        ),
        (x, h0, mask),
        layer.trainable_variables,
        traced=True,
    )

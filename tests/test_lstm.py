import numpy as np
import numpy_reference as ref
import pytest
from conftest import assert_skipping_padding_changes_nothing

from seq2seq_attn.layers import StackedLSTM

pytestmark = pytest.mark.both_ends  # the layers against NumPy


def test_stacked_lstm_matches_equations_and_steps(rng):
    lengths = [5, 2]
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    mask = np.arange(5)[None, :] < np.array(lengths)[:, None]
    layer = StackedLSTM(4, num_layers=2, bias_initializer="random_normal")
    outputs, final = layer(x, sequence_mask=mask)
    for b, length in enumerate(lengths):
        inputs, finals = x[b, :length], []
        for i in range(2):
            params = [
                np.asarray(w[i])
                for w in (layer.kernels, layer.recurrent_kernels, layer.biases)
            ]
            inputs, h, c = ref.lstm(inputs, np.zeros(4), np.zeros(4), *params)
            finals += [h, c]
        np.testing.assert_allclose(
            np.asarray(outputs)[b, :length], inputs, atol=1e-5
        )
        assert np.all(np.asarray(outputs)[b, length:] == 0.0)
        for got, want in zip(final, finals, strict=True):
            np.testing.assert_allclose(np.asarray(got)[b], want, atol=1e-5)
    state = layer.zero_state(2)
    for t in range(5):
        top, state = layer.step(x[:, t], state)
        np.testing.assert_allclose(
            np.asarray(top)[0], np.asarray(outputs)[0, t], atol=1e-6
        )


def test_dropout_only_in_training(rng):
    x = rng.normal(size=(2, 5, 3)).astype("float32")
    layer = StackedLSTM(4, num_layers=2, dropout=0.5)
    eval_a, _ = layer(x)
    eval_b, _ = layer(x, training=False)
    train, _ = layer(x, training=True)
    np.testing.assert_array_equal(np.asarray(eval_a), np.asarray(eval_b))
    assert not np.allclose(np.asarray(train), np.asarray(eval_a))


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_skipping_padding_changes_no_output_or_gradient(rng, traced):
    # Rows in no order of length, the longest ending before the padded
    # width; a random initial state, whose gradient must survive too, and
    # one empty row (its final state is the initial one).
    lengths = [3, 6, 0, 5]
    x = rng.normal(size=(4, 7, 3)).astype("float32")
    initial = [rng.normal(size=(4, 5)).astype("float32") for _ in range(4)]
    mask = np.arange(7)[None, :] < np.array(lengths)[:, None]
    layer = StackedLSTM(5, num_layers=2, bias_initializer="random_normal")
    layer(x, sequence_mask=mask)

    def outputs_and_final_state(x, mask, *initial, skip):
        outputs, state = layer(
            x, sequence_mask=mask, initial_state=initial, skip_padding=skip
        )
        return (outputs, *state)

    assert_skipping_padding_changes_nothing(
        outputs_and_final_state,
        (x, mask, *initial),
        layer.trainable_variables,
        traced,
    )

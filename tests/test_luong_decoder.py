"""The attentional LSTM decoder with input feeding (Luong Sec. 3.3) against
the equations in NumPy: the teacher-forced call and a loop of single
steps."""

import itertools

import numpy as np
import numpy_reference as ref
import pytest
import tensorflow as tf
from conftest import assert_skipping_padding_changes_nothing

from seq2seq_attn.layers import LuongDecoder

pytestmark = pytest.mark.both_ends  # the layers against NumPy

LENGTHS = [9, 4, 1]
WINDOW = 2


def _inputs(rng, units, layers):
    """Embeddings [3, 5, 4], memory [3, 9, units] with its mask (rows of
    LENGTHS) and an encoder state of 2 * layers tensors [3, units]."""
    target_embedding = rng.normal(size=(3, 5, 4)).astype("float32")
    memory = rng.normal(size=(3, 9, units)).astype("float32")
    mask = np.arange(9)[None, :] < np.array(LENGTHS)[:, None]
    initial = tuple(
        rng.normal(size=(3, units)).astype("float32") for _ in range(2 * layers)
    )
    return target_embedding, memory, mask, initial


def _decoder(units, layers, score, mode, input_feeding):
    """A decoder of `score` and `mode` attention over 12 source positions,
    with random biases."""
    return LuongDecoder(
        units,
        num_layers=layers,
        score=score,
        mode=mode,
        window=WINDOW,
        input_feeding=input_feeding,
        attention_units=5,
        max_source_length=12,
        bias_initializer="random_normal",
    )


@pytest.mark.parametrize(
    "score,mode",
    list(itertools.product(["general", "concat"], ["global", "local-p"]))
    + [("dot", "local-m"), ("location", "global")],
)
def test_input_feeding_matches_the_equations(rng, score, mode):
    units, layers = 6, 2
    decoder = _decoder(units, layers, score, mode, input_feeding=True)
    target_embedding, memory, mask, initial = _inputs(rng, units, layers)
    attentional, alignments = (
        np.asarray(t) for t in decoder(target_embedding, memory, mask, initial)
    )

    # The same steps one at a time, as a search runs them.
    state = decoder.initial_state(initial)
    keys = decoder.project_keys(memory)
    stepped = []
    for t in range(5):
        h_tilde, a_t, state = decoder.step(
            target_embedding[:, t], t, state, memory, keys, mask
        )
        stepped.append((np.asarray(h_tilde), np.asarray(a_t)))

    lstm = decoder.lstm
    lstm_weights = [
        tuple(np.asarray(w) for w in weights)
        for weights in zip(
            lstm.kernels, lstm.recurrent_kernels, lstm.biases, strict=True
        )
    ]
    attention_weights = {
        w.name: np.asarray(w) for w in decoder.attention.weights
    }
    W_c = np.asarray(decoder.combine_kernel)
    for b, length in enumerate(LENGTHS):

        def attend(h_t, h_bar, t):
            context, a_t, _ = ref.luong_attention(
                score, mode, WINDOW, h_t, h_bar, t, attention_weights
            )
            return context, a_t

        want_h, want_a = ref.luong_input_feeding_decoder(
            target_embedding[b],
            [(initial[2 * k][b], initial[2 * k + 1][b]) for k in range(layers)],
            memory[b, :length],
            lstm_weights,
            attend,
            W_c,
        )
        for got_h, got_a in (
            (attentional[b], alignments[b]),
            (
                np.stack([h for h, _ in stepped])[:, b],
                np.stack([a for _, a in stepped])[:, b],
            ),
        ):
            np.testing.assert_allclose(got_h, want_h, atol=1e-5)
            np.testing.assert_allclose(got_a[:, :length], want_a, atol=1e-5)
            assert np.all(got_a[:, length:] == 0)


def test_training_loop_with_dropout_matches_single_steps(rng):
    """With dropout on, the training loop (whose embeddings' share of layer
    1's product is computed for all steps before the loop) gives the steps
    a search runs with the same dropout masks."""
    units, layers, rate = 6, 2, 0.4
    decoder = LuongDecoder(
        units,
        num_layers=layers,
        score="general",
        input_feeding=True,
        dropout=rate,
        bias_initializer="random_normal",
    )
    target_embedding, memory, mask, initial = _inputs(rng, units, layers)
    decoder(target_embedding, memory, mask, initial)  # builds
    drawn = []
    draw = decoder.lstm.dropout_masks

    def recorded(*args):
        drawn.append(draw(*args))
        return drawn[-1]

    decoder.lstm.dropout_masks = recorded
    attentional, alignments = (
        np.asarray(t)
        for t in decoder(target_embedding, memory, mask, initial, training=True)
    )
    (masks,) = drawn
    assert masks[0].shape == (5, 3, 4 + units)  # [T, B, m + n]
    assert 0 < np.mean(np.asarray(masks[0]) == 0) < 1

    state = decoder.initial_state(initial)
    keys = decoder.project_keys(memory)
    for t in range(5):
        h_tilde, a_t, state = decoder.step(
            target_embedding[:, t],
            t,
            state,
            memory,
            keys,
            mask,
            dropout_masks=[m[t] for m in masks],
        )
        np.testing.assert_allclose(alignments[:, t], a_t, atol=1e-5)
        # The output's own dropout: kept entries are h~_t / (1 - rate).
        kept = attentional[:, t] != 0
        assert 0 < kept.mean() < 1
        np.testing.assert_allclose(
            attentional[:, t][kept] * (1 - rate),
            np.asarray(h_tilde)[kept],
            atol=1e-5,
        )


@pytest.mark.parametrize(
    "score,mode,feeding",
    [
        ("general", "local-p", True),
        ("dot", "local-m", True),
        ("location", "global", True),
        ("concat", "global", False),
        ("general", "local-p", False),
    ],
)
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_skipping_padding_changes_no_output_or_gradient(
    rng, score, mode, feeding, traced
):
    # Targets in no order of length, the longest ending before the padded
    # width. Past a row's end the skipping loop computes nothing, so the
    # outputs are compared (and differentiated) at the real positions.
    units, layers = 6, 2
    decoder = _decoder(units, layers, score, mode, input_feeding=feeding)
    target_embedding, memory, mask, initial = _inputs(rng, units, layers)
    target_mask = np.arange(5)[None, :] < np.array([3, 4, 1])[:, None]
    decoder(target_embedding, memory, mask, initial)  # builds

    def real_positions(embedding, memory, mask, target_mask, *initial, skip):
        outputs = decoder(
            embedding,
            memory,
            mask,
            initial,
            target_mask=target_mask,
            skip_padding=skip,
        )
        keep = tf.cast(target_mask, "float32")[:, :, None]
        return tuple(output * keep for output in outputs)

    assert_skipping_padding_changes_nothing(
        real_positions,
        (target_embedding, memory, mask, target_mask, *initial),
        decoder.trainable_variables,
        traced,
    )


def test_skipping_padding_needs_the_target_mask(rng):
    decoder = LuongDecoder(6, num_layers=2)
    target_embedding, memory, mask, initial = _inputs(rng, 6, 2)
    with pytest.raises(ValueError, match="needs the target_mask"):
        decoder(target_embedding, memory, mask, initial, skip_padding=True)

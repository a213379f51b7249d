"""The conditional GRU decoder (Bahdanau A.2.2) against the equations in
NumPy: the teacher-forced call, a loop of single steps, and RNNsearch's
inference step (per-sentence products, maxout deep output)."""

import numpy as np
import numpy_reference as ref
import pytest
from conftest import assert_skipping_padding_changes_nothing
from keras import ops

from seq2seq_attn.layers import GRUDecoder
from seq2seq_attn.models import ModelConfig, build_model
from seq2seq_attn.models.builder import named_layers
from seq2seq_attn.models.inference import InferenceForm

pytestmark = pytest.mark.both_ends  # the layers against NumPy

LENGTHS = [7, 3, 1]


def _numpy(*tensors):
    return [np.asarray(t) for t in tensors]


def _expected(decoder, target_embedding, memory, summary, b):
    init_kernel, init_bias = _numpy(decoder.init_kernel, decoder.init_bias)
    s_0 = np.tanh(summary[b] @ init_kernel + init_bias)
    weights = _numpy(
        decoder.embedding_kernel,
        decoder.context_kernel,
        decoder.recurrent_kernel,
        decoder.bias,
    )
    if decoder.attention is None:
        return ref.conditional_gru_decoder(
            target_embedding[b], s_0, memory[b], *weights
        )
    attention = decoder.attention
    return ref.conditional_gru_decoder(
        target_embedding[b],
        s_0,
        memory[b, : LENGTHS[b]],
        *weights,
        attention=_numpy(
            attention.query_kernel,
            attention.key_kernel,
            attention.bias,
            attention.score_vector,
        ),
    )


@pytest.mark.parametrize("attention_units", [4, None])
def test_call_and_single_steps_match_the_equations(rng, attention_units):
    decoder = GRUDecoder(
        5, attention_units=attention_units, bias_initializer="random_normal"
    )
    target_embedding = rng.normal(size=(3, 4, 6)).astype("float32")
    summary = rng.normal(size=(3, 8)).astype("float32")
    if attention_units:
        memory = rng.normal(size=(3, 7, 8)).astype("float32")
        mask = np.arange(7)[None, :] < np.array(LENGTHS)[:, None]
    else:
        memory, mask = summary, None
    outputs = _numpy(
        *decoder(target_embedding, memory, summary, memory_mask=mask)
    )

    # The same steps one at a time, as a search runs them.
    state = decoder.initial_state(summary)
    keys = decoder.project_keys(memory)
    stepped = []
    for i in range(4):
        projected = decoder.project_embedding(target_embedding[:, i])
        previous = state
        state, context, alignment = decoder.step(
            projected, state, memory, keys, mask
        )
        stepped.append(_numpy(previous, context))
        if attention_units:
            stepped[-1].append(np.asarray(alignment))

    for b in range(3):
        expected = _expected(decoder, target_embedding, memory, summary, b)
        names = ["s_{i-1}", "c_i", "alpha_i"][: len(outputs)]
        for k, name in enumerate(names):
            want = expected[k]
            got = outputs[k][b]
            one_by_one = np.stack([step[k][b] for step in stepped])
            if name == "alpha_i":
                assert np.all(got[:, LENGTHS[b] :] == 0)
                got, one_by_one = (
                    got[:, : LENGTHS[b]],
                    one_by_one[:, : LENGTHS[b]],
                )
            np.testing.assert_allclose(got, want, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(
                one_by_one, want, atol=1e-5, err_msg=name
            )


@pytest.mark.parametrize("architecture", ["rnnsearch", "rnnencdec"])
def test_the_inference_step_gives_the_equations_logits(rng, architecture):
    # Inference computes C c_i and C_o c_i as attention-weighted sums of
    # C h_j and C_o h_j projected once per sentence; the equations weigh h_j
    # first. Both must give the same p(y_i | y_<i, x) (Bahdanau A.2.2).
    model = build_model(
        ModelConfig(
            architecture=architecture,
            source_vocab_size=30,
            target_vocab_size=25,
            embedding_dim=6,
            hidden_units=5,
            attention_units=4,
            maxout_units=3,
            initializer="glorot",
        )
    )
    layers = named_layers(model)
    source = rng.integers(4, 30, size=(3, 7)).astype("int32")
    for b, length in enumerate(LENGTHS):
        source[b, length:] = 0
    target = rng.integers(4, 25, size=(3, 4)).astype("int32")
    form = InferenceForm(model)
    encoded, state = form.encode(source)
    logits = []
    for i in range(4):
        step_logits, _, state = form.step(target[:, i], i, state, encoded)
        logits.append(np.asarray(step_logits))

    mask = source != 0
    embedded = layers["source_embedding"](source)
    if architecture == "rnnsearch":
        memory, summary = _numpy(
            *layers["encoder"](embedded, sequence_mask=mask)
        )
    else:
        _, last = layers["encoder"](embedded, sequence_mask=mask)
        memory = summary = np.asarray(last)
    target_embedding = np.asarray(layers["target_embedding"](target))
    deep_output = layers["deep_output"]
    maxout_weights = _numpy(
        deep_output.state_kernel,
        deep_output.embedding_kernel,
        deep_output.context_kernel,
        deep_output.maxout_bias,
        deep_output.output_kernel,
        deep_output.output_bias,
    )
    for b in range(3):
        previous, contexts, _ = _expected(
            layers["decoder"], target_embedding, memory, summary, b
        )
        for i in range(4):
            want = ref.maxout_deep_output(
                previous[i],
                target_embedding[b, i],
                contexts[i],
                *maxout_weights,
            )
            np.testing.assert_allclose(logits[i][b], want, atol=1e-4)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("attention_units", [4, None])
@pytest.mark.parametrize("used", [3, 2], ids=["every_output", "as_in_training"])
def test_skipping_padding_changes_no_real_output_or_gradient(
    rng, attention_units, traced, used
):
    # Training reads s_{i-1} and c_i only: no gradient reaches alpha_i.
    # Rows in no order of length; the longest ends before the padded width.
    target_lengths = [2, 5, 1]
    target_embedding = rng.normal(size=(3, 6, 6)).astype("float32")
    target_mask = np.arange(6)[None, :] < np.array(target_lengths)[:, None]
    summary = rng.normal(size=(3, 8)).astype("float32")
    if attention_units:
        memory = rng.normal(size=(3, 7, 8)).astype("float32")
        memory_mask = np.arange(7)[None, :] < np.array(LENGTHS)[:, None]
    else:
        memory = summary
        memory_mask = np.ones((3, 1), dtype=bool)  # unused
    decoder = GRUDecoder(
        5, attention_units=attention_units, bias_initializer="random_normal"
    )
    decoder(target_embedding, memory, summary)  # builds the weights

    def decoded(
        target_embedding, memory, summary, memory_mask, target_mask, skip
    ):
        outputs = decoder(
            target_embedding,
            memory,
            summary,
            memory_mask=memory_mask if attention_units else None,
            target_mask=target_mask,
            skip_padding=skip,
        )
        # Only the real target positions count, as in training.
        real = ops.cast(target_mask, "float32")[:, :, None]
        return [output * real for output in outputs[:used]]

    assert_skipping_padding_changes_nothing(
        decoded,
        (target_embedding, memory, summary, memory_mask, target_mask),
        decoder.trainable_variables,
        traced,
    )


def test_skipping_padding_needs_the_target_mask(rng):
    decoder = GRUDecoder(5, attention_units=4, name="decoder")
    memory = rng.normal(size=(2, 3, 8)).astype("float32")
    with pytest.raises(ValueError, match="decoder: .*needs the target_mask"):
        decoder(
            rng.normal(size=(2, 4, 6)).astype("float32"),
            memory,
            memory[:, 0],
            skip_padding=True,
        )

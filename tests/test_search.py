import contextlib
import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import padded_batch

from seq2seq_attn.data import BOS_ID, EOS_ID, UNK_ID
from seq2seq_attn.decoding import Scoring, beam_search, greedy_search
from seq2seq_attn.models import InferenceForm, ModelConfig, build_model

TINY = dict(
    source_vocab_size=9,
    target_vocab_size=6,  # emits <unk>, 4, 5 and </s>
    embedding_dim=6,
    hidden_units=8,
    attention_units=5,
    maxout_units=4,
    initializer="glorot",
)
SCORINGS = [
    Scoring("none"),
    Scoring("average", alpha=0.75),
    Scoring("average", alpha=1.0),
    Scoring("gnmt", alpha=0.6),
    Scoring("gnmt", alpha=0.6, beta=0.2),
]


def _model(architecture="rnnsearch", **extra):
    keras.utils.set_random_seed(3)
    model = build_model(
        ModelConfig(architecture=architecture, **{**TINY, **extra})
    )
    # Sharpen the random model so that scorings disagree on the best output.
    for weight in model.weights:
        weight.assign(weight * 3.0)
    return model


def _brute_force(model, source, limit, scoring):
    """Every output of at most `limit` tokens ending in </s>, scored by
    teacher forcing; returns the best (tokens, score)."""
    words = [UNK_ID, 4, 5]
    candidates = [
        list(prefix) + [EOS_ID]
        for length in range(limit)
        for prefix in itertools.product(words, repeat=length)
    ]
    width = limit
    target_in = np.zeros((len(candidates), width), "int32")
    for row, tokens in enumerate(candidates):
        target_in[row, : len(tokens)] = [BOS_ID] + tokens[:-1]
    sources = np.repeat(source[None], len(candidates), axis=0)
    from seq2seq_attn.models import alignment_model

    logits, alignments = alignment_model(model)([sources, target_in])
    log_probs = tf.nn.log_softmax(logits).numpy()
    alignments = alignments.numpy()
    best = None
    for row, tokens in enumerate(candidates):
        total = sum(log_probs[row, t, token] for t, token in enumerate(tokens))
        coverage = alignments[row, : len(tokens)].sum(0)
        score = scoring.score(
            tf.constant([total], tf.float32),
            tf.constant([len(tokens)]),
            tf.constant(coverage[None], tf.float32),
            tf.constant((source != 0)[None]),
        ).numpy()[0]
        if best is None or score > best[1]:
            best = (tokens, score)
    return best, len(candidates)


@pytest.mark.parametrize("scoring", SCORINGS, ids=lambda s: f"{s}")
def test_wide_beam_finds_the_brute_force_best(scoring):
    model = _model()
    form = InferenceForm(model)
    source = np.array([5, 7, 4, 0], "int32")
    limit = 4  # ceil(0 * length + 4)
    (tokens, score), count = _brute_force(model, source, limit, scoring)
    result = beam_search(
        form,
        source[None],
        beam_size=count,
        scoring=scoring,
        max_length_a=0.0,
        max_length_b=limit,
    )
    found = result.tokens.numpy()[0, 0]
    assert list(found[: result.lengths.numpy()[0, 0]]) == tokens
    np.testing.assert_allclose(result.scores.numpy()[0, 0], score, atol=1e-4)


def test_beam_of_one_is_greedy(rng):
    model = _model()
    form = InferenceForm(model)
    source = padded_batch(rng, [6, 3, 8, 1], 9)
    greedy = greedy_search(form, source)
    beam = beam_search(form, source, beam_size=1)
    np.testing.assert_array_equal(beam.tokens.numpy(), greedy.tokens.numpy())
    np.testing.assert_array_equal(beam.lengths.numpy(), greedy.lengths.numpy())
    np.testing.assert_allclose(
        beam.scores.numpy(), greedy.scores.numpy(), atol=1e-5
    )
    np.testing.assert_allclose(
        beam.alignments.numpy(), greedy.alignments.numpy(), atol=1e-6
    )


@pytest.mark.parametrize("architecture", ["rnnsearch", "luong"])
def test_alone_or_in_a_batch_of_64_gives_the_same_result(architecture, rng):
    extra = (
        dict(num_layers=2, attention_mode="local-p")
        if architecture == "luong"
        else {}
    )
    model = _model(architecture, **extra)
    form = InferenceForm(model)
    batch = padded_batch(rng, list(rng.integers(1, 9, size=64)), 9)
    together = beam_search(form, batch, beam_size=4, nbest=2)
    for row in (0, 17, 63):
        alone = beam_search(form, batch[row : row + 1], beam_size=4, nbest=2)
        width = alone.tokens.shape[-1]
        np.testing.assert_array_equal(
            together.tokens.numpy()[row, :, :width], alone.tokens.numpy()[0]
        )
        assert not together.tokens.numpy()[row, :, width:].any()
        np.testing.assert_allclose(
            together.scores.numpy()[row], alone.scores.numpy()[0], atol=1e-5
        )


def test_nbest_attention_and_finishing():
    model = _model()
    form = InferenceForm(model)
    source = np.array([[5, 7, 4, 0], [6, 0, 0, 0]], "int32")
    result = beam_search(form, source, beam_size=5, nbest=3)
    scores = result.scores.numpy()
    assert np.all(np.diff(scores, axis=1) <= 1e-6), "n-best not sorted"
    tokens, lengths = result.tokens.numpy(), result.lengths.numpy()
    alignments = result.alignments.numpy()
    limits = np.ceil(1.5 * np.array([3, 1]) + 5)
    for b in range(2):
        hypotheses = {tuple(tokens[b, n, : lengths[b, n]]) for n in range(3)}
        assert len(hypotheses) == 3, "n-best has duplicates"
        for n in range(3):
            length = lengths[b, n]
            assert 1 <= length <= limits[b]
            assert tokens[b, n, length - 1] == EOS_ID
            assert not tokens[b, n, length:].any()
            np.testing.assert_allclose(
                alignments[b, n, :length].sum(-1), 1.0, atol=1e-5
            )
            assert not alignments[b, n, length:].any()
            assert not alignments[b, n, :, (source[b] == 0)].any()


def test_alignments_follow_the_returned_tokens():
    """Re-scoring the returned hypotheses by teacher forcing gives back
    their log-probabilities and attention matrices."""
    from seq2seq_attn.models import alignment_model

    model = _model()
    form = InferenceForm(model)
    source = np.array([[5, 7, 4, 8, 0]], "int32")
    result = beam_search(form, source, beam_size=4, nbest=4)
    aligner = alignment_model(model)
    for n in range(4):
        length = result.lengths.numpy()[0, n]
        tokens = result.tokens.numpy()[0, n, :length]
        target_in = np.concatenate([[BOS_ID], tokens[:-1]])[None].astype(
            "int32"
        )
        logits, alignments = aligner([source, target_in])
        log_probs = tf.nn.log_softmax(logits).numpy()[0]
        total = sum(log_probs[t, token] for t, token in enumerate(tokens))
        np.testing.assert_allclose(
            result.log_probs.numpy()[0, n], total, atol=1e-4
        )
        np.testing.assert_allclose(
            result.alignments.numpy()[0, n, :length],
            alignments.numpy()[0],
            atol=1e-5,
        )


def test_search_traces_in_a_tf_function():
    model = _model()
    form = InferenceForm(model)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def translate(source):
        result = beam_search(form, source, beam_size=3)
        return result.tokens, result.scores

    source = np.array([[5, 7, 4, 0], [6, 0, 0, 0]], "int32")
    tokens, scores = translate(source)
    eager = beam_search(form, source, beam_size=3)
    np.testing.assert_array_equal(tokens.numpy(), eager.tokens.numpy())
    np.testing.assert_allclose(scores.numpy(), eager.scores.numpy(), atol=1e-5)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_an_empty_batch_gives_empty_results(beam_size):
    form = InferenceForm(_model())

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def translate(source):
        if beam_size == 1:
            result = greedy_search(form, source)
        else:
            result = beam_search(form, source, beam_size=beam_size, nbest=2)
        return result.tokens, result.alignments, result.scores

    tokens, alignments, scores = translate(np.zeros((0, 4), "int32"))
    n = 1 if beam_size == 1 else 2
    assert tokens.shape[:2] == (0, n)
    assert alignments.shape[0] == 0 and alignments.shape[-1] == 4
    assert scores.shape == (0, n)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_search_traces_with_a_static_batch_shape(beam_size):
    form = InferenceForm(_model())
    source = np.array([[5, 7, 4, 0], [6, 0, 0, 0]], "int32")

    @tf.function  # no input signature: the shapes are static
    def translate():
        if beam_size == 1:
            return greedy_search(form, tf.constant(source)).tokens
        return beam_search(form, tf.constant(source), beam_size=3).tokens

    eager = (
        greedy_search(form, source)
        if beam_size == 1
        else beam_search(form, source, beam_size=3)
    )
    np.testing.assert_array_equal(translate().numpy(), eager.tokens.numpy())


def test_top_k_cuts_the_vocabulary_without_padding_where_it_can():
    from seq2seq_attn.decoding.search_step import chunk_size

    # A divisor near 64 where there is one (no copy of [N, V] to pad it),
    # 64 and padding where there is none.
    for vocab in (4000, 8000, 10000, 32000):
        chunk = chunk_size(vocab)
        assert vocab % chunk == 0 and 32 <= chunk <= 128, (vocab, chunk)
    assert chunk_size(8000) == 64
    assert chunk_size(7859) == 29  # 29 x 271: within a factor of four
    assert chunk_size(7853) == 64  # a prime
    assert chunk_size(None) == 64


@pytest.mark.parametrize("vocab", [7859, 10000, 100])
def test_two_pass_top_k_is_exact_with_ties(rng, vocab):
    from seq2seq_attn.decoding.search_step import top_k

    scores = rng.normal(size=(40, vocab)).astype("float32")
    scores[:5] = np.round(scores[:5])  # many ties, across chunks
    scores[5, ::100] = 9.0  # the maximum in many chunks
    scores[6:8, [0, 2]] = 50.0  # the excluded ids are the rows' maxima
    masked = scores.copy()
    masked[:, [0, 2]] = -np.inf  # <pad> and <s>
    for k in (1, 5, 12):
        expected_values, expected_ids = tf.math.top_k(masked, k)
        for chosen in (top_k(masked, k), top_k(scores, k, excluded=(0, 2))):
            np.testing.assert_array_equal(chosen[0], expected_values)
            np.testing.assert_array_equal(chosen[1], expected_ids)


def _weight_casts_in_loops(function, source):
    """How many casts of a weight (a variable read) the while loops'
    bodies run."""
    graph = function.get_concrete_function(source).graph.as_graph_def()
    count = 0
    for body in graph.library.function:
        if "body" not in body.signature.name:
            continue
        ops = {node.name: node.op for node in body.node_def}
        count += sum(
            node.op == "Cast"
            and ops.get(node.input[0].split(":")[0]) == "ReadVariableOp"
            for node in body.node_def
        )
    return count


@pytest.mark.parametrize("architecture", ["rnnsearch", "luong"])
@pytest.mark.parametrize("search", [greedy_search, beam_search])
def test_mixed_precision_casts_the_weights_once_per_batch(
    architecture, search, rng
):
    from seq2seq_attn.model_dir import build_with_precision

    keras.utils.set_random_seed(3)
    config = ModelConfig(architecture=architecture, **TINY)
    assert InferenceForm(build_model(config)).cast_weights() == []
    form = InferenceForm(build_with_precision(config, "bfloat16"))
    weights = form.cast_weights()
    assert weights and {dtype for _, dtype in weights} == {"bfloat16"}
    source = tf.constant(padded_batch(rng, [5, 3, 7, 1], 9))

    class CastingAtEveryStep(InferenceForm):
        """The same model, with Keras's casts at every weight read."""

        def weights_cast_once(self):
            return contextlib.nullcontext()

    def traced(form):
        return tf.function(lambda s: vars(search(form, s)))

    once = traced(form)
    every_step = traced(CastingAtEveryStep(form.model))
    expected, result = every_step(source), once(source)
    for name, wanted in expected.items():
        np.testing.assert_array_equal(result[name], wanted, err_msg=name)
    assert _weight_casts_in_loops(every_step, source) > 0
    assert _weight_casts_in_loops(once, source) == 0


def test_candidates_are_normalised_like_log_softmax(rng):
    from seq2seq_attn.decoding.search_step import top_candidates

    form = InferenceForm(_model(target_vocab_size=300))
    batch = tf.constant(padded_batch(rng, [5, 3, 7, 1], 9))
    encoded, state = form.encode(batch)
    tokens = tf.constant([BOS_ID, 4, 17, EOS_ID])
    live = tf.constant([True, True, False, True])
    logits = form.step(tokens, 1, state, encoded)[0].numpy()
    log_probs, ids, eos_log_probs, _, _ = top_candidates(
        form, tokens, 1, state, encoded, 4, live
    )
    expected = tf.nn.log_softmax(logits).numpy()
    for row in (0, 1, 3):
        np.testing.assert_allclose(
            log_probs[row], expected[row, ids[row]], rtol=1e-5, atol=1e-5
        )
        assert float(eos_log_probs[row]) == pytest.approx(
            expected[row, EOS_ID], abs=1e-5
        )
    assert not {0, 2} & set(ids.numpy().ravel()[:8])  # <pad>, <s> skipped
    assert np.all(log_probs[2] == -np.inf)  # not live

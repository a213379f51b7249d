import numpy as np

from seq2seq_attn.layers import (
    PaddingMask,
    RealPositions,
    ReverseSequence,
    masked_softmax,
)


def test_reverse_sequence_reverses_real_tokens_only():
    ids = np.array(
        [[5, 6, 7, 0, 0], [8, 9, 10, 11, 12], [4, 0, 0, 0, 0]], "int32"
    )
    mask = PaddingMask()(ids)
    reversed_ids = np.asarray(ReverseSequence()(ids, mask))
    np.testing.assert_array_equal(
        reversed_ids, [[7, 6, 5, 0, 0], [12, 11, 10, 9, 8], [4, 0, 0, 0, 0]]
    )
    again = np.asarray(ReverseSequence()(reversed_ids, mask))
    np.testing.assert_array_equal(again, ids)


def test_masked_softmax_is_exactly_zero_where_masked():
    scores = np.array([[3.0, 1.0, 50.0], [0.0, 0.0, 0.0]], "float32")
    mask = np.array([[True, True, False], [False, False, False]])
    weights = np.asarray(masked_softmax(scores, mask))
    assert weights[0, 2] == 0.0
    np.testing.assert_allclose(weights[0].sum(), 1.0, atol=1e-6)
    assert np.all(weights[1] == 0.0)
    assert np.all(np.isfinite(weights))


def test_real_positions_packs_rows_in_row_major_order():
    import tensorflow as tf

    ids = np.array([[5, 6, 0, 0], [0, 0, 0, 0], [7, 8, 9, 10]], "int32")
    values = np.arange(3 * 4 * 2, dtype="float32").reshape(3, 4, 2)
    mask = PaddingMask()(ids)
    packed = np.asarray(RealPositions()(values, mask))
    np.testing.assert_array_equal(packed, values[ids != 0])
    assert packed.shape == (6, 2)
    # Gradients flow back to the real positions only.
    values = tf.constant(values)
    with tf.GradientTape() as tape:
        tape.watch(values)
        total = tf.reduce_sum(RealPositions()(values, mask))
    gradient = np.asarray(tape.gradient(total, values))
    np.testing.assert_array_equal(gradient[..., 0], ids != 0)


def _keras_way_models(vocab=20):
    """RNNsearch and Luong built the Keras way: `Embedding(mask_zero=True)`
    and the package's layers, with no mask argument given by hand."""
    import keras

    from seq2seq_attn.layers import (
        BidirectionalGRU,
        GRUDecoder,
        LuongDecoder,
        MaxoutDeepOutput,
        StackedLSTM,
    )

    def inputs():
        source = keras.Input((None,), dtype="int32")
        target = keras.Input((None,), dtype="int32")
        embed = keras.layers.Embedding(vocab, 8, mask_zero=True)
        return source, target, embed(source), embed(target)

    source, target, source_embedding, target_embedding = inputs()
    annotations, backward_first = BidirectionalGRU(6)(source_embedding)
    states, contexts, alignments = GRUDecoder(6, attention_units=5)(
        target_embedding, annotations, backward_first
    )
    logits = MaxoutDeepOutput(4, vocab)(states, target_embedding, contexts)
    rnnsearch = keras.Model([source, target], [logits, alignments, annotations])

    source, target, source_embedding, target_embedding = inputs()
    memory, final_state = StackedLSTM(6, num_layers=2)(source_embedding)
    attentional, alignments = LuongDecoder(
        6, num_layers=2, score="general", mode="global"
    )(target_embedding, memory, initial_state=final_state)
    logits = keras.layers.Dense(vocab)(attentional)
    luong = keras.Model([source, target], [logits, alignments, memory])
    return {"rnnsearch": rnnsearch, "luong": luong}


def test_models_built_the_keras_way_are_padding_invariant():
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        models = _keras_way_models()
        padded = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")
        target = np.array([[4, 9, 3], [6, 5, 3]], "int32")
        for name, model in models.items():
            logits, alignments, memory = (
                np.asarray(x) for x in model([padded, target])
            )
            alone = [np.asarray(x) for x in model([padded[:1, :3], target[:1]])]
            np.testing.assert_allclose(logits[0], alone[0][0], atol=1e-5)
            np.testing.assert_allclose(
                alignments[0, :, :3], alone[1][0], atol=1e-6
            )
            assert np.all(alignments[0, :, 3:] == 0.0), name
            np.testing.assert_allclose(memory[0, :3], alone[2][0], atol=1e-6)
    destroyed = [w for w in caught if "destroy the mask" in str(w.message)]
    assert not destroyed, [str(w.message) for w in destroyed]


def test_attention_layers_take_and_pass_on_keras_masks():
    import warnings

    import keras

    from seq2seq_attn.layers import BahdanauAttention, LuongAttention

    ids = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")
    embed = keras.layers.Embedding(20, 6, mask_zero=True)
    for layer in (BahdanauAttention(4), LuongAttention(score="general")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            source = keras.Input((None,), dtype="int32")
            target = keras.Input((None,), dtype="int32")
            context, alignment = layer(embed(target), embed(source))
            model = keras.Model([source, target], [context, alignment])
            weights = np.asarray(model([ids, ids[:, :3]])[1])
        assert not [w for w in caught if "destroy the mask" in str(w.message)]
        # The source's Keras mask filled in value_mask.
        assert np.all(weights[0, :, 3:] == 0.0)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        assert getattr(context, "_keras_mask", None) is not None

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import padded_batch

from seq2seq_attn.models import (
    InferenceForm,
    ModelConfig,
    alignment_model,
    build_model,
    packed_model,
)

VOCAB = 23
SMALL = dict(
    source_vocab_size=VOCAB,
    target_vocab_size=VOCAB + 2,
    embedding_dim=8,
    hidden_units=10,
    attention_units=7,
    maxout_units=6,
)


def _luong(score, mode, feeding, **extra):
    return ModelConfig(
        architecture="luong",
        num_layers=2,
        score=score,
        attention_mode=mode,
        window=2,
        input_feeding=feeding,
        reverse_source=True,
        dropout=0.2,
        max_source_positions=15,
        initializer="luong",
        **{**SMALL, **extra},
    )


CONFIGS = {
    "rnnsearch": ModelConfig(architecture="rnnsearch", **SMALL),
    "rnnencdec": ModelConfig(architecture="rnnencdec", **SMALL),
    # JoeyNMT's shape: a narrower encoder than decoder, and dropout.
    "rnnsearch-split-dropout": ModelConfig(
        architecture="rnnsearch", encoder_units=5, dropout=0.3, **SMALL
    ),
    "rnnencdec-split-dropout": ModelConfig(
        architecture="rnnencdec", encoder_units=5, dropout=0.3, **SMALL
    ),
    "luong-base": _luong("none", "global", False),
    # Not the papers': the output projection is the target embedding, and
    # with "all" the source embedding too (one vocabulary).
    "rnnsearch-tied": ModelConfig(
        architecture="rnnsearch",
        tie_embeddings="target",
        **{**SMALL, "maxout_units": 8},
    ),
    "luong-tied-all": _luong(
        "general",
        "local-p",
        True,
        tie_embeddings="all",
        hidden_units=8,
        source_vocab_size=VOCAB + 2,
    ),
}
for _score, _mode, _feeding in itertools.product(
    ("dot", "general", "concat", "location"),
    ("global", "local-m", "local-p"),
    (True, False),
):
    CONFIGS[f"luong-{_score}-{_mode}-{'feed' if _feeding else 'nofeed'}"] = (
        _luong(_score, _mode, _feeding)
    )
# One of each family for the slower checks.
FAMILIES = [
    "rnnsearch",
    "rnnencdec",
    "rnnsearch-split-dropout",
    "luong-base",
    "luong-general-local-p-feed",
    "rnnsearch-tied",
    "luong-tied-all",
]


@pytest.fixture
def batch(rng):
    source = padded_batch(rng, [7, 3, 1, 5], VOCAB)
    target = padded_batch(rng, [4, 6, 2, 1], VOCAB + 2)
    return source, target


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_inference_form_matches_training_form(name, batch):
    source, target = batch
    model = build_model(CONFIGS[name])
    logits = np.asarray(model([source, target]))
    assert logits.shape == (4, target.shape[1], VOCAB + 2)
    form = InferenceForm(model)
    encoded, state = form.encode(source)
    for t in range(target.shape[1]):
        step_logits, alignment, state = form.step(
            target[:, t], t, state, encoded
        )
        np.testing.assert_allclose(
            np.asarray(step_logits), logits[:, t], atol=1e-5
        )
        assert alignment.shape == source.shape


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_only_live_rows_take_a_search_step(name, batch):
    from seq2seq_attn.decoding.search_step import top_candidates

    source, target = batch
    form = InferenceForm(build_model(CONFIGS[name]))
    encoded, state = form.encode(source)
    tokens = target[:, 0]
    logits, full_alignment, full_state = form.step(tokens, 0, state, encoded)
    live = np.array([False, True, False, True])
    log_probs, ids, _, alignment, new_state = top_candidates(
        form, tokens, 0, state, encoded, 3, live
    )
    expected = np.array(tf.nn.log_softmax(logits))
    expected[:, :2] = -np.inf  # <pad> and <s> are never chosen
    for row in (1, 3):
        # The 3 best (near-ties in an untrained model may swap in order).
        best = np.sort(expected[row])[::-1][:3]
        chosen = np.asarray(ids[row])
        np.testing.assert_allclose(expected[row, chosen], best, atol=1e-5)
        np.testing.assert_allclose(
            np.asarray(log_probs[row]), expected[row, chosen], atol=1e-5
        )
    live_rows = np.flatnonzero(live)
    np.testing.assert_allclose(
        np.asarray(alignment)[live_rows],
        np.asarray(full_alignment)[live_rows],
        atol=1e-6,
    )
    # The other rows take no step: no candidates, no attention, old state.
    assert np.all(np.asarray(log_probs)[~live] == -np.inf)
    assert np.all(np.asarray(alignment)[~live] == 0)
    for old, full, new in zip(state, full_state, new_state, strict=True):
        np.testing.assert_allclose(
            np.asarray(new)[live_rows], np.asarray(full)[live_rows], atol=1e-6
        )
        np.testing.assert_array_equal(
            np.asarray(new)[~live], np.asarray(old)[~live]
        )


@pytest.mark.parametrize("name", FAMILIES)
def test_a_beams_live_rows_step_as_their_sentences_would(name, batch):
    from seq2seq_attn.decoding.search_step import top_candidates
    from seq2seq_attn.models.inference import map_rows

    source, target = batch
    form = InferenceForm(build_model(CONFIGS[name]))
    encoded, state = form.encode(source)
    beams = 3
    tiled = map_rows(lambda x: tf.repeat(x, beams, axis=0), encoded)
    tiled_state = tf.nest.map_structure(
        lambda x: tf.repeat(x, beams, axis=0), state
    )
    # Each beam row its own token; sentence 1 has no live row, 3 one.
    tokens = target[:, :beams].reshape(-1)
    live = np.array([1, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0], bool)
    log_probs, _, _, alignment, new_state = top_candidates(
        form, tokens, 0, tiled_state, tiled, 2, live
    )
    for beam in range(beams):
        logits, full_alignment, full_state = form.step(
            target[:, beam], 0, state, encoded
        )
        rows = np.flatnonzero(live.reshape(-1, beams)[:, beam])
        tiled_rows = rows * beams + beam
        np.testing.assert_allclose(
            np.asarray(alignment)[tiled_rows],
            np.asarray(full_alignment)[rows],
            atol=1e-6,
        )
        best = np.sort(np.asarray(tf.nn.log_softmax(logits))[:, 2:])[:, -2:]
        np.testing.assert_allclose(
            np.sort(np.asarray(log_probs)[tiled_rows]), best[rows], atol=1e-5
        )
        for new, full in zip(new_state, full_state, strict=True):
            np.testing.assert_allclose(
                np.asarray(new)[tiled_rows], np.asarray(full)[rows], atol=1e-6
            )


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_padding_changes_no_unmasked_output(name, batch):
    source, target = batch
    model = build_model(CONFIGS[name])
    logits = np.asarray(model([source, target]))
    more_source = np.pad(source, ((0, 0), (0, 5)))
    more_target = np.pad(target, ((0, 0), (0, 3)))
    padded_logits = np.asarray(model([more_source, more_target]))
    target_mask = target != 0
    np.testing.assert_allclose(
        padded_logits[:, : target.shape[1]][target_mask],
        logits[target_mask],
        atol=1e-5,
    )


@pytest.mark.parametrize(
    "name", ["rnnsearch-split-dropout", "luong-general-local-p-feed"]
)
def test_dropout_acts_only_in_training(name, batch):
    source, target = batch
    model = build_model(CONFIGS[name].replace(initializer="glorot"))
    inference = [np.asarray(model([source, target])) for _ in range(2)]
    np.testing.assert_array_equal(inference[0], inference[1])
    training = np.asarray(model([source, target], training=True))
    assert not np.allclose(training, inference[0], atol=1e-4)


def test_encoder_units_set_the_annotation_size(batch):
    source, target = batch
    config = CONFIGS["rnnsearch-split-dropout"]
    model = build_model(config)
    encoder = model.get_layer("encoder")
    memory, _ = encoder(
        model.get_layer("source_embedding")(source),
        sequence_mask=source != 0,
    )
    assert memory.shape[-1] == 2 * config.encoder_units
    assert model.get_layer("decoder").units == config.hidden_units


@pytest.mark.parametrize("name", FAMILIES)
def test_gradients_reach_every_weight(name, batch):
    import tensorflow as tf

    source, target = batch
    # Bahdanau B.1 starts v_a at zero, which leaves W_a and U_a without a
    # gradient on the very first step; any other start shows the wiring.
    model = build_model(CONFIGS[name].replace(initializer="glorot"))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=0
    )
    with tf.GradientTape() as tape:
        loss = loss_fn(
            np.roll(target, -1, axis=1), model([source, target], training=True)
        )
    gradients = tape.gradient(loss, model.trainable_variables)
    for variable, gradient in zip(
        model.trainable_variables, gradients, strict=True
    ):
        assert gradient is not None, variable.path
        assert np.any(np.asarray(gradient) != 0.0), variable.path


@pytest.mark.parametrize("name", FAMILIES)
def test_config_and_keras_file_round_trip(name, batch, tmp_path):
    source, target = batch
    model = build_model(CONFIGS[name])
    expected = np.asarray(model([source, target]))

    clone = keras.Model.from_config(model.get_config())
    clone.set_weights(model.get_weights())
    np.testing.assert_array_equal(np.asarray(clone([source, target])), expected)

    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_array_equal(
        np.asarray(loaded([source, target])), expected
    )
    form = InferenceForm(loaded)
    encoded, state = form.encode(source)
    step_logits, _, _ = form.step(target[:, 0], 0, state, encoded)
    np.testing.assert_allclose(
        np.asarray(step_logits), expected[:, 0], atol=1e-5
    )


def test_alignment_model_shares_weights(batch):
    source, target = batch
    model = build_model(CONFIGS["rnnsearch"])
    logits, alignments = alignment_model(model)([source, target])
    np.testing.assert_array_equal(
        np.asarray(logits), np.asarray(model([source, target]))
    )
    alignments = np.asarray(alignments)
    assert alignments.shape == (4, target.shape[1], source.shape[1])
    np.testing.assert_allclose(alignments.sum(-1), 1.0, atol=1e-5)
    assert np.all(
        alignments[source[:, None, :].repeat(target.shape[1], 1) == 0] == 0
    )
    with pytest.raises(ValueError, match="no attention"):
        alignment_model(build_model(CONFIGS["rnnencdec"]))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_packed_model_gives_the_logits_of_real_positions(name, batch):
    source, target = batch
    model = build_model(CONFIGS[name])
    packed = np.asarray(packed_model(model)([source, target]))
    full = np.asarray(model([source, target]))
    assert packed.shape == (int(np.sum(target != 0)), VOCAB + 2)
    np.testing.assert_allclose(packed, full[target != 0], atol=1e-5)


@pytest.mark.parametrize("name", FAMILIES)
def test_packed_model_has_the_loss_and_gradients_of_the_model(name, batch):
    import tensorflow as tf

    source, target = batch
    model = build_model(CONFIGS[name].replace(initializer="glorot"))
    packed = packed_model(model)
    # As in the data: a label wherever the target input has a token.
    labels = np.where(target != 0, (target + 1) % (VOCAB + 2), 0)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=0, reduction="sum"
    )
    results = []
    for logits_of, labels_of in (
        (model, labels),
        (packed, labels[target != 0]),
    ):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels_of, logits_of([source, target]))
        gradients = tape.gradient(loss, model.trainable_variables)
        results.append([loss] + [tf.convert_to_tensor(g) for g in gradients])
    for ours, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(
            np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-6
        )


def _reversal_task(seed, pairs=20, vocab=14, shortest=4, longest=8):
    rng = np.random.default_rng(seed)
    source = np.zeros((pairs, longest), "int32")
    target_in = np.zeros((pairs, longest + 1), "int32")
    target_out = np.zeros((pairs, longest + 1), "int32")
    lengths = rng.integers(shortest, longest + 1, size=pairs)
    for row, length in enumerate(lengths):
        words = rng.integers(4, vocab, size=length)
        source[row, :length] = words
        target_in[row, 0] = 2  # <s>
        target_in[row, 1 : length + 1] = words[::-1]
        target_out[row, :length] = words[::-1]
        target_out[row, length] = 3  # </s>
    return source, target_in, target_out, lengths


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rnnsearch", "luong"])
def test_learns_reversal_with_anti_diagonal_alignments(name):
    source, target_in, target_out, lengths = _reversal_task(seed=0)
    options = dict(
        architecture=name,
        source_vocab_size=14,
        target_vocab_size=14,
        embedding_dim=32,
        hidden_units=32,
        attention_units=32,
        maxout_units=32,
        initializer="glorot",
    )
    if name == "luong":
        options.update(num_layers=1, score="general", input_feeding=True)
    model = build_model(ModelConfig(**options))
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=0
        ),
    )
    history = model.fit(
        (source, target_in), target_out, batch_size=20, epochs=300, verbose=0
    )
    print(
        f"{name}: loss {history.history['loss'][0]:.3f} -> "
        f"{history.history['loss'][-1]:.5f}"
    )
    assert history.history["loss"][-1] < 0.01

    _, alignments = alignment_model(model)([source, target_in])
    alignments = np.asarray(alignments)
    on_diagonal, mass, chance = [], [], []
    for row, length in enumerate(lengths):
        for step in range(length):
            mirrored = length - 1 - step
            on_diagonal.append(alignments[row, step].argmax() == mirrored)
            mass.append(alignments[row, step, mirrored])
            chance.append(1.0 / length)
    print(
        f"{name}: argmax on the anti-diagonal {np.mean(on_diagonal):.2f}, "
        f"weight there {np.mean(mass):.2f} (uniform {np.mean(chance):.2f})"
    )
    assert np.mean(on_diagonal) >= 0.5
    assert np.mean(mass) >= 2 * np.mean(chance)


@pytest.mark.parametrize("name", FAMILIES + ["luong-dot-local-m-nofeed"])
def test_fits_batches_whose_length_is_unknown_until_run_time(name, rng):
    import tensorflow as tf

    lengths = [[5, 2, 7], [3, 1, 4]]
    batches = [
        (
            (
                padded_batch(rng, ls, VOCAB),
                padded_batch(rng, ls[::-1], VOCAB + 2),
            ),
            padded_batch(rng, ls[::-1], VOCAB + 2),
        )
        for ls in lengths
    ]
    spec = tf.TensorSpec([None, None], tf.int32)
    dataset = tf.data.Dataset.from_generator(
        lambda: iter(batches), output_signature=((spec, spec), spec)
    )
    model = build_model(CONFIGS[name])
    model.compile(
        optimizer="adam",
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=0
        ),
    )
    history = model.fit(dataset, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


@pytest.mark.parametrize("name", FAMILIES)
def test_a_checkpoint_holds_every_weight(name, batch, tmp_path):
    # What the trainer's best checkpoint and `load_trained` rely on: each
    # weight is reachable from the model by attributes, not only through
    # the optimizer (Keras 3 lists of variables are not).
    import tensorflow as tf

    source, target = batch
    keras.utils.set_random_seed(1)
    model = build_model(CONFIGS[name])
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "ckpt"))
    stored = [
        key
        for key, _ in tf.train.list_variables(path)
        if key.startswith("model/")
    ]
    assert len(stored) == len(model.weights)

    keras.utils.set_random_seed(2)
    other = build_model(CONFIGS[name])
    tf.train.Checkpoint(model=other).restore(
        path
    ).assert_existing_objects_matched()
    for mine, theirs in zip(model.weights, other.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(theirs))
    np.testing.assert_array_equal(
        np.asarray(other([source, target])),
        np.asarray(model([source, target])),
    )

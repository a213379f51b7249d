import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import padded_batch

from seq2seq_attn.layers import TiedEmbedding
from seq2seq_attn.models import InferenceForm, ModelConfig, build_model
from seq2seq_attn.models.builder import named_layers

VOCAB = 19
TIED = {
    "luong": dict(
        architecture="luong",
        num_layers=2,
        score="dot",
        embedding_dim=8,
        hidden_units=8,
        reverse_source=True,
    ),
    "rnnsearch": dict(
        architecture="rnnsearch",
        embedding_dim=6,
        hidden_units=10,
        attention_units=7,
        maxout_units=6,
    ),
}


def _config(family, tie, **changes):
    sizes = dict(source_vocab_size=VOCAB, target_vocab_size=VOCAB)
    return ModelConfig(
        tie_embeddings=tie, **{**sizes, **TIED[family], **changes}
    )


@pytest.mark.parametrize(
    "policy, atol", [("float32", 1e-5), ("mixed_bfloat16", 0.1)]
)
def test_reads_e_both_ways(policy, atol, rng):
    # Rows E y forward; float32 logits E h + b in reverse.
    layer = TiedEmbedding(
        VOCAB, 5, bias_initializer="random_normal", dtype=policy
    )
    ids = rng.integers(0, VOCAB, size=(2, 3))
    rows = layer(ids)
    embeddings = np.asarray(layer.embeddings)
    np.testing.assert_allclose(np.asarray(rows), embeddings[ids], atol=atol)
    hidden = rng.normal(size=(2, 3, 5)).astype("float32")
    logits = layer(hidden, reverse=True)
    assert logits.dtype == "float32"
    expected = hidden @ embeddings.T + np.asarray(layer.output_bias)
    np.testing.assert_allclose(np.asarray(logits), expected, atol=atol)
    spec = layer.compute_output_spec(keras.KerasTensor((None, 3, 5)), True)
    assert spec.dtype == "float32" and spec.shape == (None, 3, VOCAB)


@pytest.mark.parametrize("family", sorted(TIED))
@pytest.mark.parametrize("tie", ["target", "all"])
def test_one_variable_embeds_and_projects(family, tie, rng):
    model = build_model(_config(family, tie))
    untied = build_model(_config(family, "none"))
    source = padded_batch(rng, [5, 2, 4], VOCAB)
    target = padded_batch(rng, [3, 4, 1], VOCAB)
    model([source, target])
    layers = named_layers(model)
    embedding = layers["target_embedding"].embeddings
    shape = (VOCAB, embedding.shape[1])
    matrices = [w for w in model.weights if w.shape == shape]
    assert len(matrices) == (1 if tie == "all" else 2)
    assert any(matrix is embedding for matrix in matrices)
    assert (layers["source_embedding"] is layers["target_embedding"]) == (
        tie == "all"
    )
    assert "output_projection" not in layers
    # Fewer weights than untied by W_o (or W_s), and the source E with "all".
    saved = embedding.shape[0] * embedding.shape[1]
    assert untied.count_params() - model.count_params() == saved * (
        2 if tie == "all" else 1
    )
    # The one matrix gets the gradient of both uses.
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model([source, target]))
    gradient = tape.gradient(loss, embedding.value)
    rows = np.abs(np.asarray(tf.convert_to_tensor(gradient))).sum(-1)
    assert np.all(rows > 0), "every row is reached by the projection"


@pytest.mark.parametrize("family", sorted(TIED))
def test_a_tied_model_reloads_tied(family, rng, tmp_path):
    source = padded_batch(rng, [5, 2, 4], VOCAB)
    target = padded_batch(rng, [3, 4, 1], VOCAB)
    model = build_model(_config(family, "all"))
    expected = np.asarray(model([source, target]))

    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras", safe_mode=True)
    keras.utils.set_random_seed(3)
    restored = build_model(_config(family, "all"))
    tf.train.Checkpoint(model=model).write(str(tmp_path / "ckpt"))
    tf.train.Checkpoint(model=restored).read(
        str(tmp_path / "ckpt")
    ).assert_existing_objects_matched()
    for other in (loaded, restored):
        layers = named_layers(other)
        assert layers["source_embedding"] is layers["target_embedding"]
        np.testing.assert_array_equal(
            np.asarray(other([source, target])), expected
        )
        # Still one variable: a change to E moves both uses.
        before = np.asarray(other([source, target]))
        layers["target_embedding"].embeddings.assign_add(
            tf.ones_like(layers["target_embedding"].embeddings)
        )
        assert not np.allclose(np.asarray(other([source, target])), before)
    form = InferenceForm(loaded)
    encoded, state = form.encode(source)
    step_logits, _, _ = form.step(target[:, 0], 0, state, encoded)
    assert step_logits.shape == (3, VOCAB)


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            dict(architecture="luong", hidden_units=9),
            r"attentional vector \(hidden_units=9\).*embedding_dim \(8\)",
        ),
        (
            dict(architecture="rnnsearch", maxout_units=9, embedding_dim=8),
            r"maxout layer \(maxout_units=9\).*embedding_dim \(8\)",
        ),
        (
            dict(architecture="luong", target_vocab_size=VOCAB + 1),
            r"tie_embeddings=all .*source_vocab_size \(19\) must equal "
            r"target_vocab_size \(20\).*--joint_vocab",
        ),
        (dict(architecture="luong", tie="both"), "tie_embeddings must be one"),
    ],
)
def test_shapes_that_cannot_tie_are_refused(changes, message):
    changes = dict(changes)
    family = changes.pop("architecture")
    tie = changes.pop("tie", "all")
    with pytest.raises(ValueError, match=message):
        _config(family, tie, **changes)


def test_papers_models_stay_untied():
    assert ModelConfig().tie_embeddings == "none"

"""The layers and one training step of each model under KERAS_BACKEND=jax."""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import keras
    import numpy as np
    assert keras.backend.backend() == "jax", keras.backend.backend()
    from seq2seq_attn.layers import BahdanauAttention, LuongAttention
    from seq2seq_attn.models import InferenceForm, ModelConfig, build_model

    rng = np.random.default_rng(0)
    value = rng.normal(size=(2, 5, 6)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    query = rng.normal(size=(2, 3, 6)).astype("float32")
    for layer in [BahdanauAttention(4)] + [
        LuongAttention(score=s, mode=m, window=1, max_source_length=8)
        for s in ("dot", "general", "concat", "location")
        for m in ("global", "local-m", "local-p")
    ]:
        context, alignment = layer(query, value, value_mask=mask)
        alignment = np.asarray(alignment)
        assert np.all(alignment[0, :, 3:] == 0), layer.get_config()
        assert np.all(np.isfinite(np.asarray(context)))

    source = rng.integers(4, 20, size=(4, 6)).astype("int32")
    source[0, 3:] = 0
    target_in = rng.integers(4, 20, size=(4, 5)).astype("int32")
    target_out = rng.integers(4, 20, size=(4, 5)).astype("int32")
    small = dict(source_vocab_size=20, target_vocab_size=20, embedding_dim=8,
                 hidden_units=8, maxout_units=4, initializer="glorot")
    configs = [
        ModelConfig(architecture="rnnsearch", **small),
        ModelConfig(architecture="rnnencdec", **small),
        ModelConfig(architecture="luong", num_layers=2, score="general",
                    attention_mode="local-p", dropout=0.2, reverse_source=True,
                    **small),
        ModelConfig(architecture="luong", num_layers=2, score="concat",
                    input_feeding=False, **small),
    ]
    for config in configs:
        model = build_model(config)
        model.compile(
            optimizer="adam",
            loss=keras.losses.SparseCategoricalCrossentropy(
                from_logits=True, ignore_class=0),
        )
        losses = [float(model.train_on_batch((source, target_in), target_out))
                  for _ in range(3)]
        assert np.all(np.isfinite(losses)) and losses[-1] < losses[0], losses
        loss = losses[0]
        logits = np.asarray(model((source, target_in)))
        form = InferenceForm(model)
        encoded, state = form.encode(source)
        step_logits, _, _ = form.step(target_in[:, 0], 0, state, encoded)
        np.testing.assert_allclose(np.asarray(step_logits), logits[:, 0],
                                   atol=1e-5)
        print(config.architecture, "trained, losses", losses)

    from seq2seq_attn.decoding import beam_search, greedy_search
    for search in (beam_search, greedy_search):
        try:
            search(form, source)
        except RuntimeError as error:
            assert "needs KERAS_BACKEND=tensorflow" in str(error), error
        else:
            raise AssertionError(f"{search.__name__} ran under JAX")
    print("JAX OK")
    """
)


@pytest.mark.slow
def test_layers_and_training_step_under_jax():
    pytest.importorskip("jax")
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "JAX OK" in result.stdout

"""The training loss against NumPy: the token cross-entropy, and its
label-smoothed form (Szegedy et al. 2016, Sec. 7)."""

import numpy as np
import pytest
import tensorflow as tf

from seq2seq_attn.config import TrainConfig
from seq2seq_attn.training.losses import token_cross_entropy, training_loss


def _numpy_loss(labels, logits, smoothing):
    """Sum over the tokens that are not 0 (<pad>) of -sum_k q_k log p_k,
    q = (1 - e) one_hot(y) + e / V."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    vocab = logits.shape[-1]
    targets = (1 - smoothing) * np.eye(vocab)[labels] + smoothing / vocab
    per_token = -(targets * log_probs).sum(axis=-1)
    return (per_token * (labels != 0)).sum()


@pytest.mark.parametrize("shape", [(7,), (3, 5)], ids=["packed", "padded"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_the_loss_matches_numpy(rng, shape, smoothing):
    vocab = 11
    logits = rng.normal(size=(*shape, vocab)).astype("float32") * 3
    labels = rng.integers(1, vocab, size=shape)
    labels.flat[-2:] = 0  # padding, ignored
    got = float(training_loss(smoothing)(tf.constant(labels), logits))
    np.testing.assert_allclose(
        got, _numpy_loss(labels, logits.astype("float64"), smoothing), rtol=1e-5
    )


def test_no_smoothing_is_the_papers_loss(rng):
    logits = rng.normal(size=(4, 6, 9)).astype("float32")
    labels = rng.integers(0, 9, size=(4, 6))
    plain = float(token_cross_entropy()(labels, logits))
    assert float(training_loss(0.0)(labels, logits)) == plain
    # A smoothed loss is not the plain one (the test can fail).
    assert float(training_loss(0.1)(tf.constant(labels), logits)) != plain


def test_label_smoothing_is_checked_and_off_by_default():
    assert TrainConfig().label_smoothing == 0.0
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(ValueError, match="label_smoothing"):
            TrainConfig(label_smoothing=bad)

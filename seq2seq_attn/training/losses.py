"""The training loss: the token-level cross-entropy, summed over the real
target tokens, optionally against label-smoothed targets."""

import keras
import tensorflow as tf

from seq2seq_attn.special_tokens import PAD_ID


def token_cross_entropy():
    """The summed cross-entropy of the reference tokens, <pad> ignored: the
    papers' loss, and the one validation perplexity is measured with."""
    return keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, ignore_class=PAD_ID, reduction="sum"
    )


def training_loss(label_smoothing=0.0):
    """`loss(labels, logits)`, summed over the tokens that are not <pad>.

    With `label_smoothing` e > 0, the cross-entropy against the target
    distribution (1 - e) * one_hot(y) + e / V (Szegedy et al. 2016, Sec. 7,
    as Keras' `label_smoothing` spreads it over all V entries):
    (1 - e) * -log p(y) + e * mean_k -log p(k). 0 is `token_cross_entropy`.
    """
    if not label_smoothing:
        return token_cross_entropy()

    def smoothed(labels, logits):
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
        labels = tf.cast(labels, tf.int32)
        reference = -tf.gather(log_probs, labels, batch_dims=labels.shape.rank)
        uniform = -tf.reduce_mean(log_probs, axis=-1)
        per_token = (1.0 - label_smoothing) * reference
        per_token += label_smoothing * uniform
        real = tf.cast(labels != PAD_ID, per_token.dtype)
        return tf.reduce_sum(per_token * real)

    return smoothed

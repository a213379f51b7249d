"""One training step under a `tf.distribute` strategy: the token-level
cross-entropy, summed over every replica's target tokens and divided by the
global number of target tokens (so padding costs nothing and the result does
not depend on how a batch is split across replicas), its gradient, and the
optimizer's update."""

import keras
import tensorflow as tf

from seq2seq_attn.models.builder import packed_model
from seq2seq_attn.models.shared_layers import real_target_positions
from seq2seq_attn.special_tokens import PAD_ID
from seq2seq_attn.training.strategy import replica_shard


def make_train_step(
    model, optimizer, strategy, loss_fn, step, jit_compile=False
):
    """A `tf.function` of a batch iterator that trains on its next batch,
    adds 1 to `step` and returns `(mean loss, target tokens, gradient norm)`.

    Args:
        model, optimizer: built under `strategy`'s scope.
        loss_fn: the summed token cross-entropy (`reduction="sum"`).
        step: the int64 step variable.
        jit_compile: the forward and backward passes through XLA, on the
            padded logits (XLA needs static shapes).
    """
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    variables = model.trainable_variables
    # The output layer and the loss on the real target positions only.
    packed = None if jit_compile else packed_model(model)

    def loss_and_gradients(source, target_input, target_output, total_tokens):
        with tf.GradientTape() as tape:
            if packed is None:
                logits = model([source, target_input], training=True)
                labels = target_output
            else:
                logits = packed([source, target_input], training=True)
                (labels,) = real_target_positions(target_input, target_output)
            loss_sum = loss_fn(labels, logits)
            loss = loss_sum / tf.maximum(total_tokens, 1.0)
            objective = optimizer.scale_loss(loss) if scaled else loss
        return loss_sum, tape.gradient(objective, variables)

    if jit_compile:
        # Compiled once per batch shape; the optimizer update stays outside.
        loss_and_gradients = tf.function(loss_and_gradients, jit_compile=True)

    def replica_step(batch):
        (source, target_input), target_output = replica_shard(batch)
        tokens = tf.reduce_sum(tf.cast(target_output != PAD_ID, tf.float32))
        context = tf.distribute.get_replica_context()
        total_tokens = context.all_reduce("sum", tokens)
        loss_sum, gradients = loss_and_gradients(
            source, target_input, target_output, total_tokens
        )
        norm = tf.linalg.global_norm(gradients)
        if scaled:
            norm /= tf.cast(optimizer.dynamic_scale, norm.dtype)
        optimizer.apply_gradients(zip(gradients, variables, strict=True))
        return loss_sum, tokens, norm

    def train_step(iterator):
        batch = next(iterator)
        loss_sum, tokens, norm = strategy.run(replica_step, args=(batch,))
        loss_sum = strategy.reduce("sum", loss_sum, axis=None)
        tokens = strategy.reduce("sum", tokens, axis=None)
        # Before clipping; with several replicas, the mean of the norms of
        # each replica's share of the gradient.
        norm = strategy.reduce("mean", norm, axis=None)
        step.assign_add(1)
        return loss_sum / tf.maximum(tokens, 1.0), tokens, norm

    return tf.function(train_step)

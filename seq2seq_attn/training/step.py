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
    model,
    optimizer,
    strategy,
    loss_fn,
    step,
    jit_compile=False,
    accumulate_batches=1,
    weight_average=None,
):
    """A `tf.function` of a batch iterator that makes one update from its
    next `accumulate_batches` batches, adds 1 to `step` and returns
    `(mean loss, target tokens, gradient norm)`.

    Args:
        model, optimizer: built under `strategy`'s scope.
        loss_fn: the summed token loss (`reduction="sum"`).
        step: the int64 step variable (it counts updates).
        jit_compile: the forward and backward passes through XLA, on the
            padded logits (XLA needs static shapes).
        accumulate_batches: k; the update is the gradient of the k batches'
            summed loss over all their target tokens, which is the
            gradient of one batch k times larger.
        weight_average: a `WeightAverage` of the trainable weights to move
            after each update, or None.
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

    def replica_step(*batches):
        shards = [replica_shard(batch) for batch in batches]
        tokens = _target_tokens(shards)
        context = tf.distribute.get_replica_context()
        total_tokens = context.all_reduce("sum", tokens)
        summed = [
            loss_and_gradients(
                source, target_input, target_output, total_tokens
            )
            for (source, target_input), target_output in shards
        ]
        loss_sum, gradients = _added_up(summed)
        norm = tf.linalg.global_norm(gradients)
        if scaled:
            norm /= tf.cast(optimizer.dynamic_scale, norm.dtype)
        optimizer.apply_gradients(zip(gradients, variables, strict=True))
        if weight_average is not None:
            weight_average.update(variables, step + 1)
        return loss_sum, tokens, norm

    def train_step(iterator):
        batches = tuple(next(iterator) for _ in range(accumulate_batches))
        loss_sum, tokens, norm = strategy.run(replica_step, args=batches)
        loss_sum = strategy.reduce("sum", loss_sum, axis=None)
        tokens = strategy.reduce("sum", tokens, axis=None)
        # Before clipping; with several replicas, the mean of the norms of
        # each replica's share of the gradient.
        norm = strategy.reduce("mean", norm, axis=None)
        step.assign_add(1)
        return loss_sum / tf.maximum(tokens, 1.0), tokens, norm

    return tf.function(train_step)


def _target_tokens(batches):
    """The target tokens (not <pad>) of teacher-forcing batches."""
    return tf.add_n(
        [
            tf.reduce_sum(tf.cast(target_output != PAD_ID, tf.float32))
            for _, target_output in batches
        ]
    )


def _added_up(summed):
    """The loss and the gradients of several batches' `(loss sum,
    gradients)`, added up."""
    loss_sum = tf.add_n([loss for loss, _ in summed])
    gradients = [
        _sum(parts)
        for parts in zip(*(grads for _, grads in summed), strict=True)
    ]
    return loss_sum, gradients


def _sum(gradients):
    """The sum of one variable's gradients from several batches (an
    embedding's `IndexedSlices` stay sparse: their rows concatenated)."""
    if len(gradients) == 1:
        return gradients[0]
    if all(isinstance(g, tf.IndexedSlices) for g in gradients):
        return tf.IndexedSlices(
            tf.concat([g.values for g in gradients], 0),
            tf.concat([g.indices for g in gradients], 0),
            gradients[0].dense_shape,
        )
    return tf.add_n([tf.convert_to_tensor(g) for g in gradients])

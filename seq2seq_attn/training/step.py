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
            gradient of one batch k times larger. The k batches are
            stepped through one after another in a loop, their gradients
            added into accumulators (`_accumulating_step`), so that the
            graph and the memory do not grow with k.
        weight_average: a `WeightAverage` of the trainable weights to move
            after each update, or None.
    """
    variables = model.trainable_variables
    loss_and_gradients = _loss_and_gradients(
        model, optimizer, loss_fn, jit_compile
    )
    apply_update = _update_applier(optimizer, variables, step, weight_average)

    def replica_step(batch):
        loss_sum, tokens, _, gradients = _batch_gradients(
            loss_and_gradients, batch
        )
        return loss_sum, tokens, apply_update(gradients)

    def one_batch(iterator):
        return strategy.run(replica_step, args=(next(iterator),))

    update = one_batch
    if accumulate_batches > 1:
        update = _accumulating_step(
            variables,
            strategy,
            loss_and_gradients,
            accumulate_batches,
            apply_update,
        )

    def train_step(iterator):
        loss_sum, tokens, norm = update(iterator)
        loss_sum = strategy.reduce("sum", loss_sum, axis=None)
        tokens = strategy.reduce("sum", tokens, axis=None)
        # Before clipping; with several replicas, the mean of the norms of
        # each replica's share of the gradient.
        norm = strategy.reduce("mean", norm, axis=None)
        step.assign_add(1)
        return loss_sum / tf.maximum(tokens, 1.0), tokens, norm

    return tf.function(train_step)


def _loss_and_gradients(model, optimizer, loss_fn, jit_compile):
    """`f(source, target_input, target_output, total_tokens)` -> `(loss
    sum, gradients)` of one batch (a replica's share of it): the gradients
    of the loss sum over `total_tokens` (the batch's, over every replica),
    loss-scaled for a `LossScaleOptimizer`; through XLA with
    `jit_compile`, on the padded logits (XLA needs static shapes), else the
    output layer and the loss on the real target positions only."""
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    variables = model.trainable_variables
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
        return tf.function(loss_and_gradients, jit_compile=True)
    return loss_and_gradients


def _update_applier(optimizer, variables, step, weight_average):
    """`apply(gradients)`, in a replica: the optimizer's update (and the
    weight average's); returns the gradients' norm before clipping."""
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)

    def apply(gradients):
        norm = tf.linalg.global_norm(gradients)
        if scaled:
            norm /= tf.cast(optimizer.dynamic_scale, norm.dtype)
        optimizer.apply_gradients(zip(gradients, variables, strict=True))
        if weight_average is not None:
            weight_average.update(variables, step + 1)
        return norm

    return apply


def _batch_gradients(loss_and_gradients, batch):
    """`(loss sum, tokens, tokens over every replica, gradients)` of this
    replica's share of `batch`."""
    (source, target_input), target_output = replica_shard(batch)
    tokens = _target_tokens(target_output)
    context = tf.distribute.get_replica_context()
    total_tokens = context.all_reduce("sum", tokens)
    loss_sum, gradients = loss_and_gradients(
        source, target_input, target_output, total_tokens
    )
    return loss_sum, tokens, total_tokens, gradients


def _target_tokens(target_output):
    """The target tokens (not <pad>) of a teacher-forcing batch."""
    return tf.reduce_sum(tf.cast(target_output != PAD_ID, tf.float32))


def _accumulating_step(variables, strategy, loss_and_gradients, k, apply):
    """A function of the batch iterator that steps through its next `k`
    batches in a `tf.while_loop`, each replica adding each batch's
    gradients into accumulators of its own (sync-on-read variables), then
    applies their sum with `apply` (which returns the gradient norm) and
    returns `(loss sum, target tokens, norm)` per replica.

    Each batch's loss is divided by its own tokens (over every replica), as
    one batch's is, and its gradient weighed by them; dividing the sum by
    all k batches' tokens gives the gradient of their summed loss over all
    their tokens. The backward pass runs at one batch's scale (a float16
    loss scale needs no change), and the loop runs on dense gradients (an
    embedding's sparse rows are added into its accumulator)."""
    local = dict(
        trainable=False,
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM,
    )
    with strategy.scope():
        sums = [
            tf.Variable(tf.zeros(v.shape, tf.float32), **local)
            for v in variables
        ]
        # The loss sum, the replica's tokens, and every replica's tokens.
        counts = tf.Variable(tf.zeros([3], tf.float32), **local)

    def add_batch(batch):
        loss_sum, tokens, total_tokens, gradients = _batch_gradients(
            loss_and_gradients, batch
        )
        for total, gradient in zip(sums, gradients, strict=True):
            total.assign_add(tf.convert_to_tensor(gradient) * total_tokens)
        counts.assign_add(tf.stack([loss_sum, tokens, total_tokens]))

    def apply_sums():
        loss_sum, tokens, total_tokens = tf.unstack(counts.read_value())
        gradients = [
            total.read_value() / tf.maximum(total_tokens, 1.0) for total in sums
        ]
        norm = apply(gradients)
        with tf.control_dependencies([norm]):
            for total in sums:
                total.assign(tf.zeros_like(total))
            counts.assign(tf.zeros_like(counts))
        return loss_sum, tokens, norm

    def step_through(iterator):
        if not isinstance(
            iterator, (tf.data.Iterator, tf.distribute.DistributedIterator)
        ):
            # A Python iterator would be read once, when the loop is traced.
            raise TypeError(
                "accumulating batches needs a tf.data (or distributed) "
                f"iterator, got {type(iterator).__name__}"
            )
        for _ in tf.range(k):
            strategy.run(add_batch, args=(next(iterator),))
        return strategy.run(apply_sums)

    return step_through

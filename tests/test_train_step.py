"""One update of `training.step.make_train_step`: k accumulated batches
update the weights as one batch k times larger does."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from seq2seq_attn.config import ModelConfig
from seq2seq_attn.data.text_to_ids import teacher_forcing
from seq2seq_attn.models import build_model
from seq2seq_attn.training.losses import training_loss
from seq2seq_attn.training.step import make_train_step


def _batch(rng, rows, width, vocab):
    """Teacher-forcing batches of random sentences, padded to `width`."""
    lengths = rng.integers(2, width, size=rows)
    ids = tf.ragged.constant(
        [rng.integers(4, vocab, size=n).tolist() for n in lengths],
        dtype=tf.int32,
    )
    source = ids.to_tensor(shape=[rows, width])
    target_input, target_output = teacher_forcing(ids)
    pad = [[0, 0], [0, width + 1 - target_input.shape[1]]]
    return (source, tf.pad(target_input, pad)), tf.pad(target_output, pad)


def _train_step(accumulate, architecture):
    """A model and its train step of `accumulate` batches per update."""
    keras.utils.set_random_seed(5)
    model = build_model(
        ModelConfig(
            architecture=architecture,
            source_vocab_size=30,
            target_vocab_size=31,
            embedding_dim=6,
            hidden_units=8,
            attention_units=5,
            maxout_units=4,
            dropout=0.0,
        )
    )
    optimizer = keras.optimizers.SGD(learning_rate=1.0)
    optimizer.build(model.trainable_variables)
    step = tf.Variable(0, dtype=tf.int64)
    train_step = make_train_step(
        model,
        optimizer,
        tf.distribute.get_strategy(),
        training_loss(0.1),
        step,
        accumulate_batches=accumulate,
    )
    return model, train_step, step


def _updated_weights(batches, accumulate, architecture):
    model, train_step, step = _train_step(accumulate, architecture)
    dataset = tf.data.Dataset.from_tensors(batches[0])
    for batch in batches[1:]:
        dataset = dataset.concatenate(tf.data.Dataset.from_tensors(batch))
    loss, tokens, _ = train_step(iter(dataset))
    assert int(step.numpy()) == 1
    return [v.numpy() for v in model.trainable_variables], float(loss), tokens


@pytest.mark.parametrize("architecture", ["rnnsearch", "luong"])
def test_k_accumulated_batches_update_as_one_batch_k_times_larger(
    rng, architecture
):
    first, second, third = (_batch(rng, 3, 7, 30) for _ in range(3))
    joined = tf.nest.map_structure(
        lambda *parts: tf.concat(parts, 0), first, second, third
    )
    accumulated, loss_k, tokens_k = _updated_weights(
        [first, second, third], 3, architecture
    )
    large, loss_1, tokens_1 = _updated_weights([joined], 1, architecture)
    assert float(tokens_k) == float(tokens_1)
    np.testing.assert_allclose(loss_k, loss_1, rtol=1e-5)
    for a, b in zip(accumulated, large, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    # One batch alone is another update (the test can fail).
    alone, _, _ = _updated_weights([first], 1, architecture)
    assert any(
        not np.allclose(a, b, atol=1e-6)
        for a, b in zip(alone, large, strict=True)
    )


def _graph_size(function):
    """The nodes of a concrete function's graph and of its functions (a
    loop's body is one)."""
    graph = function.graph.as_graph_def()
    return len(graph.node) + sum(
        len(f.node_def) for f in graph.library.function
    )


def test_the_graph_of_a_step_does_not_grow_with_the_batches_it_adds_up(rng):
    # The k batches were traced into the step one after another: its graph,
    # and the memory of running it, grew with k.
    dataset = tf.data.Dataset.from_tensors(_batch(rng, 3, 7, 30)).repeat()
    sizes = {}
    for k in (2, 16):
        _, train_step, step = _train_step(k, "rnnsearch")
        sizes[k] = _graph_size(train_step.get_concrete_function(iter(dataset)))
        _, tokens, _ = train_step(iter(dataset))
        assert int(step.numpy()) == 1
    assert sizes[16] == sizes[2]
    # One batch's tokens, k times over.
    first = next(iter(dataset))[1]
    assert float(tokens) == 16 * float(
        tf.reduce_sum(tf.cast(first != 0, tf.float32))
    )

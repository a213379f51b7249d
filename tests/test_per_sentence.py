import numpy as np
import pytest
import tensorflow as tf

from seq2seq_attn.layers.per_sentence import weighted_sum_per_sentence


def _expected(weights, sentence, values):
    return np.einsum("rj,rjd->rd", weights, values[sentence])


@pytest.mark.parametrize(
    "sentence",
    [
        [0, 0, 0, 1, 1, 1, 2, 2, 2],  # a beam of 3, every row live
        [2, 0, 2, 1, 0, 2],  # any order, several rows of a sentence
        [1],  # one row: sentences 0 and 2 have none
        [0, 1, 2],  # greedy: a row per sentence
    ],
)
def test_matches_the_sum_over_each_rows_sentence(rng, sentence):
    sentence = np.array(sentence, np.int32)
    values = rng.normal(size=(3, 4, 5)).astype("float32")
    weights = rng.random(size=(len(sentence), 4)).astype("float32")
    sums = weighted_sum_per_sentence(weights, sentence, values)
    np.testing.assert_allclose(
        np.asarray(sums), _expected(weights, sentence, values), atol=1e-5
    )


def test_no_rows_and_no_sentences():
    values = np.zeros((0, 4, 5), np.float32)
    sums = weighted_sum_per_sentence(
        np.zeros((0, 4), np.float32), np.zeros((0,), np.int32), values
    )
    assert sums.shape == (0, 5)


def test_traces_with_unknown_rows_and_sentences(rng):
    values = rng.normal(size=(2, 3, 4)).astype("float32")
    sentence = np.array([1, 1, 0], np.int32)
    weights = rng.random(size=(3, 3)).astype("float32")
    unknown = tf.function(
        weighted_sum_per_sentence,
        input_signature=[
            tf.TensorSpec([None, None], tf.float32),
            tf.TensorSpec([None], tf.int32),
            tf.TensorSpec([None, None, None], tf.float32),
        ],
    )
    np.testing.assert_allclose(
        unknown(weights, sentence, values).numpy(),
        _expected(weights, sentence, values),
        atol=1e-5,
    )

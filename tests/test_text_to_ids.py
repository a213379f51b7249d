"""The one text-to-ids path: cut, padding, teacher forcing."""

import numpy as np
import pytest
import tensorflow as tf

from seq2seq_attn.data import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    UNK_ID,
    build_tokenizer,
    padded_ids,
    sentence_ids,
    teacher_forcing,
)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    texts = ["a man rides a horse .", "two dogs play .", "a dog runs ."]
    return build_tokenizer("word", texts, tmp_path_factory.mktemp("vocab"), 100)


def test_ids_are_cut_and_padded(tokenizer):
    text = tf.constant(
        ["a man rides a horse .", "", "zebra \xff dogs".encode("latin-1")]
    )
    ids = sentence_ids(tokenizer, text, max_tokens=3)
    assert ids.row_lengths().numpy().tolist() == [3, 0, 3]
    assert ids[2].numpy().tolist()[:2] == [UNK_ID, UNK_ID]  # U+FFFD, zebra
    dense = padded_ids(ids).numpy()
    assert dense.shape == (3, 3) and dense.dtype == np.int32
    assert dense[1].tolist() == [PAD_ID] * 3


def test_an_all_empty_batch_still_has_one_column(tokenizer):
    dense = padded_ids(sentence_ids(tokenizer, tf.constant(["", "  "])))
    assert dense.numpy().tolist() == [[PAD_ID], [PAD_ID]]


def test_teacher_forcing_of_one_sentence_and_of_a_batch():
    inputs, outputs = teacher_forcing(tf.constant([7, 8], tf.int32))
    assert inputs.numpy().tolist() == [BOS_ID, 7, 8]
    assert outputs.numpy().tolist() == [7, 8, EOS_ID]
    inputs, outputs = teacher_forcing(tf.ragged.constant([[7, 8], [], [9]]))
    assert inputs.numpy().tolist() == [
        [BOS_ID, 7, 8],
        [BOS_ID, PAD_ID, PAD_ID],
        [BOS_ID, 9, PAD_ID],
    ]
    assert outputs.numpy().tolist() == [
        [7, 8, EOS_ID],
        [EOS_ID, PAD_ID, PAD_ID],
        [9, EOS_ID, PAD_ID],
    ]

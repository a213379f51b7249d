"""The one text-to-ids path: cut, padding, teacher forcing."""

import numpy as np
import pytest
import tensorflow as tf

from seq2seq_attn.config.search import MAX_INPUT_TOKENS
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
from seq2seq_attn.data.text_to_ids import (
    LEADING_WINDOW,
    bounded_text,
    input_bytes,
    utf8_prefix,
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


def _whole_characters(data, max_bytes):
    """The longest prefix of whole UTF-8 characters within `max_bytes`."""
    prefix = data[:max_bytes]
    while prefix:
        try:
            prefix.decode("utf-8")
            return prefix
        except UnicodeDecodeError:
            prefix = prefix[:-1]
    return prefix


def test_utf8_prefix_cuts_bytes_at_a_character_boundary(rng):
    alphabet = ["a", " ", "é", "ß", "東", "京", "😀", "\u0301"]
    texts = [
        "".join(rng.choice(alphabet, size=int(rng.integers(0, 40))))
        for _ in range(300)
    ]
    data = [text.encode("utf-8") for text in texts]
    for max_bytes in (3, 4, 7, 16, 33):
        got = utf8_prefix(tf.constant(data), max_bytes).numpy().tolist()
        assert got == [_whole_characters(d, max_bytes) for d in data]


def test_utf8_prefix_bounds_invalid_bytes_too():
    data = [b"\x80" * 50, b"ab\xe6\x9d", b"abcd\xe6\x9d\xb1\xe4\xba\xac", b""]
    got = utf8_prefix(tf.constant(data), 6).numpy().tolist()
    assert [len(g) for g in got] == [6, 4, 4, 0]
    assert got[1] == data[1]  # shorter than the cut: unchanged
    assert utf8_prefix(tf.constant([], tf.string), 6).shape == [0]


def test_a_long_line_is_read_only_as_far_as_its_tokens_go(tokenizer):
    short = "a man rides a horse ."
    line = " ".join(["two dogs play ."] * 300_000)  # 4.8 MB
    ids = sentence_ids(tokenizer, tf.constant([short, line]), max_tokens=10)
    assert ids.row_lengths().numpy().tolist() == [6, 10]
    # The same ids as tokenizing the whole line and then cutting it.
    whole = sentence_ids(tokenizer, tf.constant([line]))[:, :10]
    assert ids[1].numpy().tolist() == whole[0].numpy().tolist()
    assert input_bytes(10) < len(line) // 1000


def test_leading_whitespace_does_not_count_against_the_bytes_read(tokenizer):
    # 7,000 spaces before a sentence once left nothing to tokenize (and an
    # empty translation) under a 6,400-byte read.
    sentence = "a man rides a horse ."
    max_bytes = input_bytes(10)
    padded = " " * 7000 + sentence
    rows = [
        padded,
        "\t\n " * 2000 + sentence,
        sentence,
        " " * (LEADING_WINDOW * max_bytes) + sentence,  # past the window
        "x" * (max_bytes + 1),
        " " * 9000,
    ]
    kept, cut = bounded_text(tf.constant(rows), max_bytes)
    kept = [k.decode() for k in kept.numpy()]
    assert kept[:3] == [sentence] * 3
    assert kept[3] == "" and kept[4] == "x" * max_bytes and kept[5] == ""
    assert cut.numpy().tolist() == [False, False, False, True, True, False]
    ids = sentence_ids(tokenizer, tf.constant(rows[:3]), max_tokens=10)
    assert ids[0].numpy().tolist() == ids[2].numpy().tolist() != []
    assert ids[1].numpy().tolist() == ids[2].numpy().tolist()


def test_the_input_cut_ceiling_is_what_the_graph_holds(tokenizer):
    # --max_input_tokens=10**12 ended in "Input 'e' of 'SelectV2' has type
    # int32 ... int64": the bytes read and their whitespace window are int32
    # offsets. The ceiling is the largest cut whose window fits one.
    assert LEADING_WINDOW * input_bytes(MAX_INPUT_TOKENS) <= 2**31 - 1
    assert LEADING_WINDOW * input_bytes(MAX_INPUT_TOKENS + 1) > 2**31 - 1
    rows = tf.constant(["a man rides a horse .", " " * 100 + "two dogs ."])
    ids = sentence_ids(tokenizer, rows, max_tokens=MAX_INPUT_TOKENS)
    assert ids.row_lengths().numpy().tolist() == [6, 3]

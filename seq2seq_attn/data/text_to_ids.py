"""From text to the ids a model reads, in the graph: the one path that
training, translate, evaluate and the export share.

    text                   "a man ."
    sentence_ids           [[5, 17, 4]]            ragged, cut to a maximum
                                                   (bytes before tokens)
    padded_ids             [[5, 17, 4]]            dense, PAD_ID after
    teacher_forcing(ids)   [[<s> 5 17 4]], [[5 17 4 </s>]]

Only TensorFlow and TF Text ops (what stock TF Serving runs): the export
traces these functions into its signatures.
"""

import tensorflow as tf

from seq2seq_attn.special_tokens import BOS_ID, EOS_ID, PAD_ID

# Bytes read per token of `max_tokens`: far more than any vocabulary's
# tokens take in text (a word of 64 bytes), so that an input under the
# token limit is never cut by bytes.
BYTES_PER_TOKEN = 64
# Leading whitespace (which no tokenizer makes a token of) is skipped before
# the bytes are counted, within the first `LEADING_WINDOW` x the bytes read.
LEADING_WINDOW = 16


def clean_text(text):
    """Valid UTF-8: invalid bytes become U+FFFD."""
    return tf.strings.unicode_transcode(
        text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )


def utf8_prefix(text, max_bytes):
    """The first `max_bytes` bytes of each string of `text` [B], cut back
    to the start of a character split by the cut (a longer string's
    characters are whole UTF-8 bytes up to the cut, or invalid bytes that
    `clean_text` replaces). Shorter strings are unchanged. Only slices are
    read and written, so the cost is bounded by `max_bytes` (>= 3), not by
    the input."""
    length = tf.strings.length(text)
    long = length > max_bytes
    zeros = tf.zeros_like(length)
    # The last 3 bytes kept and the first one dropped ("" for short rows,
    # then 4 zero bytes).
    window = tf.strings.substr(
        text, tf.where(long, max_bytes - 3, zeros), tf.where(long, 4, zeros)
    )
    window = tf.strings.substr(
        tf.strings.join([window, "\0\0\0\0"]), zeros, zeros + 4
    )
    # (Reshaped: an empty batch decodes to [0, 0].)
    tail = tf.reshape(
        tf.cast(tf.io.decode_raw(window, tf.uint8), tf.int32), [-1, 4]
    )
    continues = tf.equal(tf.bitwise.bitwise_and(tail, 0xC0), 0x80)
    # The last kept byte that leads a character of 2 or more bytes: the cut
    # splits that character if every byte after it, and the first dropped
    # one, continue it.
    positions = tf.range(3)
    last_lead = tf.reduce_max(tf.where(tail[:, :3] >= 0xC0, positions, -1), 1)
    after_lead = tf.logical_or(
        positions[None, :] <= last_lead[:, None], continues[:, :3]
    )
    split = (
        continues[:, 3] & (last_lead >= 0) & tf.reduce_all(after_lead, axis=1)
    )
    cut = tf.where(split, max_bytes - 3 + last_lead, max_bytes)
    return tf.strings.substr(text, zeros, tf.where(long, cut, length))


def bounded_text(text, max_bytes):
    """`(kept, cut)` of each string of `text` [B]: the first `max_bytes`
    bytes after its leading whitespace (`utf8_prefix`), and whether that
    cut anything. Leading whitespace is looked for in the first
    `LEADING_WINDOW * max_bytes` bytes, so the cost stays bounded by the
    bytes read; a string longer than those counts as cut."""
    window_bytes = LEADING_WINDOW * max_bytes
    window = utf8_prefix(text, window_bytes)
    stripped = tf.strings.regex_replace(window, r"^\s+", "")
    cut = (tf.strings.length(stripped) > max_bytes) | (
        tf.strings.length(text) > window_bytes
    )
    return utf8_prefix(stripped, max_bytes), cut


def input_bytes(max_tokens):
    """How many bytes of an input are read to find its first `max_tokens`
    tokens (`BYTES_PER_TOKEN` each)."""
    return BYTES_PER_TOKEN * max_tokens


def sentence_ids(tokenizer, text, max_tokens=None):
    """int32 ragged [B, (T)]: the ids of each string of `text` [B] (invalid
    UTF-8 replaced), cut to `max_tokens` if given.

    With `max_tokens`, only the first `input_bytes(max_tokens)` bytes of a
    string after its leading whitespace are tokenized (`bounded_text`): a
    10 MB line costs what a line of a few KB does."""
    if max_tokens:
        text, _ = bounded_text(text, input_bytes(max_tokens))
    ids = tokenizer.tokenize(clean_text(text))
    if max_tokens:
        ids = ids[:, :max_tokens]
    return tf.cast(ids, tf.int32)


def sentence_ids_in_chunks(tokenizer, texts, max_tokens=None, chunk=8192):
    """`sentence_ids` of a long list of strings, a chunk at a time."""
    parts = [
        sentence_ids(
            tokenizer,
            tf.constant(texts[start : start + chunk], tf.string),
            max_tokens,
        )
        for start in range(0, len(texts), chunk)
    ]
    if not parts:
        return tf.ragged.constant([], dtype=tf.int32, ragged_rank=1)
    return tf.concat(parts, axis=0)


def padded_ids(ids):
    """int32 [B, max(T, 1)]: ragged ids padded with `PAD_ID`. A batch whose
    rows are all empty still gets one (padding) column, so that an encoder
    has a step to run."""
    dense = tf.cast(ids.to_tensor(default_value=PAD_ID), tf.int32)
    return tf.pad(dense, [[0, 0], [0, tf.maximum(1 - tf.shape(dense)[1], 0)]])


def teacher_forcing(target_ids):
    """The decoder's inputs and outputs for target ids y_1..y_T:
    `(<s> y_1..y_T, y_1..y_T </s>)`, for one sentence [T], or for a ragged
    batch [B, (T)] as int32 [B, T + 1] padded with `PAD_ID` (dense ops
    only, so that the export needs no ragged gather)."""
    if not isinstance(target_ids, tf.RaggedTensor):
        bos = tf.constant([BOS_ID], target_ids.dtype)
        eos = tf.constant([EOS_ID], target_ids.dtype)
        return tf.concat([bos, target_ids], 0), tf.concat([target_ids, eos], 0)
    dense = tf.cast(target_ids.to_tensor(default_value=PAD_ID), tf.int32)
    rows = tf.shape(dense)[0]
    inputs = tf.concat([tf.fill([rows, 1], BOS_ID), dense], axis=1)
    outputs = tf.concat([dense, tf.fill([rows, 1], PAD_ID)], axis=1)
    lengths = tf.cast(target_ids.row_lengths(), tf.int32)
    eos = tf.one_hot(lengths, tf.shape(outputs)[1], dtype=tf.int32)
    return inputs, outputs + eos * (EOS_ID - PAD_ID)

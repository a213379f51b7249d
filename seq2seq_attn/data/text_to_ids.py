"""From text to the ids a model reads, in the graph: the one path that
training, translate, evaluate and the export share.

    text                   "a man ."
    sentence_ids           [[5, 17, 4]]            ragged, cut to a maximum
    padded_ids             [[5, 17, 4]]            dense, PAD_ID after
    teacher_forcing(ids)   [[<s> 5 17 4]], [[5 17 4 </s>]]

Only TensorFlow and TF Text ops (what stock TF Serving runs): the export
traces these functions into its signatures.
"""

import tensorflow as tf

from seq2seq_attn.data.special_tokens import BOS_ID, EOS_ID, PAD_ID


def clean_text(text):
    """Valid UTF-8: invalid bytes become U+FFFD."""
    return tf.strings.unicode_transcode(
        text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD
    )


def sentence_ids(tokenizer, text, max_tokens=None):
    """int32 ragged [B, (T)]: the ids of each string of `text` [B] (invalid
    UTF-8 replaced), cut to `max_tokens` if given."""
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

"""Forced decoding (Luong et al. 2015, Sec. 5.4): the attention of every
token of a given translation, teacher-forced, over its source."""

import tensorflow as tf

from seq2seq_attn.data.text_to_ids import teacher_forcing
from seq2seq_attn.special_tokens import PAD_ID


def forced_alignment(aligner, source_ids, target_ids):
    """The attention of each target token over the source.

    Args:
        aligner: `models.alignment_model(model)`: [source, target input] ->
            (logits, attention).
        source_ids: int32 [B, Tx], `PAD_ID` after each sentence.
        target_ids: int32 ragged [B, (Ty)], the translations' ids.

    Returns:
        `(target, attention)`: the tokens attended from, y_1..y_Ty </s>
        padded [B, Ty + 1], and float32 [B, Ty + 1, Tx], zero on padding.
    """
    target_input, target_output = teacher_forcing(target_ids)
    _, attention = aligner([source_ids, target_input])
    mask = tf.cast(target_output != PAD_ID, attention.dtype)[:, :, None]
    return target_output, tf.cast(attention, tf.float32) * mask

"""One entry point for the searches, shared by `Translator` and the export."""

import tensorflow as tf

from seq2seq_attn.decoding.beam_search import beam_search
from seq2seq_attn.decoding.greedy_search import greedy_search


def search(form, source_ids, beam_size=5, nbest=1, **options):
    """Greedy search when `beam_size` is 1, beam search otherwise.

    Args:
        form: an `InferenceForm` (or `EnsembleForm`).
        source_ids: int32 [B, Tx], 0 pads.
        beam_size, nbest: K and N (N <= K).
        **options: `scoring`, `max_length_a`, `max_length_b`.

    Returns:
        A `SearchResult` with N hypotheses per sentence.
    """
    if not 1 <= nbest <= beam_size:
        raise ValueError(
            f"nbest must be in [1, beam_size={beam_size}], got {nbest}"
        )
    if beam_size == 1:
        return greedy_search(form, source_ids, **options)
    return beam_search(
        form, source_ids, beam_size=beam_size, nbest=nbest, **options
    )


def detokenize_hypotheses(tokenizer, tokens):
    """Text of every hypothesis: ids [B, N, T] -> strings [B, N]."""
    flat = tf.reshape(tokens, [-1, tf.shape(tokens)[-1]])
    return tf.reshape(tokenizer.detokenize(flat), tf.shape(tokens)[:2])

"""One entry point for the searches, shared by `Translator` and the export."""

import tensorflow as tf

from seq2seq_attn.config.search import SearchConfig
from seq2seq_attn.decoding.beam_search import beam_search
from seq2seq_attn.decoding.greedy_search import greedy_search


def search(form, source_ids, config=None):
    """Greedy search when `config.beam_size` is 1, beam search otherwise.

    Args:
        form: a `SearchableForm` (`InferenceForm`, `EnsembleForm`).
        source_ids: int32 [B, Tx], 0 pads.
        config: a `SearchConfig` (default: beam 5, 1 hypothesis).

    Returns:
        A `SearchResult` with `config.nbest` hypotheses per sentence.
    """
    config = config or SearchConfig()
    options = dict(
        scoring=config.scoring,
        max_length_a=config.max_length_a,
        max_length_b=config.max_length_b,
        no_repeat_ngram_size=config.no_repeat_ngram_size,
    )
    if config.beam_size == 1:
        return greedy_search(form, source_ids, **options)
    return beam_search(
        form,
        source_ids,
        beam_size=config.beam_size,
        nbest=config.nbest,
        **options,
    )


def detokenize_hypotheses(tokenizer, tokens):
    """Text of every hypothesis: ids [B, N, T] -> strings [B, N]."""
    flat = tf.reshape(tokens, [-1, tf.shape(tokens)[-1]])
    return tf.reshape(tokenizer.detokenize(flat), tf.shape(tokens)[:2])

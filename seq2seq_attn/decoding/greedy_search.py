"""Greedy search: the most probable token at every step, in one graph loop."""

import tensorflow as tf

from seq2seq_attn.config.scoring import Scoring
from seq2seq_attn.decoding.search_step import (
    NEG_INF,
    SearchResult,
    max_output_lengths,
    record_token,
    require_tensorflow_backend,
    top_candidates,
)
from seq2seq_attn.special_tokens import BOS_ID, EOS_ID, PAD_ID


def greedy_search(
    form,
    source_ids,
    scoring=None,
    max_length_a=1.5,
    max_length_b=5,
    no_repeat_ngram_size=0,
):
    """Greedy decoding of a batch; the result has N = 1 hypothesis.

    Args:
        form: a `SearchableForm` (`InferenceForm`, `EnsembleForm`).
        source_ids: int32 [B, Tx], 0 pads.
        scoring: how `scores` are computed (the choice of tokens does not
            depend on it); default 1/L^0.75.
        max_length_a, max_length_b: the output length limit, as in
            `beam_search`.
        no_repeat_ngram_size: n > 0: never write a token that repeats an
            n-gram of the sentence's own output (0: off), as in
            `beam_search`.

    Returns:
        A `SearchResult` with N = 1.
    """
    require_tensorflow_backend("greedy_search")
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    limits = max_output_lengths(source_ids, max_length_a, max_length_b)
    with form.weights_cast_once():
        final = _greedy_loop(form, source_ids, limits, no_repeat_ngram_size)
    return _result(final, source_ids, limits, scoring or Scoring())


def _greedy_loop(form, source_ids, limits, ngram):
    """The loop variables after the last step of greedy decoding."""
    batch, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
    steps = tf.maximum(tf.reduce_max(limits), 1)
    encoded, state = form.encode(source_ids)
    loop_vars = dict(
        step=tf.constant(0),
        state=state,
        tokens=tf.fill([batch], BOS_ID),
        log_probs=tf.zeros([batch]),
        finished=tf.zeros([batch], tf.bool),
        lengths=tf.zeros([batch], tf.int32),
        coverage=tf.zeros([batch, source_length]),
        history=tf.TensorArray(tf.int32, size=steps, element_shape=[None]),
        attention=tf.TensorArray(tf.float32, size=steps),
    )
    if ngram:
        loop_vars["prefixes"] = tf.zeros([steps, batch], tf.int32)

    def not_done(v):
        # At least one step, also for an empty batch: the recorded
        # histories then have a (zero-sized) shape to stack.
        unfinished = ~tf.reduce_all(v["finished"]) | (v["step"] == 0)
        return (v["step"] < steps) & unfinished

    def body(v):
        t = v["step"]
        alive = ~v["finished"]
        log_probs, ids, eos_log_probs, alignment, state = top_candidates(
            form,
            v["tokens"],
            t,
            v["state"],
            encoded,
            1,
            alive,
            v.get("prefixes"),
            ngram,
        )
        at_limit = t >= limits - 1  # the length limit forces </s>
        tokens = tf.where(alive, tf.where(at_limit, EOS_ID, ids[:, 0]), PAD_ID)
        chosen = tf.where(at_limit, eos_log_probs, log_probs[:, 0])
        step_attention = tf.where(alive[:, None], alignment, 0.0)
        prefixes = {}
        if ngram:
            prefixes["prefixes"] = record_token(v["prefixes"], t, tokens)
        return dict(
            step=t + 1,
            state=state,
            tokens=tokens,
            log_probs=v["log_probs"] + tf.where(alive, chosen, 0.0),
            finished=v["finished"] | (tokens == EOS_ID),
            lengths=v["lengths"] + tf.cast(alive, tf.int32),
            coverage=v["coverage"] + step_attention,
            history=v["history"].write(t, tokens),
            attention=v["attention"].write(t, step_attention),
            **prefixes,
        )

    return tf.while_loop(
        not_done, lambda v: (body(v),), (loop_vars,), maximum_iterations=steps
    )[0]


def _result(final, source_ids, limits, scoring):
    """The `SearchResult` (N = 1) of the final loop variables."""
    steps = tf.maximum(tf.reduce_max(limits), 1)
    produced = final["step"]
    padding = [[0, 0], [0, steps - produced]]
    tokens = tf.pad(tf.transpose(final["history"].stack()[:produced]), padding)
    attention = tf.transpose(final["attention"].stack()[:produced], [1, 0, 2])
    attention = tf.pad(attention, [[0, 0], [0, steps - produced], [0, 0]])
    source_mask = source_ids != PAD_ID
    scores = scoring.score(
        final["log_probs"], final["lengths"], final["coverage"], source_mask
    )
    return SearchResult(
        tokens=tokens[:, None],
        lengths=final["lengths"][:, None],
        scores=tf.where(final["log_probs"] > NEG_INF, scores, NEG_INF)[:, None],
        log_probs=final["log_probs"][:, None],
        alignments=attention[:, None],
    )

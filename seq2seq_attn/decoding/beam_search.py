"""Batched, in-graph beam search over an inference form.

B sentences times K beams advance together in one `tf.while_loop`. Each
step records, per beam, its parent beam, the token it wrote and its
attention; after the loop, the best hypotheses are read back by following
the parents from the last step to the first (the in-graph equivalent of
`GatherTree`, with no custom op and no Python loop over time, so the search
traces, compiles and exports). Each step's cost does not grow with the
length of the histories.

A hypothesis that emits </s> is finished and frozen: it keeps its score and
its slot, and competes with the live ones under the same `Scoring`. The
search stops when every hypothesis is finished, or at the maximum length
`ceil(a * source length + b)`, where </s> is forced.
"""

import contextlib
import dataclasses
import functools

import tensorflow as tf

from seq2seq_attn.data.special_tokens import BOS_ID, EOS_ID, PAD_ID
from seq2seq_attn.decoding.scoring import Scoring
from seq2seq_attn.models.inference import map_rows

NEG_INF = float("-inf")


@dataclasses.dataclass
class SearchResult:
    """What a search returns, best hypothesis first.

    Attributes:
        tokens: int32 [B, N, T]; </s> included, 0 after it.
        lengths: int32 [B, N], tokens up to and including </s>.
        scores: float32 [B, N], the ranking score (`Scoring.score`).
        log_probs: float32 [B, N], the sum of the tokens' log-probabilities.
        alignments: float32 [B, N, T, Tx], the attention of each output token.
    """

    tokens: tf.Tensor
    lengths: tf.Tensor
    scores: tf.Tensor
    log_probs: tf.Tensor
    alignments: tf.Tensor


def casting_weights_once(search):
    """Runs `search(form, ...)` within `form.weights_cast_once()`, where the
    form has it: under mixed precision the weights are then cast once per
    batch, before the loop, not at every step."""

    @functools.wraps(search)
    def wrapped(form, *args, **kwargs):
        context = getattr(form, "weights_cast_once", contextlib.nullcontext)
        with context():
            return search(form, *args, **kwargs)

    return wrapped


def max_output_lengths(source_ids, a=1.5, b=5):
    """Per sentence: ceil(a * source length + b) tokens, </s> included."""
    source_lengths = tf.reduce_sum(
        tf.cast(source_ids != PAD_ID, tf.float32), -1
    )
    return tf.cast(tf.math.ceil(a * source_lengths + b), tf.int32)


def top_candidates(form, tokens, position, state, encoded, k, live):
    """One step of `form` for a search: each live row's k best next tokens.

    Only the `live` rows (unfinished hypotheses) take the step: they are
    gathered into a smaller batch, which runs the recurrence, the attention
    and the vocabulary projection; the other rows keep their state (a
    finished hypothesis is never extended again; in a beam-5 search of
    Multi30k's test2016, 40% of all row-steps are finished). Tokens are
    ranked by their logits (<pad> and <s> never chosen), and only the chosen
    ones are normalised: log p(y) = logit(y) - log-sum-exp(logits), with no
    full log-softmax over the vocabulary (the log-sum-exp is skipped when
    the form already returns log-probabilities, as `EnsembleForm` does).
    Only ops that TF Serving's stock build runs (export/allowed_ops.txt).

    Args:
        form: an `InferenceForm` (or `EnsembleForm`).
        tokens: int32 [N], the previous tokens.
        position: t (a scalar).
        state, encoded: the form's, with N rows.
        k: how many tokens to keep per row (at most the vocabulary size).
        live: bool [N].

    Returns:
        `(log_probs, ids, eos_log_probs, alignment, state)`: float32 [N, k]
        best first, int32 [N, k], float32 [N] (log p(</s>)), float32
        [N, Tx] and the next state. Rows that are not live get -inf
        log-probabilities, <pad> ids, zero alignment and their old state.
    """
    rows = tf.cast(tf.reshape(tf.where(live), [-1]), tf.int32)
    index = rows[:, None]

    def gather(x):
        return tf.gather(x, rows)

    logits, alignment, live_state = form.step(
        gather(tokens),
        position,
        tf.nest.map_structure(gather, state),
        map_rows(gather, encoded),
    )
    state = tf.nest.map_structure(
        lambda old, new: tf.tensor_scatter_nd_update(old, index, new),
        state,
        live_state,
    )
    logits = tf.cast(logits, tf.float32)
    top_scores, top_ids = top_k(logits, k, excluded=(PAD_ID, BOS_ID))
    if getattr(form, "returns_log_probs", False):
        normaliser = tf.zeros_like(logits[:, :1])
    else:
        # The log-sum-exp of the logits through the fused softmax kernel
        # (one op, where max, subtract, exp and sum are four passes over
        # [N, V]): for the row's most likely token j, log-sum-exp = logit_j
        # - log p_j, and p_j >= 1 / V keeps log p_j exact to float32
        # rounding. j is the best token, or <pad> or <s> (not ranked).
        heads = tf.stack(
            [top_scores[:, 0], logits[:, PAD_ID], logits[:, BOS_ID]], -1
        )
        head_ids = tf.stack(
            [
                top_ids[:, 0],
                tf.fill(tf.shape(top_ids[:, 0]), PAD_ID),
                tf.fill(tf.shape(top_ids[:, 0]), BOS_ID),
            ],
            -1,
        )
        head = tf.argmax(heads, axis=-1, output_type=tf.int32)
        j = tf.gather(head_ids, head, batch_dims=1)
        p_j = tf.gather(tf.nn.softmax(logits), j, batch_dims=1)
        normaliser = (tf.reduce_max(heads, axis=-1) - tf.math.log(p_j))[:, None]
    eos_log_probs = logits[:, EOS_ID] - normaliser[:, 0]

    def every_row(values, fill):
        """`values` of the live rows back in place, `fill` on the others."""
        shape = tf.concat([tf.shape(live), tf.shape(values)[1:]], 0)
        others = tf.fill(shape, tf.constant(fill, values.dtype))
        return tf.tensor_scatter_nd_update(others, index, values)

    # The rows that are not live get -inf, <pad> and zero attention.
    return (
        every_row(top_scores - normaliser, NEG_INF),
        every_row(top_ids, PAD_ID),
        every_row(eos_log_probs, NEG_INF),
        every_row(tf.cast(alignment, tf.float32), 0.0),
        state,
    )


def top_k(scores, k, excluded=(), chunk=64):
    """`tf.math.top_k(scores, min(k, V))` for scores [N, V], with the token
    ids `excluded` never chosen, in two cheaper passes when V is large: the
    best k of the chunk maxima (chunks of `chunk` tokens), then the best k
    among those k chunks' tokens. The k best tokens lie in the k chunks with
    the best maxima, so the result is exact, ties included (the chosen
    chunks are kept in vocabulary order, and `top_k` prefers the lower index
    among equal values). The excluded ids are masked in the small tensors
    only (the first chunk's maximum, the chosen chunks), never in [N, V].
    """
    vocab = scores.shape[-1]
    if (
        vocab is None
        or vocab < 4 * k * chunk
        or max(excluded, default=0) >= chunk
    ):
        never = _exclusion_mask(excluded, tf.shape(scores)[-1])
        return tf.math.top_k(
            scores + never, tf.minimum(k, tf.shape(scores)[-1])
        )
    rows = tf.shape(scores)[0]
    padded = tf.pad(scores, [[0, 0], [0, -vocab % chunk]], "CONSTANT", NEG_INF)
    chunks = tf.reshape(padded, [rows, -1, chunk])
    maxima = tf.reduce_max(chunks, axis=-1)
    # The excluded ids are all in the first chunk: its maximum without them.
    never = _exclusion_mask(excluded, chunk)
    first = tf.reduce_max(chunks[:, 0] + never, axis=-1, keepdims=True)
    maxima = tf.concat([first, maxima[:, 1:]], axis=-1)
    _, best_chunks = tf.math.top_k(maxima, k)
    best_chunks = tf.sort(best_chunks, axis=-1)
    candidates = tf.gather(chunks, best_chunks, batch_dims=1)
    candidates += tf.where(best_chunks[..., None] == 0, never, 0.0)
    values, positions = tf.math.top_k(tf.reshape(candidates, [rows, -1]), k)
    ids = tf.gather(best_chunks, positions // chunk, batch_dims=1) * chunk
    return values, ids + positions % chunk


def _exclusion_mask(excluded, size):
    """float32 [size]: NEG_INF at the token ids `excluded`, 0 elsewhere."""
    ids = tf.range(size)
    excluded_ids = tf.constant(sorted(set(excluded)), tf.int32)
    hit = tf.reduce_any(ids[:, None] == excluded_ids, axis=-1)
    return tf.where(hit, NEG_INF, 0.0)


def _keep_static_shapes(before, after):
    """`after` (loop variables after a step) with the static shapes of
    `before`: with a batch size known when tracing, the gathers of a step
    lose it, and a loop refuses variables whose shape changes."""

    def keep(old, new):
        if isinstance(new, tf.Tensor):
            new.set_shape(old.shape)
        return new

    return tf.nest.map_structure(keep, before, after)


def _backtrack(parents, tokens, attention, beams):
    """The histories of `beams`, read back through the parent pointers.

    Args:
        parents, tokens: int32 [T, B, K]: at step t, the beam each new
            hypothesis extends and the token it wrote.
        attention: float32 [T, B, K, Tx], the attention of that token.
        beams: int32 [B, N], the chosen hypotheses' beams after step T - 1.

    Returns:
        `(tokens [B, N, T], attention [B, N, T, Tx])` of the chosen ones.
    """

    def back(carried, step):
        beams = carried[0]
        step_parents, step_tokens, step_attention = step

        def pick(x):
            return tf.gather(x, beams, batch_dims=1)

        return _keep_static_shapes(
            carried,
            (pick(step_parents), pick(step_tokens), pick(step_attention)),
        )

    batch, n = tf.shape(beams)[0], tf.shape(beams)[1]
    start = (
        beams,
        tf.zeros([batch, n], tf.int32),
        tf.zeros([batch, n, tf.shape(attention)[-1]]),
    )
    _, chosen_tokens, chosen_attention = tf.scan(
        back, (parents, tokens, attention), start, reverse=True
    )
    return (
        tf.transpose(chosen_tokens, [1, 2, 0]),
        tf.transpose(chosen_attention, [1, 2, 0, 3]),
    )


@casting_weights_once
def beam_search(
    form,
    source_ids,
    beam_size=5,
    scoring=None,
    nbest=1,
    max_length_a=1.5,
    max_length_b=5,
):
    """Beam search for every sentence of a batch at once.

    Args:
        form: an `InferenceForm` (or `EnsembleForm`).
        source_ids: int32 [B, Tx], 0 pads.
        beam_size: K.
        scoring: a `Scoring` (default: 1/L^0.75 length normalisation).
        nbest: N <= K hypotheses to return per sentence.
        max_length_a, max_length_b: the output length limit (see module).

    Returns:
        A `SearchResult`.
    """
    scoring = scoring or Scoring()
    if not 1 <= nbest <= beam_size:
        raise ValueError(
            f"nbest must be in [1, beam_size={beam_size}], got {nbest}"
        )
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    batch, source_length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
    k = beam_size
    limits = max_output_lengths(source_ids, max_length_a, max_length_b)
    steps = tf.maximum(tf.reduce_max(limits), 1)
    source_mask = tf.repeat(source_ids != PAD_ID, k, axis=0)
    source_mask = tf.reshape(source_mask, [batch, k, source_length])

    encoded, state = form.encode(source_ids)
    tile = lambda x: tf.repeat(x, k, axis=0)  # noqa: E731
    encoded = map_rows(tile, encoded)
    state = tf.nest.map_structure(tile, state)

    first_beam = tf.one_hot(0, k, on_value=0.0, off_value=NEG_INF)
    loop_vars = dict(
        step=tf.constant(0),
        state=state,
        tokens=tf.fill([batch * k], BOS_ID),
        cumulative=tf.tile(first_beam[None], [batch, 1]),
        finished=tf.zeros([batch, k], tf.bool),
        lengths=tf.zeros([batch, k], tf.int32),
        coverage=tf.zeros([batch, k, source_length]),
        parents=tf.TensorArray(tf.int32, size=steps),
        written=tf.TensorArray(tf.int32, size=steps),
        attention=tf.TensorArray(tf.float32, size=steps),
    )

    def not_done(v):
        alive = ~v["finished"] & (v["cumulative"] > NEG_INF)
        # At least one step, also for an empty batch: the recorded
        # histories then have a (zero-sized) shape to stack.
        return (v["step"] < steps) & (tf.reduce_any(alive) | (v["step"] == 0))

    def body(v):
        t = v["step"]
        live = ~v["finished"] & (v["cumulative"] > NEG_INF)
        # Within one beam every candidate has the same length and coverage,
        # so the ranking is monotone in log p(y): each beam's k best tokens
        # hold the k best of all K x V candidates. Only those are ranked.
        top_log_probs, top_ids, eos_log_probs, alignment, state = (
            top_candidates(
                form,
                v["tokens"],
                t,
                v["state"],
                encoded,
                k,
                tf.reshape(live, [-1]),
            )
        )
        per_beam = tf.shape(top_ids)[-1]
        top_log_probs = tf.reshape(top_log_probs, [batch, k, -1])
        top_ids = tf.reshape(top_ids, [batch, k, -1])
        eos_log_probs = tf.reshape(eos_log_probs, [batch, k, 1])
        alignment = tf.reshape(alignment, [batch, k, source_length])
        first = tf.range(per_beam)[None, None] == 0  # [1, 1, per_beam]
        # At the length limit only </s>; a finished hypothesis only extends
        # with <pad> at no cost, so it keeps its score.
        force_eos = (t >= limits - 1)[:, None, None]
        top_ids = tf.where(force_eos, EOS_ID, top_ids)
        top_log_probs = tf.where(
            force_eos, tf.where(first, eos_log_probs, NEG_INF), top_log_probs
        )
        finished = v["finished"][:, :, None]
        top_ids = tf.where(finished, PAD_ID, top_ids)
        top_log_probs = tf.where(
            finished, tf.where(first, 0.0, NEG_INF), top_log_probs
        )

        candidates = v["cumulative"][:, :, None] + top_log_probs
        lengths = v["lengths"] + tf.cast(~v["finished"], tf.int32)
        coverage = v["coverage"] + tf.where(
            v["finished"][:, :, None], 0.0, alignment
        )
        divisor = scoring.length_divisor(lengths)[:, :, None]
        ranked = candidates / divisor
        if scoring.beta > 0:
            ranked += scoring.coverage_penalty(coverage, source_mask)[
                :, :, None
            ]
        ranked = tf.where(candidates > NEG_INF, ranked, NEG_INF)
        _, flat_index = tf.math.top_k(tf.reshape(ranked, [batch, -1]), k)
        parents = flat_index // per_beam
        new_tokens = tf.gather(
            tf.reshape(top_ids, [batch, -1]), flat_index, batch_dims=1
        )

        def pick(x):
            return tf.gather(x, parents, batch_dims=1)

        cumulative = tf.gather(
            tf.reshape(candidates, [batch, -1]), flat_index, batch_dims=1
        )
        was_finished = pick(v["finished"])
        finished = was_finished | (new_tokens == EOS_ID)
        written = tf.where(was_finished, PAD_ID, new_tokens)
        step_attention = tf.where(
            was_finished[:, :, None], 0.0, pick(alignment)
        )
        flat_parents = tf.reshape(parents + tf.range(batch)[:, None] * k, [-1])
        return _keep_static_shapes(
            v,
            dict(
                step=t + 1,
                state=tf.nest.map_structure(
                    lambda s: tf.gather(s, flat_parents), state
                ),
                tokens=tf.reshape(written, [-1]),
                cumulative=cumulative,
                finished=finished,
                lengths=pick(lengths),
                coverage=pick(coverage),
                parents=v["parents"].write(t, parents),
                written=v["written"].write(t, written),
                attention=v["attention"].write(t, step_attention),
            ),
        )

    final = tf.while_loop(
        not_done, lambda v: (body(v),), (loop_vars,), maximum_iterations=steps
    )[0]

    scores = scoring.score(
        final["cumulative"], final["lengths"], final["coverage"], source_mask
    )
    scores = tf.where(final["cumulative"] > NEG_INF, scores, NEG_INF)
    top_scores, order = tf.math.top_k(scores, nbest)

    def best(x):
        return tf.gather(x, order, batch_dims=1)

    produced = final["step"]
    tokens, attention = _backtrack(
        *(final[name].stack()[:produced] for name in ("parents", "written")),
        final["attention"].stack()[:produced],
        order,
    )
    unused = steps - produced  # the buffers keep their full length
    return SearchResult(
        tokens=tf.pad(tokens, [[0, 0], [0, 0], [0, unused]]),
        lengths=best(final["lengths"]),
        scores=top_scores,
        log_probs=best(final["cumulative"]),
        alignments=tf.pad(attention, [[0, 0], [0, 0], [0, unused], [0, 0]]),
    )

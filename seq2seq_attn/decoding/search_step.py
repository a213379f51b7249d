"""What greedy and beam search share: the search's view of a model, its
result, the length limit, and one step that gives each live hypothesis its
best next tokens."""

import dataclasses
from typing import Protocol

import tensorflow as tf

from seq2seq_attn.models.inference import map_rows
from seq2seq_attn.special_tokens import BOS_ID, EOS_ID, PAD_ID

NEG_INF = float("-inf")


def require_tensorflow_backend(what):
    """Raises a clear error where Keras runs on another backend: the
    searches are TensorFlow graphs (`tf.while_loop` over the model's
    steps), and so are translate and the export."""
    import keras

    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise RuntimeError(
            f"{what} runs in TensorFlow and needs KERAS_BACKEND=tensorflow; "
            f"Keras runs on {backend} here, where the layers, the models and "
            "fit work, but not search, translate or the export"
        )


class SearchableForm(Protocol):
    """What a search needs of a model: `InferenceForm`, `EnsembleForm`.

    Attributes:
        returns_log_probs: whether `step` returns log-probabilities (True
            for an ensemble's averaged ones) rather than logits.
        max_source_tokens: the most source tokens `encode` reads (Luong's
            location score), or None for any number.
    """

    returns_log_probs: bool
    max_source_tokens: int | None

    def encode(self, source_ids):
        """`(encoded, state)` of source ids [B, Tx]; `encoded` is an
        `Encoded` (or a list of them): what the search reorders per
        hypothesis, and what it keeps once per sentence."""

    def step(self, token_ids, position, state, encoded):
        """`(logits [B, V], alignment [B, Tx], state)` of one step."""

    def weights_cast_once(self):
        """A context within which the weights are cast once, not at every
        step (a no-op in float32)."""


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


def max_output_lengths(source_ids, a=1.5, b=5):
    """Per sentence: ceil(a * source length + b) tokens, </s> included."""
    source_lengths = tf.reduce_sum(
        tf.cast(source_ids != PAD_ID, tf.float32), -1
    )
    # Capped where an unlimited input would overflow the int32 count.
    limits = tf.minimum(tf.math.ceil(a * source_lengths + b), 2.0**30)
    return tf.cast(limits, tf.int32)


def top_candidates(
    form, tokens, position, state, encoded, k, live, written=None, ngram=0
):
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
        written, ngram: with `ngram` n > 0, int32 [T, N], the tokens each
            row wrote before `position` (time-major); no row may then write
            a token that repeats one of its own n-grams
            (`block_repeated_ngrams`).

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
    if ngram:
        logits = block_repeated_ngrams(
            logits, tf.gather(written, rows, axis=1), position, ngram
        )
    top_scores, top_ids = top_k(logits, k, excluded=(PAD_ID, BOS_ID))
    if form.returns_log_probs:
        normaliser = tf.zeros_like(logits[:, :1])
    else:
        normaliser = _log_sum_exp(logits, top_scores[:, 0], top_ids[:, 0])
    eos_log_probs = logits[:, EOS_ID] - normaliser[:, 0]

    def every_row(values, fill):
        return _every_row(values, fill, live, index)

    # The rows that are not live get -inf, <pad> and zero attention.
    return (
        every_row(top_scores - normaliser, NEG_INF),
        every_row(top_ids, PAD_ID),
        every_row(eos_log_probs, NEG_INF),
        every_row(tf.cast(alignment, tf.float32), 0.0),
        state,
    )


def block_repeated_ngrams(logits, written, position, n):
    """`logits` [N, V] with -inf at every token that would complete an
    n-gram its row has written already (`no_repeat_ngram_size` of fairseq
    and CTranslate2), so that the search renormalises over the others.

    Args:
        logits: float32 [N, V], the next token's.
        written: int32 [T, N], time-major: row r wrote `written[:position,
            r]` so far (what lies after is ignored).
        position: t, how many tokens each row has written (a scalar).
        n: the n-gram size (>= 1; 1 bans every token written before).

    An earlier n-gram starting at j (j + n - 1 < t) bans its last token
    when its first n - 1 tokens are the row's last n - 1.
    """
    starts = tf.maximum(tf.shape(written)[0] - n + 1, 0)
    last = tf.gather(written, tf.maximum(position - n + 1 + tf.range(n - 1), 0))
    matched = tf.broadcast_to(
        tf.range(starts)[:, None] <= position - n, [starts, tf.shape(logits)[0]]
    )
    for i in range(n - 1):
        matched &= written[i : i + starts] == last[i][None]
    hits = tf.cast(tf.where(matched), tf.int32)  # [M, 2]: (j, row)
    banned = tf.gather_nd(written[n - 1 :], hits)
    index = tf.stack([hits[:, 1], banned], axis=-1)
    blocked = tf.fill(tf.shape(banned), tf.constant(NEG_INF, logits.dtype))
    return tf.tensor_scatter_nd_update(logits, index, blocked)


def _log_sum_exp(logits, best_scores, best_ids):
    """[N, 1]: the log-sum-exp of `logits` [N, V] through the fused softmax
    kernel (one op, where max, subtract, exp and sum are four passes over
    [N, V]): for the row's most likely token j, log-sum-exp = logit_j -
    log p_j, and p_j >= 1 / V keeps log p_j exact to float32 rounding. j is
    the best ranked token, or <pad> or <s> (not ranked)."""
    heads = tf.stack([best_scores, logits[:, PAD_ID], logits[:, BOS_ID]], -1)
    head_ids = tf.stack(
        [
            best_ids,
            tf.fill(tf.shape(best_ids), PAD_ID),
            tf.fill(tf.shape(best_ids), BOS_ID),
        ],
        -1,
    )
    head = tf.argmax(heads, axis=-1, output_type=tf.int32)
    j = tf.gather(head_ids, head, batch_dims=1)
    p_j = tf.gather(tf.nn.softmax(logits), j, batch_dims=1)
    return (tf.reduce_max(heads, axis=-1) - tf.math.log(p_j))[:, None]


def _every_row(values, fill, live, index):
    """`values` of the live rows (at `index`) back in place among all the
    rows of `live`, `fill` on the others."""
    shape = tf.concat([tf.shape(live), tf.shape(values)[1:]], 0)
    others = tf.fill(shape, tf.constant(fill, values.dtype))
    return tf.tensor_scatter_nd_update(others, index, values)


def top_k(scores, k, excluded=(), chunk=None):
    """`tf.math.top_k(scores, min(k, V))` for scores [N, V], with the token
    ids `excluded` never chosen, in two cheaper passes when V is large: the
    best k of the chunk maxima (chunks of `chunk` tokens), then the best k
    among those k chunks' tokens. The k best tokens lie in the k chunks with
    the best maxima, so the result is exact, ties included (the chosen
    chunks are kept in vocabulary order, and `top_k` prefers the lower index
    among equal values). The excluded ids are masked in the small tensors
    only (the first chunk's maximum, the chosen chunks), never in [N, V].
    `chunk` defaults to `chunk_size(V)`: where it does not divide V, [N, V]
    is padded (a copy) before it is cut into chunks.
    """
    vocab = scores.shape[-1]
    if chunk is None:
        chunk = chunk_size(vocab)
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
    if vocab % chunk:
        scores = tf.pad(
            scores, [[0, 0], [0, -vocab % chunk]], "CONSTANT", NEG_INF
        )
    chunks = tf.reshape(scores, [rows, -1, chunk])
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


def chunk_size(vocab, preferred=64):
    """The chunk of `top_k`'s first pass for a vocabulary of `vocab`: the
    divisor of `vocab` nearest `preferred` (by ratio) within a factor of
    four, so that [N, V] is cut into chunks without the copy that padding
    it takes at every step (4% of a beam-5 step's op time at joey_match's
    7,859 = 29 x 271 tokens, benchmarks/history/near_the_limit.md);
    `preferred` where there is none (or V is unknown)."""
    if not vocab:
        return preferred
    divisors = [
        size
        for size in range(preferred // 4, 4 * preferred + 1)
        if vocab % size == 0
    ]
    return min(
        divisors,
        key=lambda size: max(size / preferred, preferred / size),
        default=preferred,
    )


def _exclusion_mask(excluded, size):
    """float32 [size]: NEG_INF at the token ids `excluded`, 0 elsewhere."""
    ids = tf.range(size)
    excluded_ids = tf.constant(sorted(set(excluded)), tf.int32)
    hit = tf.reduce_any(ids[:, None] == excluded_ids, axis=-1)
    return tf.where(hit, NEG_INF, 0.0)


def record_token(written, position, tokens):
    """`written` [T, N] with row `position` set to `tokens` [N]."""
    return tf.tensor_scatter_nd_update(written, [[position]], tokens[None])


def keep_static_shapes(before, after):
    """`after` (loop variables after a step) with the static shapes of
    `before`: with a batch size known when tracing, the gathers of a step
    lose it, and a loop refuses variables whose shape changes."""

    def keep(old, new):
        if isinstance(new, tf.Tensor):
            new.set_shape(old.shape)
        return new

    return tf.nest.map_structure(keep, before, after)

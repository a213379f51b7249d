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
`ceil(a * source length + b)`, where </s> is forced. With
`no_repeat_ngram_size` n, each hypothesis also carries the tokens it wrote
(reordered with it at every step), and no hypothesis writes a token that
would repeat one of its own n-grams.
"""

import tensorflow as tf

from seq2seq_attn.config.scoring import Scoring
from seq2seq_attn.decoding.search_step import (
    NEG_INF,
    SearchResult,
    keep_static_shapes,
    max_output_lengths,
    record_token,
    require_tensorflow_backend,
    top_candidates,
)
from seq2seq_attn.models.inference import map_rows
from seq2seq_attn.special_tokens import BOS_ID, EOS_ID, PAD_ID


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

        return keep_static_shapes(
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


def beam_search(
    form,
    source_ids,
    beam_size=5,
    scoring=None,
    nbest=1,
    max_length_a=1.5,
    max_length_b=5,
    no_repeat_ngram_size=0,
):
    """Beam search for every sentence of a batch at once.

    Args:
        form: a `SearchableForm` (`InferenceForm`, `EnsembleForm`).
        source_ids: int32 [B, Tx], 0 pads.
        beam_size: K.
        scoring: a `Scoring` (default: 1/L^0.75 length normalisation).
        nbest: N <= K hypotheses to return per sentence.
        max_length_a, max_length_b: the output length limit (see module).
        no_repeat_ngram_size: n > 0 blocks repeated n-grams within a
            hypothesis (see module); 0: off.

    Returns:
        A `SearchResult`.
    """
    require_tensorflow_backend("beam_search")
    if not 1 <= nbest <= beam_size:
        raise ValueError(
            f"nbest must be in [1, beam_size={beam_size}], got {nbest}"
        )
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    with form.weights_cast_once():
        search = _BeamSearch(
            form,
            source_ids,
            beam_size,
            scoring or Scoring(),
            max_output_lengths(source_ids, max_length_a, max_length_b),
            no_repeat_ngram_size,
        )
        final = tf.while_loop(
            search.not_done,
            lambda v: (search.step(v),),
            (search.start(),),
            maximum_iterations=search.steps,
        )[0]
        return search.best(final, nbest)


class _BeamSearch:
    """The pieces of one beam search's loop: its start, its condition, its
    step (candidates, choice, advance) and the read-back of the best."""

    def __init__(self, form, source_ids, k, scoring, limits, ngram=0):
        self.form, self.k, self.scoring, self.limits = form, k, scoring, limits
        self.ngram = ngram
        self.batch = tf.shape(source_ids)[0]
        self.source_length = tf.shape(source_ids)[1]
        self.steps = tf.maximum(tf.reduce_max(limits), 1)
        source_mask = tf.repeat(source_ids != PAD_ID, k, axis=0)
        self.source_mask = tf.reshape(
            source_mask, [self.batch, k, self.source_length]
        )
        encoded, self.initial_state = form.encode(source_ids)
        self.encoded = map_rows(self.tile, encoded)

    def tile(self, x):
        return tf.repeat(x, self.k, axis=0)

    def start(self):
        """The loop variables before the first step: every sentence's
        first beam holds <s>, the other beams are empty (-inf)."""
        batch, k, steps = self.batch, self.k, self.steps
        first_beam = tf.one_hot(0, k, on_value=0.0, off_value=NEG_INF)
        prefixes = {}
        if self.ngram:
            prefixes["prefixes"] = tf.zeros([steps, batch * k], tf.int32)
        return dict(
            step=tf.constant(0),
            state=tf.nest.map_structure(self.tile, self.initial_state),
            tokens=tf.fill([batch * k], BOS_ID),
            cumulative=tf.tile(first_beam[None], [batch, 1]),
            finished=tf.zeros([batch, k], tf.bool),
            lengths=tf.zeros([batch, k], tf.int32),
            coverage=tf.zeros([batch, k, self.source_length]),
            parents=tf.TensorArray(tf.int32, size=steps),
            written=tf.TensorArray(tf.int32, size=steps),
            attention=tf.TensorArray(tf.float32, size=steps),
            **prefixes,
        )

    def not_done(self, v):
        alive = ~v["finished"] & (v["cumulative"] > NEG_INF)
        # At least one step, also for an empty batch: the recorded
        # histories then have a (zero-sized) shape to stack.
        return (v["step"] < self.steps) & (
            tf.reduce_any(alive) | (v["step"] == 0)
        )

    def step(self, v):
        candidates = self.candidates(v)
        return keep_static_shapes(v, self.advance(v, *candidates))

    def candidates(self, v):
        """Each beam's k best extensions: `(log_probs [B, K, k], ids [B, K,
        k], alignment [B, K, Tx], state)`, with </s> forced at the length
        limit and a finished hypothesis extended only by <pad>, at no cost.

        Within one beam every candidate has the same length and coverage,
        so the ranking is monotone in log p(y): each beam's k best tokens
        hold the k best of all K x V candidates. Only those are ranked.
        """
        batch, k, t = self.batch, self.k, v["step"]
        live = ~v["finished"] & (v["cumulative"] > NEG_INF)
        log_probs, ids, eos_log_probs, alignment, state = top_candidates(
            self.form,
            v["tokens"],
            t,
            v["state"],
            self.encoded,
            k,
            tf.reshape(live, [-1]),
            v.get("prefixes"),
            self.ngram,
        )
        per_beam = tf.shape(ids)[-1]
        log_probs = tf.reshape(log_probs, [batch, k, -1])
        ids = tf.reshape(ids, [batch, k, -1])
        eos_log_probs = tf.reshape(eos_log_probs, [batch, k, 1])
        alignment = tf.reshape(alignment, [batch, k, self.source_length])
        first = tf.range(per_beam)[None, None] == 0  # [1, 1, per_beam]
        force_eos = (t >= self.limits - 1)[:, None, None]
        ids = tf.where(force_eos, EOS_ID, ids)
        log_probs = tf.where(
            force_eos, tf.where(first, eos_log_probs, NEG_INF), log_probs
        )
        finished = v["finished"][:, :, None]
        ids = tf.where(finished, PAD_ID, ids)
        log_probs = tf.where(finished, tf.where(first, 0.0, NEG_INF), log_probs)
        return log_probs, ids, alignment, state

    def choose(self, v, log_probs, lengths, coverage):
        """The K best of the candidates by score: `(flat index into each
        sentence's K x k candidates [B, K], cumulative log p of those)`."""
        batch = self.batch
        candidates = v["cumulative"][:, :, None] + log_probs
        divisor = self.scoring.length_divisor(lengths)[:, :, None]
        ranked = candidates / divisor
        if self.scoring.beta > 0:
            ranked += self.scoring.coverage_penalty(coverage, self.source_mask)[
                :, :, None
            ]
        ranked = tf.where(candidates > NEG_INF, ranked, NEG_INF)
        _, flat_index = tf.math.top_k(tf.reshape(ranked, [batch, -1]), self.k)
        cumulative = tf.gather(
            tf.reshape(candidates, [batch, -1]), flat_index, batch_dims=1
        )
        return flat_index, cumulative

    def advance(self, v, log_probs, ids, alignment, state):
        """The loop variables after step t: the chosen hypotheses, their
        parents, tokens and attention recorded."""
        batch, k, t = self.batch, self.k, v["step"]
        lengths = v["lengths"] + tf.cast(~v["finished"], tf.int32)
        coverage = v["coverage"] + tf.where(
            v["finished"][:, :, None], 0.0, alignment
        )
        flat_index, cumulative = self.choose(v, log_probs, lengths, coverage)
        per_beam = tf.shape(ids)[-1]
        parents = flat_index // per_beam
        new_tokens = tf.gather(
            tf.reshape(ids, [batch, -1]), flat_index, batch_dims=1
        )

        def pick(x):
            return tf.gather(x, parents, batch_dims=1)

        was_finished = pick(v["finished"])
        written = tf.where(was_finished, PAD_ID, new_tokens)
        step_attention = tf.where(
            was_finished[:, :, None], 0.0, pick(alignment)
        )
        flat_parents = tf.reshape(parents + tf.range(batch)[:, None] * k, [-1])
        prefixes = {}
        if self.ngram:
            prefixes["prefixes"] = record_token(
                tf.gather(v["prefixes"], flat_parents, axis=1),
                t,
                tf.reshape(written, [-1]),
            )
        return dict(
            step=t + 1,
            state=tf.nest.map_structure(
                lambda s: tf.gather(s, flat_parents), state
            ),
            tokens=tf.reshape(written, [-1]),
            cumulative=cumulative,
            finished=was_finished | (new_tokens == EOS_ID),
            lengths=pick(lengths),
            coverage=pick(coverage),
            parents=v["parents"].write(t, parents),
            written=v["written"].write(t, written),
            attention=v["attention"].write(t, step_attention),
            **prefixes,
        )

    def best(self, final, nbest):
        """The `nbest` best hypotheses of each sentence, read back."""
        scores = self.scoring.score(
            final["cumulative"],
            final["lengths"],
            final["coverage"],
            self.source_mask,
        )
        scores = tf.where(final["cumulative"] > NEG_INF, scores, NEG_INF)
        top_scores, order = tf.math.top_k(scores, nbest)

        def best(x):
            return tf.gather(x, order, batch_dims=1)

        produced = final["step"]
        tokens, attention = _backtrack(
            *(
                final[name].stack()[:produced]
                for name in ("parents", "written", "attention")
            ),
            order,
        )
        unused = self.steps - produced  # the buffers keep their full length
        return SearchResult(
            tokens=tf.pad(tokens, [[0, 0], [0, 0], [0, unused]]),
            lengths=best(final["lengths"]),
            scores=top_scores,
            log_probs=best(final["cumulative"]),
            alignments=tf.pad(attention, [[0, 0], [0, 0], [0, unused], [0, 0]]),
        )

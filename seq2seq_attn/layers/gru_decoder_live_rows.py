"""RNNsearch's decoder recurrence on the live rows, its backward pass
written out (see `gru_live_rows` for the GRU's part and for why).

`GRUDecoder(..., skip_padding=True)` with attention steps only the rows
still inside their target. Each step i (Bahdanau et al. 2015, A.1.2, A.2.2):

    e_ij = v_a^T tanh(W_a s_{i-1} + k_j),  k_j = U_a h_j (+ b_a, once)
    alpha_i = masked softmax(e_i),  c_i = sum_j alpha_ij h_j
    s_i = GRU(a_i + C c_i, s_{i-1}),  a_i = W E y_{i-1} + b

and back, on the live rows, with the GRU's gradient dL/d(a_i + C c_i) = g_i:

    dc_i = g_i C^T (+ what reaches c_i from the outputs)
    dalpha_ij = dc_i . h_j,  de_ij = alpha_ij (dalpha_ij - sum_j alpha_ij
    dalpha_ij),  dpre_ij = de_ij v_a (1 - tanh(...)^2)
    dq_i = sum_j dpre_ij,  ds_{i-1} += dq_i W_a^T

The loop carries ds and the sums over steps of dk_j (dpre) and dv_a; the
gradients of the kernels (U_zr, U, C, W_a) and of the annotations h_j
(sum_i alpha_ij dc_i) are single products over all the steps after it.
"""

import tensorflow as tf

from seq2seq_attn.layers.gru_live_rows import (
    all_steps_product,
    gru_kernel_gradients,
    gru_step_gradient,
    gru_step_with_gates,
    live_and_rest,
    merged,
    packed_rows_array,
)
from seq2seq_attn.layers.masking import large_negative


def attention_decoder_over_live_rows(
    projected, initial_state, memory, keys, memory_mask, weights, live_rows
):
    """s_i, c_i and alpha_i of every step of RNNsearch's decoder.

    Args:
        projected: a_i = W E y_{i-1} + b, time-major [T, B, 3n], the rows
            ordered longest first (`with_rows_longest_first`).
        initial_state: s_0, [B, n].
        memory: the annotations h_j, [B, Tx, D].
        keys: U_a h_j (+ b_a), [B, Tx, n'].
        memory_mask: boolean [B, Tx], True on real source positions.
        weights: `GRUDecoder.read_step_weights()`: `((U_zr, U), C, (W_a,
            v_a))`, in the dtype of `projected`.
        live_rows: int32 [T], how many rows (the first ones) are inside
            their target at each step.

    Returns:
        `(states, contexts, alignments)`, time-major: s_i [T, B, n] (a row
        past its end keeps its state), c_i [T, B, D] and alpha_i
        [T, B, Tx] (zero past a row's end).
    """
    gru_kernels, context_kernel, (query_kernel, score_vector) = weights

    @tf.custom_gradient
    def recurrence(projected, initial_state, memory, keys, *kernels):
        weights = _unflatten(kernels)
        outputs, gates = _forward(
            (projected, initial_state, memory, keys),
            weights,
            memory_mask,
            live_rows,
        )

        def gradient(*upstream):
            return _backward(
                (projected, initial_state, memory, keys),
                weights,
                live_rows,
                (outputs, gates),
                upstream,
            )

        return outputs, gradient

    return recurrence(
        projected,
        initial_state,
        memory,
        keys,
        *gru_kernels,
        context_kernel,
        query_kernel,
        score_vector,
    )


def _unflatten(kernels):
    gates_kernel, candidate_kernel, context_kernel, query, score = kernels
    return (gates_kernel, candidate_kernel), context_kernel, (query, score)


def _array(like, steps):
    """A TensorArray of `steps` elements shaped as `like`'s."""
    return tf.TensorArray(like.dtype, size=steps, element_shape=like.shape)


def _attend(query, keys, memory, mask, score_vector):
    """alpha_i and c_i of the live rows from W_a s_{i-1} (`query`)."""
    hidden = tf.tanh(query[:, None, :] + keys)
    scores = tf.linalg.matvec(hidden, score_vector)
    scores = tf.where(mask, scores, large_negative(scores.dtype))
    alignment = tf.nn.softmax(scores) * tf.cast(mask, scores.dtype)
    context = tf.linalg.matvec(memory, alignment, transpose_a=True)
    return alignment, context


def _forward(inputs, weights, memory_mask, live_rows):
    """The outputs, time-major, and the gates z, r, h~ of the live rows of
    every step, packed in time order [sum of live_rows, 3n]."""
    projected, initial_state, memory, keys = inputs
    gru_kernels, context_kernel, (query_kernel, score_vector) = weights
    steps, batch = tf.shape(projected)[0], tf.shape(projected)[1]
    if memory_mask is None:
        memory_mask = tf.ones(tf.shape(memory)[:2], dtype=tf.bool)
    states = _array(initial_state, steps)
    contexts = _array(memory[:, 0], steps)
    alignments = _array(memory[:, :, 0], steps)
    gates = packed_rows_array(projected.dtype, steps, projected.shape[-1])

    def body(t, state, states, contexts, alignments, gates):
        live = live_rows[t]
        previous, rest = live_and_rest(state, live)
        alignment, context = _attend(
            tf.matmul(previous, query_kernel),
            keys[:live],
            memory[:live],
            memory_mask[:live],
            score_vector,
        )
        new, step_gates = gru_step_with_gates(
            projected[t, :live] + tf.matmul(context, context_kernel),
            previous,
            gru_kernels,
        )
        state = merged(new, rest, initial_state)
        padding = [[0, batch - live], [0, 0]]
        return (
            t + 1,
            state,
            states.write(t, state),
            contexts.write(t, tf.pad(context, padding)),
            alignments.write(t, tf.pad(alignment, padding)),
            gates.write(t, step_gates),
        )

    _, _, states, contexts, alignments, gates = tf.while_loop(
        lambda t, *_: t < steps,
        body,
        (tf.constant(0), initial_state, states, contexts, alignments, gates),
        maximum_iterations=steps,
    )
    outputs = (states.stack(), contexts.stack(), alignments.stack())
    return outputs, gates.concat()


def _backward(inputs, weights, live_rows, saved, upstream):
    """The gradients of the recurrence's inputs and kernels."""
    _, initial_state, _, _ = inputs
    (states, contexts, alignments), gates = saved
    d_states, d_contexts, d_alignments = (
        None if d is None else tf.convert_to_tensor(d) for d in upstream
    )
    previous = tf.concat([initial_state[None], states[:-1]], axis=0)
    queries = tf.matmul(previous, weights[2][0])  # W_a s_{i-1}, all at once
    # Read a step at a time inside the loop: tensor[t].
    per_step = dict(
        previous=previous,
        queries=queries,
        alignments=alignments,
        d_states=d_states,
        d_contexts=d_contexts,
        d_alignments=d_alignments,
    )
    d_initial_state, d_keys, d_score, stacked = _backward_loop(
        inputs, weights, live_rows, per_step, gates
    )
    d_projected, d_contexts, d_queries, reset_states = stacked
    return (
        d_projected,
        d_initial_state,
        # sum_i alpha_ij dc_i for each sentence: [B, Tx, T] x [B, T, D].
        tf.einsum("tbx,tbd->bxd", alignments, d_contexts),
        d_keys,
        *gru_kernel_gradients(previous, reset_states, d_projected),
        all_steps_product(contexts, d_projected),
        all_steps_product(previous, d_queries),
        d_score,
    )


def _backward_loop(inputs, weights, live_rows, per_step, gates):
    """The loop back over the steps: dL/ds_0, the sums of dL/dk_j and
    dL/dv_a, and, stacked [T, B, ...], dL/da_i, dL/dc_i, dL/d(W_a s_{i-1})
    and r_i s_{i-1}."""
    projected, initial_state, memory, keys = inputs
    gru_kernels, context_kernel, (query_kernel, score_vector) = weights
    steps, batch = tf.shape(projected)[0], tf.shape(projected)[1]
    starts = tf.cumsum(live_rows, exclusive=True)
    written = tuple(
        _array(like, steps)
        for like in (projected[0], memory[:, 0], keys[:, 0], initial_state)
    )

    def body(k, d_state, d_keys, d_score, written):
        t = steps - 1 - k
        live = live_rows[t]
        d_state += _read(per_step["d_states"], t, d_state)
        d_new, d_rest = live_and_rest(d_state, live)
        d_previous, d_input, reset_state = gru_step_gradient(
            d_new,
            gates[starts[t] : starts[t] + live],
            per_step["previous"][t, :live],
            gru_kernels,
        )
        d_context = tf.matmul(d_input, context_kernel, transpose_b=True)
        d_context += _read(per_step["d_contexts"], t, d_context)
        d_alignment = tf.linalg.matvec(memory[:live], d_context)
        d_alignment += _read(per_step["d_alignments"], t, d_alignment)
        d_query, d_hidden, d_score_t = _attention_gradient(
            d_alignment,
            per_step["alignments"][t, :live],
            per_step["queries"][t, :live],
            keys[:live],
            score_vector,
        )
        d_previous += tf.matmul(d_query, query_kernel, transpose_b=True)
        padding = [[0, batch - live], [0, 0]]
        step_values = (d_input, d_context, d_query, reset_state)
        written = tuple(
            array.write(t, tf.pad(value, padding))
            for array, value in zip(written, step_values, strict=True)
        )
        d_state = merged(d_previous, d_rest, initial_state)
        # Added to the live rows only, in place where TensorFlow can.
        d_keys = tf.tensor_scatter_nd_add(
            d_keys, tf.range(live)[:, None], d_hidden
        )
        return k + 1, d_state, d_keys, d_score + d_score_t, written

    _, d_initial_state, d_keys, d_score, written = tf.while_loop(
        lambda k, *_: k < steps,
        body,
        (
            tf.constant(0),
            tf.zeros_like(initial_state),
            tf.zeros_like(keys),
            tf.zeros_like(score_vector),
            written,
        ),
        maximum_iterations=steps,
    )
    stacked = tuple(array.stack() for array in written)
    return d_initial_state, d_keys, d_score, stacked


def _read(upstream, t, like):
    """upstream[t] on the rows of `like`, or 0 for an output nothing
    reached (None)."""
    if upstream is None:
        return tf.zeros((), like.dtype)
    return upstream[t, : tf.shape(like)[0]]


def _attention_gradient(d_alignment, alignment, query, keys, score_vector):
    """Back through alpha_i = masked softmax(v_a^T tanh(q + k_j)) on the
    live rows: `(dL/dq [L, n'], dL/dk_j [L, Tx, n'], dL/dv_a [n'])`."""
    d_scores = alignment * (
        d_alignment - tf.reduce_sum(alignment * d_alignment, -1, keepdims=True)
    )
    hidden = tf.tanh(query[:, None, :] + keys)
    d_hidden = d_scores[:, :, None] * score_vector * (1 - tf.square(hidden))
    d_score = tf.linalg.matvec(
        tf.reshape(hidden, [-1, hidden.shape[-1]]),
        tf.reshape(d_scores, [-1]),
        transpose_a=True,
    )
    return tf.reduce_sum(d_hidden, axis=1), d_hidden, d_score

"""The GRU recurrence on the live rows, with its backward pass written out.

`GRU(..., skip_padding=True)` (training, TensorFlow without XLA) steps only
the rows still inside their sequence (`scan_over_time`'s `live_rows`). Its
gradient, left to TensorFlow's while-loop gradient, would at every step of
the backward loop multiply for the kernels' gradients, x_t^T g_t ([n, B] x
[B, 3n], an inner dimension of one batch), add the result to an [n, 3n]
accumulator, pop every saved intermediate, and undo the step's split of
rows. Here the backward loop carries only dL/dh_t (Bahdanau et al. 2015,
A.2.1, differentiated by hand):

    h' = (1 - z) h + z h~,  h~ = tanh(a_h + U [r h]),
    [z; r] = sigmoid(a_zr + [U_z; U_r] h)
    dh~ = dh' z (1 - h~^2)                      (the candidate's pre-activation)
    dz = dh' (h~ - h) z (1 - z),  dr = (dh~ U^T) h r (1 - r)
    dh = dh' (1 - z) + (dh~ U^T) r + [dz dr] [U_z; U_r]^T

and stores [dz dr dh~], the gradient of the step's input projection a_t,
for every step. The kernels' gradients are then two products over all
steps at once, after the loop: dU_zr = sum_t h_{t-1}^T [dz dr]_t and
dU = sum_t (r_t h_{t-1})^T dh~_t.
"""

import tensorflow as tf


def gru_over_live_rows(projected, initial_state, kernels, live_rows, reverse):
    """The states of a GRU over the live rows, and the final state.

    Args:
        projected: time-major input projections W x_t + b, [T, B, 3n], the
            rows ordered longest first (`with_rows_longest_first`).
        initial_state: h_0, [B, n].
        kernels: `((U_z U_r) [n, 2n], U [n, n])` from
            `split_recurrent_kernel`, in the dtype of `projected`.
        live_rows: int32 [T], how many rows (the first ones) are inside
            their sequence at each position.
        reverse: read the positions from the last to the first.

    Returns:
        `(states, final_state)`: h_t after each position [T, B, n] (a row
        past its end keeps its state) and the state after the last step.
    """
    gates_kernel, candidate_kernel = kernels

    @tf.custom_gradient
    def recurrence(projected, initial_state, gates_kernel, candidate_kernel):
        kernels = (gates_kernel, candidate_kernel)
        states, final_state, gates = _forward(
            projected, initial_state, kernels, live_rows, reverse
        )

        def gradient(d_states, d_final_state):
            return _backward(
                (projected, initial_state, kernels, live_rows, reverse),
                (states, gates),
                (d_states, d_final_state),
            )

        return (states, final_state), gradient

    return recurrence(projected, initial_state, gates_kernel, candidate_kernel)


def _order(steps, i, reverse):
    """The position of the loop's i-th step."""
    return steps - 1 - i if reverse else i


def _forward(projected, initial_state, kernels, live_rows, reverse):
    """The states, the final state, and the gates z, r, h~ of the live rows
    of every step, packed in the loop's order [sum of live_rows, 3n]."""
    steps = tf.shape(projected)[0]
    states = tf.TensorArray(
        projected.dtype, size=steps, element_shape=initial_state.shape
    )
    gates = packed_rows_array(projected.dtype, steps, projected.shape[-1])

    def body(i, state, states, gates):
        t = _order(steps, i, reverse)
        live = live_rows[t]
        previous, rest = live_and_rest(state, live)
        new, step_gates = gru_step_with_gates(
            projected[t, :live], previous, kernels
        )
        state = merged(new, rest, initial_state)
        gates = gates.write(i, step_gates)
        return i + 1, state, states.write(t, state), gates

    _, final_state, states, gates = tf.while_loop(
        lambda i, *_: i < steps,
        body,
        (tf.constant(0), initial_state, states, gates),
        maximum_iterations=steps,
    )
    return states.stack(), final_state, gates.concat()


def _backward(arguments, saved, upstream):
    """The gradients of `gru_over_live_rows`'s four float inputs."""
    projected, initial_state, kernels, live_rows, reverse = arguments
    states, gates = saved
    d_states, d_final_state = (
        tf.zeros_like(like) if d is None else tf.convert_to_tensor(d)
        for d, like in zip(upstream, (states, initial_state), strict=True)
    )
    steps, batch = tf.shape(projected)[0], tf.shape(projected)[1]
    # h_{t-1} of each position t, in the order the positions are read.
    if reverse:
        previous = tf.concat([states[1:], initial_state[None]], axis=0)
    else:
        previous = tf.concat([initial_state[None], states[:-1]], axis=0)
    # Where the loop's i-th step's gates start in `gates`.
    loop_live = tf.reverse(live_rows, [0]) if reverse else live_rows
    starts = tf.cumsum(loop_live, exclusive=True)
    d_inputs = tf.TensorArray(
        projected.dtype, size=steps, element_shape=projected.shape[1:]
    )
    # (r h_{t-1}) of each step for dU, zero past the live rows as dh~ is.
    reset_states = tf.TensorArray(
        projected.dtype, size=steps, element_shape=initial_state.shape
    )

    def body(k, d_state, d_inputs, reset_states):
        i = steps - 1 - k  # the forward loop's steps, last first
        t = _order(steps, i, reverse)
        live = live_rows[t]
        d_state += d_states[t]
        d_new, d_rest = live_and_rest(d_state, live)
        d_previous, d_input, reset_state = gru_step_gradient(
            d_new,
            gates[starts[i] : starts[i] + live],
            previous[t, :live],
            kernels,
        )
        padding = [[0, batch - live], [0, 0]]
        d_inputs = d_inputs.write(t, tf.pad(d_input, padding))
        reset_states = reset_states.write(t, tf.pad(reset_state, padding))
        d_state = merged(d_previous, d_rest, initial_state)
        return k + 1, d_state, d_inputs, reset_states

    _, d_initial_state, d_inputs, reset_states = tf.while_loop(
        lambda k, *_: k < steps,
        body,
        (tf.constant(0), d_final_state, d_inputs, reset_states),
        maximum_iterations=steps,
    )
    d_projected = d_inputs.stack()
    return (
        d_projected,
        d_initial_state,
        *gru_kernel_gradients(previous, reset_states.stack(), d_projected),
    )


def gru_step_with_gates(projected_input, previous, kernels):
    """`gru_step` on the live rows, and the gates z, r, h~ side by side
    [L, 3n] that `gru_step_gradient` reads."""
    gates_kernel, candidate_kernel = kernels
    units = previous.shape[-1]
    gate_inputs, candidate_input = tf.split(
        projected_input, [2 * units, units], axis=-1
    )
    update_reset = tf.sigmoid(gate_inputs + tf.matmul(previous, gates_kernel))
    update, reset = tf.split(update_reset, 2, axis=-1)
    candidate = tf.tanh(
        candidate_input + tf.matmul(reset * previous, candidate_kernel)
    )
    new = (1.0 - update) * previous + update * candidate
    return new, tf.concat([update_reset, candidate], axis=-1)


def gru_kernel_gradients(previous, reset_states, d_projected):
    """`(dU_zr, dU)` from every step's h_{t-1}, r_t h_{t-1} and dL/da_t
    ([T, B, n], [T, B, n], [T, B, 3n], zero past the live rows): one
    product each over all the steps."""
    units = previous.shape[-1]
    d_gates, d_candidate = tf.split(d_projected, [2 * units, units], axis=-1)
    return (
        all_steps_product(previous, d_gates),
        all_steps_product(reset_states, d_candidate),
    )


def gru_step_gradient(d_new, gates, previous, kernels):
    """One step back through h' = GRU(a, h) on the live rows (the
    equations in the module's docstring).

    Args:
        d_new: dL/dh', [L, n].
        gates: the step's z, r, h~ side by side, [L, 3n].
        previous: h, [L, n].
        kernels: `((U_z U_r), U)`.

    Returns:
        `(dL/dh, dL/da, r h)`: [L, n], [L, 3n] and [L, n].
    """
    gates_kernel, candidate_kernel = kernels
    update, reset, candidate = tf.split(gates, 3, axis=-1)
    d_candidate = d_new * update * (1.0 - tf.square(candidate))
    d_reset_state = tf.matmul(d_candidate, candidate_kernel, transpose_b=True)
    d_gates = tf.concat(
        [
            d_new * (candidate - previous) * update * (1.0 - update),
            d_reset_state * previous * reset * (1.0 - reset),
        ],
        axis=-1,
    )
    d_previous = (
        d_new * (1.0 - update)
        + d_reset_state * reset
        + tf.matmul(d_gates, gates_kernel, transpose_b=True)
    )
    d_input = tf.concat([d_gates, d_candidate], axis=-1)
    return d_previous, d_input, reset * previous


def live_and_rest(tensor, live):
    """The first `live` rows of `tensor` and the others (split, so that
    their gradient, where one is taken, is one concatenation)."""
    return tf.split(tensor, tf.stack([live, tf.shape(tensor)[0] - live]), num=2)


def merged(live_part, rest, like):
    """`live_and_rest`'s inverse, with the static shape of `like` (a
    while loop's carry keeps its shape)."""
    tensor = tf.concat([live_part, rest], axis=0)
    tensor.set_shape(like.shape)
    return tensor


def packed_rows_array(dtype, steps, width):
    """A TensorArray of `steps` elements [rows, width] of varying rows,
    whose `concat()` packs them in index order."""
    return tf.TensorArray(
        dtype,
        size=steps,
        infer_shape=False,
        element_shape=tf.TensorShape([None, width]),
    )


def all_steps_product(lefts, rights):
    """sum over steps and rows of left^T right: [T, B, k] and [T, B, m] to
    [k, m], one product."""
    return tf.matmul(
        tf.reshape(lefts, [-1, lefts.shape[-1]]),
        tf.reshape(rights, [-1, rights.shape[-1]]),
        transpose_a=True,
    )

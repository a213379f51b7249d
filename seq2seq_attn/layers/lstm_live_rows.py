"""One LSTM layer's recurrence on the live rows, its backward pass written out.

`StackedLSTM(...)(..., skip_padding=True)` (training, TensorFlow without XLA)
steps only the rows still inside their sequence, each layer in its own loop.
Its gradient, left to TensorFlow's while-loop gradient, would at every step
of the backward loop multiply for the recurrent kernel's gradient, h_{t-1}^T
g_t ([n, B] x [B, 4n], an inner dimension of one batch), add the result to
an [n, 4n] accumulator (4 M numbers at Luong's n = 1000), and pop every saved
intermediate. Here the backward loop carries only dL/dh and dL/dc (Luong et
al. 2015, Sec. 2, the LSTM differentiated by hand; gates in the order i, f,
g, o of `lstm_step`):

    a = a_x + U h,  i, f, o = sigmoid(a_i, a_f, a_o),  g = tanh(a_g)
    c' = f c + i g,  h' = o tanh(c')
    dc~ = dc' + dh' o (1 - tanh(c')^2)
    da = [dc~ g i (1 - i); dc~ c f (1 - f); dc~ i (1 - g^2);
          dh' tanh(c') o (1 - o)]
    dh = da U^T,  dc = dc~ f

and stores da, the gradient of the step's input projection a_x, for every
step. The kernel's gradient is then one product over all steps at once,
after the loop: dU = sum_t h_{t-1}^T da_t.
"""

import tensorflow as tf

from seq2seq_attn.layers.gru_live_rows import (
    all_steps_product,
    live_and_rest,
    merged,
    packed_rows_array,
)


def lstm_over_live_rows(projected, initial_state, recurrent_kernel, live_rows):
    """The states of one LSTM layer over the live rows, and the final state.

    Args:
        projected: time-major input projections W x_t + b, [T, B, 4n], the
            rows ordered longest first (`with_rows_longest_first`).
        initial_state: `(h_0, c_0)`, each [B, n].
        recurrent_kernel: U, [n, 4n], in the dtype of `projected`.
        live_rows: int32 [T], how many rows (the first ones) are inside
            their sequence at each position.

    Returns:
        `(hidden_states, (h, c))`: h_t after each position [T, B, n] (a row
        past its end keeps its state) and the state after the last step.
    """

    @tf.custom_gradient
    def recurrence(projected, hidden, cell, recurrent_kernel):
        hiddens, cells, gates, final_state = _forward(
            projected, (hidden, cell), recurrent_kernel, live_rows
        )

        def gradient(d_hiddens, d_hidden, d_cell):
            return _backward(
                (projected, (hidden, cell), recurrent_kernel, live_rows),
                (hiddens, cells, gates),
                (d_hiddens, d_hidden, d_cell),
            )

        return (hiddens, *final_state), gradient

    hiddens, hidden, cell = recurrence(
        projected, *initial_state, recurrent_kernel
    )
    return hiddens, (hidden, cell)


def _forward(projected, initial_state, recurrent_kernel, live_rows):
    """h_t and c_t after each position [T, B, n], the gates i, f, g, o of
    the live rows of every step, packed in step order [sum of live_rows,
    4n], and the final state."""
    steps = tf.shape(projected)[0]
    hidden, cell = initial_state

    def states_array():
        return tf.TensorArray(
            projected.dtype, size=steps, element_shape=hidden.shape
        )

    gates = packed_rows_array(projected.dtype, steps, projected.shape[-1])

    def body(t, hidden, cell, hiddens, cells, gates):
        live = live_rows[t]
        previous_hidden, rest_hidden = live_and_rest(hidden, live)
        previous_cell, rest_cell = live_and_rest(cell, live)
        step_gates = _gates(
            projected[t, :live] + tf.matmul(previous_hidden, recurrent_kernel)
        )
        input_gate, forget_gate, candidate, output_gate = tf.split(
            step_gates, 4, axis=-1
        )
        new_cell = forget_gate * previous_cell + input_gate * candidate
        new_hidden = output_gate * tf.tanh(new_cell)
        hidden = merged(new_hidden, rest_hidden, initial_state[0])
        cell = merged(new_cell, rest_cell, initial_state[1])
        return (
            t + 1,
            hidden,
            cell,
            hiddens.write(t, hidden),
            cells.write(t, cell),
            gates.write(t, step_gates),
        )

    _, hidden, cell, hiddens, cells, gates = tf.while_loop(
        lambda t, *_: t < steps,
        body,
        (tf.constant(0), hidden, cell, states_array(), states_array(), gates),
        maximum_iterations=steps,
    )
    return hiddens.stack(), cells.stack(), gates.concat(), (hidden, cell)


def _gates(pre_activations):
    """[i f g o] = [sigmoid, sigmoid, tanh, sigmoid] of a [L, 4n]."""
    units = pre_activations.shape[-1] // 4
    input_forget, candidate, output_gate = tf.split(
        pre_activations, [2 * units, units, units], axis=-1
    )
    return tf.concat(
        [tf.sigmoid(input_forget), tf.tanh(candidate), tf.sigmoid(output_gate)],
        axis=-1,
    )


def _backward(arguments, saved, upstream):
    """The gradients of the recurrence's four float inputs: a_x, h_0, c_0
    and U."""
    projected, initial_state, recurrent_kernel, live_rows = arguments
    hiddens, cells, gates = saved
    d_hiddens, d_hidden, d_cell = (
        tf.zeros_like(like) if d is None else tf.convert_to_tensor(d)
        for d, like in zip(upstream, (hiddens, *initial_state), strict=True)
    )
    steps, batch = tf.shape(projected)[0], tf.shape(projected)[1]
    # h_{t-1} and c_{t-1} of each position t.
    previous_hiddens = tf.concat([initial_state[0][None], hiddens[:-1]], 0)
    previous_cells = tf.concat([initial_state[1][None], cells[:-1]], 0)
    # Where step t's gates start in `gates`.
    starts = tf.cumsum(live_rows, exclusive=True)
    d_inputs = tf.TensorArray(
        projected.dtype, size=steps, element_shape=projected.shape[1:]
    )

    def body(k, d_hidden, d_cell, d_inputs):
        t = steps - 1 - k
        live = live_rows[t]
        d_hidden += d_hiddens[t]
        d_new_hidden, d_rest_hidden = live_and_rest(d_hidden, live)
        d_new_cell, d_rest_cell = live_and_rest(d_cell, live)
        d_input, d_previous_cell = lstm_step_gradient(
            d_new_hidden,
            d_new_cell,
            gates[starts[t] : starts[t] + live],
            cells[t, :live],
            previous_cells[t, :live],
        )
        d_previous_hidden = tf.matmul(
            d_input, recurrent_kernel, transpose_b=True
        )
        d_inputs = d_inputs.write(
            t, tf.pad(d_input, [[0, batch - live], [0, 0]])
        )
        d_hidden = merged(d_previous_hidden, d_rest_hidden, initial_state[0])
        d_cell = merged(d_previous_cell, d_rest_cell, initial_state[1])
        return k + 1, d_hidden, d_cell, d_inputs

    _, d_initial_hidden, d_initial_cell, d_inputs = tf.while_loop(
        lambda k, *_: k < steps,
        body,
        (tf.constant(0), d_hidden, d_cell, d_inputs),
        maximum_iterations=steps,
    )
    d_projected = d_inputs.stack()
    return (
        d_projected,
        d_initial_hidden,
        d_initial_cell,
        all_steps_product(previous_hiddens, d_projected),
    )


def lstm_step_gradient(d_hidden, d_cell, gates, cell, previous_cell):
    """One step back through (h', c') = LSTM(a, h, c) on the live rows (the
    equations in the module's docstring), but for the product with U^T.

    Args:
        d_hidden, d_cell: dL/dh' and dL/dc', [L, n].
        gates: the step's i, f, g, o side by side, [L, 4n].
        cell, previous_cell: c' and c, [L, n].

    Returns:
        `(dL/da, dL/dc)`: [L, 4n] and [L, n].
    """
    input_gate, forget_gate, candidate, output_gate = tf.split(gates, 4, -1)
    cell_tanh = tf.tanh(cell)
    d_cell += d_hidden * output_gate * (1.0 - tf.square(cell_tanh))
    d_input = tf.concat(
        [
            d_cell * candidate * input_gate * (1.0 - input_gate),
            d_cell * previous_cell * forget_gate * (1.0 - forget_gate),
            d_cell * input_gate * (1.0 - tf.square(candidate)),
            d_hidden * cell_tanh * output_gate * (1.0 - output_gate),
        ],
        axis=-1,
    )
    return d_input, d_cell * forget_gate

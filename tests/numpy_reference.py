"""The papers' equations in plain NumPy, one sentence and one step at a time.

Written from the equations, not from the package: loops over sentences,
positions and steps, no batching, no masking tricks. Padding is handled by
cutting each sentence to its true length.
"""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def bahdanau_attention(s, h, W_a, U_a, b_a, v_a):
    """Bahdanau A.1.2 for one sentence: s [Dq], h [Tx, Dv] -> (c, alpha)."""
    e = np.array([v_a @ np.tanh(s @ W_a + h_j @ U_a + b_a) for h_j in h])
    alpha = softmax(e)
    return alpha @ h, alpha


def luong_scores(score, h_t, h_bar, weights):
    """Luong Eq. 8 and the location function for one target state."""
    if score == "dot":
        return np.array([h_t @ h_s for h_s in h_bar])
    if score == "general":
        W_a = weights["kernel"].T  # [Dq, Dv]: h_t^T W_a h_s
        return np.array([h_t @ W_a @ h_s for h_s in h_bar])
    if score == "concat":
        W_a = np.concatenate(
            [weights["query_kernel"], weights["key_kernel"]], 0
        )
        v_a = weights["score_vector"]
        return np.array(
            [v_a @ np.tanh(np.concatenate([h_t, h_s]) @ W_a) for h_s in h_bar]
        )
    if score == "location":
        return (h_t @ weights["location_kernel"])[: len(h_bar)]
    raise ValueError(score)


def luong_attention(score, mode, window, h_t, h_bar, t, weights):
    """Luong Sec. 3.1-3.2 for one target state h_t over one sentence h_bar.

    Returns (context, alignment over the sentence's positions, p_t or None).
    """
    S = len(h_bar)
    scores = luong_scores(score, h_t, h_bar, weights)
    if mode == "global":
        a = softmax(scores)
        return a @ h_bar, a, None
    if mode == "local-m":
        p_t = float(t)
    else:
        W_p, v_p = weights["position_kernel"], weights["position_vector"]
        p_t = S * sigmoid(v_p @ np.tanh(h_t @ W_p))
    window_positions = [s for s in range(S) if abs(s - p_t) <= window]
    a = np.zeros(S)
    if window_positions:
        a[window_positions] = softmax(scores[window_positions])
    if mode == "local-p":
        sigma = window / 2.0
        s = np.arange(S)
        a = a * np.exp(-((s - p_t) ** 2) / (2 * sigma**2))
    return a @ h_bar, a, p_t


def maxout_deep_output(s, ey, c, U_o, V_o, C_o, b_o, W_o, b_w, pool=2):
    """Bahdanau A.2.2: t~ = U_o s + V_o Ey + C_o c; t_j = max over pairs."""
    t_tilde = s @ U_o + ey @ V_o + c @ C_o + b_o
    t = np.array(
        [
            t_tilde[pool * j : pool * (j + 1)].max()
            for j in range(len(t_tilde) // pool)
        ]
    )
    return t @ W_o + b_w


def gru(x, h0, W, U, b):
    """Bahdanau A.2.1 over one sentence x [T, D] (already cut to its length).

    W [D, 3n], U [n, 3n], b [3n], gate blocks ordered (z, r, candidate).
    Returns the states [T, n].
    """
    n = h0.shape[0]
    W_z, W_r, W_h = W[:, :n], W[:, n : 2 * n], W[:, 2 * n :]
    U_z, U_r, U_h = U[:, :n], U[:, n : 2 * n], U[:, 2 * n :]
    b_z, b_r, b_h = b[:n], b[n : 2 * n], b[2 * n :]
    h, states = h0, []
    for x_t in x:
        z = sigmoid(x_t @ W_z + h @ U_z + b_z)
        r = sigmoid(x_t @ W_r + h @ U_r + b_r)
        h_tilde = np.tanh(x_t @ W_h + (r * h) @ U_h + b_h)
        h = (1 - z) * h + z * h_tilde
        states.append(h)
    return np.array(states)


def lstm(x, h0, c0, W, U, b):
    """One LSTM layer over x [T, D]; gates ordered (i, f, g, o)."""
    h, c, states = h0, c0, []
    for x_t in x:
        i, f, g, o = np.split(x_t @ W + h @ U + b, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        states.append(h)
    return np.array(states), h, c


def conditional_gru_decoder(ey, s_0, h, W, C, U, b, attention=None):
    """Bahdanau A.2.2 for one sentence, teacher-forced: the states s_{i-1},
    contexts c_i and alignments alpha_i of every step i.

    ey [Ty, m] holds E y_{i-1}; h the annotations [Tx, Dc] (cut to the
    sentence's length), or with `attention=None` the fixed context [Dc] of
    RNNencdec; attention is (W_a, U_a, b_a, v_a). W [m, 3n], C [Dc, 3n],
    U [n, 3n], b [3n], gate blocks ordered (z, r, candidate):
        z_i = sigmoid(W_z E y_{i-1} + U_z s_{i-1} + C_z c_i)
        r_i = sigmoid(W_r E y_{i-1} + U_r s_{i-1} + C_r c_i)
        s~_i = tanh(W E y_{i-1} + U [r_i * s_{i-1}] + C c_i)
        s_i = (1 - z_i) * s_{i-1} + z_i * s~_i
    """
    n = s_0.shape[0]
    blocks = [slice(0, n), slice(n, 2 * n), slice(2 * n, 3 * n)]
    (W_z, W_r, W_h), (C_z, C_r, C_h), (U_z, U_r, U_h) = (
        [M[:, k] for k in blocks] for M in (W, C, U)
    )
    b_z, b_r, b_h = (b[k] for k in blocks)
    s, previous, contexts, alphas = s_0, [], [], []
    for ey_i in ey:
        if attention is None:
            c, alpha = h, np.zeros(0)
        else:
            c, alpha = bahdanau_attention(s, h, *attention)
        previous.append(s)
        contexts.append(c)
        alphas.append(alpha)
        z = sigmoid(ey_i @ W_z + s @ U_z + c @ C_z + b_z)
        r = sigmoid(ey_i @ W_r + s @ U_r + c @ C_r + b_r)
        s_tilde = np.tanh(ey_i @ W_h + (r * s) @ U_h + c @ C_h + b_h)
        s = (1 - z) * s + z * s_tilde
    return np.array(previous), np.array(contexts), np.array(alphas)


def luong_input_feeding_decoder(ey, state, h_bar, lstm_weights, attend, W_c):
    """Luong Sec. 3 with input feeding (Sec. 3.3) for one sentence: the
    attentional vectors h~_t and alignments a_t of every step t.

    ey [Ty, m] holds the embeddings of y_{t-1}; `state` the encoder's final
    (h, c) of each layer; `lstm_weights` (W, U, b) of each layer, bottom
    first; `attend(h_t, h_bar, t)` returns (c_t, a_t) (`luong_attention`).
    The input of step t is [E y_{t-1}; h~_{t-1}], h~_0 = 0, and
        h~_t = tanh(W_c [c_t; h_t])                                 (Eq. 5)
    """
    state = [(np.array(h), np.array(c)) for h, c in state]
    h_tilde = np.zeros(W_c.shape[1])
    attentional, alignments = [], []
    for t, ey_t in enumerate(ey):
        x = np.concatenate([ey_t, h_tilde])
        for layer, (W, U, b) in enumerate(lstm_weights):
            _, h, c = lstm(x[None], *state[layer], W, U, b)
            state[layer] = (h, c)
            x = h
        context, a_t = attend(x, h_bar, t)
        h_tilde = np.tanh(np.concatenate([context, x]) @ W_c)
        attentional.append(h_tilde)
        alignments.append(a_t)
    return np.array(attentional), np.array(alignments)

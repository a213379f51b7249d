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

"""Attention-weighted sums over tensors kept once per sentence.

A beam search runs the decoder for K hypotheses of each sentence, which all
attend to the same source annotations h_j. Anything linear in the context
c_i = sum_j alpha_ij h_j can then be computed from one tensor per sentence:
C c_i = sum_j alpha_ij (C h_j) (Bahdanau et al. 2015, A.2.2, for the GRU's
C and the deep output's C_o), so C h_j is projected once per sentence and a
step only weighs it, instead of gathering h_j for every hypothesis and
multiplying each c_i by C.
"""

from keras import ops


def weighted_sum_per_sentence(weights, sentence, values):
    """`sum_j weights[r, j] * values[sentence[r], j]` for every row r.

    The rows' weights are laid out in a [S, M, Tx] grid (M: the most rows
    of one sentence, K in a beam search) and multiplied by `values` in one
    batched matmul, so that no row gathers its sentence's [Tx, D] values.
    The rows may come in any order, several or none per sentence.

    Args:
        weights: [R, Tx], e.g. the alignment alpha_i of R hypotheses.
        sentence: int32 [R], the sentence of each row, in [0, S).
        values: [S, Tx, D], e.g. C h_j for every sentence.

    Returns:
        [R, D], in the dtype of `values`.
    """
    sentences, source_steps = ops.shape(values)[0], ops.shape(values)[1]
    # The row's slot in its sentence's part of the grid: the rows of the
    # same sentence before it.
    member = ops.one_hot(sentence, sentences, dtype="int32")  # [R, S]
    slot = ops.sum(ops.cumsum(member, axis=0) * member, axis=1) - 1
    slots = ops.max(ops.concatenate([slot, ops.zeros((1,), "int32")])) + 1
    cell = sentence * slots + slot
    grid = ops.scatter(
        cell[:, None],
        ops.cast(weights, values.dtype),
        (sentences * slots, source_steps),
    )
    grid = ops.reshape(grid, (sentences, slots, source_steps))
    sums = ops.matmul(grid, values)  # [S, M, D]
    return ops.take(ops.reshape(sums, (-1, ops.shape(values)[-1])), cell, 0)

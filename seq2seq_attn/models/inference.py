"""The inference form: an encoder and one decoder step, sharing weights."""

from keras import ops

from seq2seq_attn.models.builder import family_of, named_layers


class InferenceForm:
    """Encoder plus single decoder step of a model built by `build_model`.

    Search (greedy, beam) drives these two functions; they use the trained
    model's own layers, so no weight is copied. Every tensor in `encoded` and
    in the state has the batch on its first axis, so a search can tile and
    reorder them.

    Args:
        model: a model from `build_model` (or loaded from a `.keras` file).

    Example:
    >>> form = InferenceForm(model)
    >>> encoded, state = form.encode(source_ids)
    >>> logits, alignment, state = form.step(tokens, 0, state, encoded)
    """

    def __init__(self, model):
        self.model = model
        self._family = family_of(model)
        self._layers = named_layers(model)

    def encode(self, source_ids):
        """Runs the encoder once.

        Args:
            source_ids: int32 [B, Tx], 0 pads.

        Returns:
            `(encoded, state)`: a dict of tensors the steps read (memory,
            memory_mask, and keys where there is attention), and the decoder
            state before the first step (a tuple of tensors).
        """
        return self._family.encode(
            self._layers, ops.convert_to_tensor(source_ids)
        )

    def step(self, token_ids, position, state, encoded, rows=None):
        """One decoder step.

        Args:
            token_ids: the previous target tokens y_{t-1}, int32 [B].
            position: t, counted from 0 (a scalar or [B]).
            state: from `encode` or the previous step.
            encoded: from `encode`.
            rows: optional int32 [n]: compute the logits of these batch rows
                only (the recurrence still advances every row). Searches
                pass their live hypotheses, so that the vocabulary
                projection, the largest matmul of a step, skips finished
                ones.

        Returns:
            `(logits, alignment, state)`: float32 logits [B, V] ([n, V] with
            `rows`), attention weights [B, Tx] (zeros without attention) and
            the next state.
        """
        return self._family.step(
            self._layers,
            ops.convert_to_tensor(token_ids),
            position,
            state,
            encoded,
            rows=rows,
        )

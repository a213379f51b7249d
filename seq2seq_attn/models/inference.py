"""The inference form: an encoder and one decoder step, sharing weights."""

import contextlib

import keras
from keras import ops

from seq2seq_attn.models.builder import (
    family_of,
    max_source_tokens,
    named_layers,
)
from seq2seq_attn.models.encoded import Encoded


class InferenceForm:
    """Encoder plus single decoder step of a model built by `build_model`.

    Search (greedy, beam) drives these two functions; they use the trained
    model's own layers, so no weight is copied. Every tensor of the state
    and of `encoded.rows` has a row per hypothesis on its first axis, so a
    search can tile and reorder them (`map_rows`); `encoded.sentences` has
    a row per source sentence (see `Encoded`).

    Args:
        model: a model from `build_model` (or loaded from a `.keras` file).

    Example:
    >>> form = InferenceForm(model)
    >>> encoded, state = form.encode(source_ids)
    >>> logits, alignment, state = form.step(tokens, 0, state, encoded)
    """

    returns_log_probs = False

    def __init__(self, model):
        self.model = model
        self._family = family_of(model)
        self._layers = named_layers(model)
        self._in_model_precision = _InModelPrecision(
            dtype=model.dtype_policy, name="in_model_precision"
        )

    @property
    def max_source_tokens(self):
        """The most source tokens the model reads (None: any number); see
        `builder.max_source_tokens`."""
        return max_source_tokens(self.model)

    def cast_weights(self):
        """`(weight, dtype)` for each weight that the model's layers cast at
        every read (to their compute dtype, under mixed precision); empty
        when they compute in their weights' dtype (float32)."""
        return [
            (weight, layer.compute_dtype)
            for layer in self.model.layers
            if layer.autocast and layer.compute_dtype != layer.variable_dtype
            for weight in layer.weights
            if weight.dtype == layer.variable_dtype
        ]

    def weights_cast_once(self):
        """A context in which the layers read their weights cast once, where
        the context is entered; see `weights_cast_once`."""
        return weights_cast_once(self.cast_weights())

    def encode(self, source_ids):
        """Runs the encoder once.

        Args:
            source_ids: int32 [B, Tx], 0 pads.

        Returns:
            `(encoded, state)`: an `Encoded` of the tensors the steps read
            (the family's: e.g. keys, memory_mask, and the annotations'
            products per sentence), and the decoder state before the first
            step (a tuple of tensors).
        """
        return self._in_model_precision(
            ops.convert_to_tensor(source_ids),
            function=lambda ids: self._family.encode(self._layers, ids),
        )

    def step(self, token_ids, position, state, encoded):
        """One decoder step.

        Args:
            token_ids: the previous target tokens y_{t-1}, int32 [B].
            position: t, counted from 0 (a scalar or [B]).
            state: from `encode` or the previous step.
            encoded: from `encode`.

        Returns:
            `(logits, alignment, state)`: float32 logits [B, V], attention
            weights [B, Tx] (zeros without attention) and the next state.
        """
        return self._in_model_precision(
            ops.convert_to_tensor(token_ids),
            function=lambda tokens: self._family.step(
                self._layers, tokens, position, state, encoded
            ),
        )


def as_form(model):
    """`model` as a search drives it: a Keras model from `build_model` in an
    `InferenceForm`; a form (`InferenceForm`, `EnsembleForm`) as it is."""
    if isinstance(model, keras.Model):
        return InferenceForm(model)
    return model


def map_rows(function, encoded):
    """`encoded` (an `Encoded`, or a list of them for an ensemble) with
    `function` applied to each tensor of its `rows`; its `sentences` are
    left as they are."""
    if isinstance(encoded, Encoded):
        return encoded._replace(
            rows=keras.tree.map_structure(function, encoded.rows)
        )
    return [map_rows(function, member) for member in encoded]


class _InModelPrecision(keras.layers.Layer):
    """Calls a function as this layer's call, under the model's dtype policy.

    Keras casts weights to a layer's compute dtype only within a layer call;
    `encode` and `step` also call layer methods directly (`decoder.step`,
    `decoder.project_keys`, ...). Within this call those compute in the
    compute dtype (bfloat16 under mixed precision), as they do within the
    model's layers during training, instead of mixing float32 weights with
    bfloat16 inputs.
    """

    def call(self, inputs, function):
        return function(inputs)


def weights_cast_once(weights):
    """A context in which each of `weights` (`(weight, dtype)` pairs) reads
    as one tensor cast to `dtype` where the context is entered.

    Under mixed precision a Keras layer casts its float32 weights at every
    read; a search's loop runs the decoder step and the vocabulary
    projection (the largest weight: hidden x vocabulary) at every step. A
    search enters this context before its loop, so each cast runs once per
    batch instead of once per step; the values, and so the translations,
    are the same. Nothing changes for an empty list (float32).
    """
    if not weights:
        return contextlib.nullcontext()
    scope = keras.StatelessScope()
    # Filled here: StatelessScope(state_mapping) would cast the values back
    # to the weights' own dtype. The mapped tensors are only read.
    for weight, dtype in weights:
        scope.state_mapping[id(weight)] = ops.cast(weight.value, dtype)
    return scope

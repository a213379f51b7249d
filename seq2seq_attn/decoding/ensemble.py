"""Ensemble decoding (Luong et al. 2015, Sec. 4.2): at every step, the
average of several models' log-probabilities."""

import tensorflow as tf

from seq2seq_attn.models.inference import as_form, weights_cast_once


class EnsembleForm:
    """Several models behind the `InferenceForm` interface.

    `step` returns the mean of the models' log-probabilities (so searches use
    it as is; `returns_log_probs` is True) and the mean of their attention
    weights. The models must share the target vocabulary.

    Args:
        models: trained models (or inference forms), at least one.
    """

    returns_log_probs = True

    def __init__(self, models):
        if not models:
            raise ValueError("an ensemble needs at least one model")
        self.forms = [as_form(m) for m in models]

    @property
    def max_source_tokens(self):
        """The fewest source tokens any member reads (None: any number)."""
        limits = [f.max_source_tokens for f in self.forms]
        return min((n for n in limits if n), default=None)

    def weights_cast_once(self):
        """Every model reads its weights cast once
        (`InferenceForm.weights_cast_once`)."""
        return weights_cast_once(
            [pair for form in self.forms for pair in form.cast_weights()]
        )

    def encode(self, source_ids):
        encoded, states = [], []
        for form in self.forms:
            form_encoded, form_state = form.encode(source_ids)
            encoded.append(form_encoded)
            states.append(form_state)
        return encoded, states

    def step(self, token_ids, position, state, encoded):
        log_probs, alignments, states = [], [], []
        for form, form_state, form_encoded in zip(
            self.forms, state, encoded, strict=True
        ):
            logits, alignment, new_state = form.step(
                token_ids, position, form_state, form_encoded
            )
            log_probs.append(tf.nn.log_softmax(tf.cast(logits, tf.float32)))
            alignments.append(tf.cast(alignment, tf.float32))
            states.append(new_state)
        vocab_sizes = {int(p.shape[-1]) for p in log_probs if p.shape[-1]}
        if len(vocab_sizes) > 1:
            raise ValueError(
                f"ensemble models differ in vocabulary: {vocab_sizes}"
            )
        return (
            tf.add_n(log_probs) / len(log_probs),
            tf.add_n(alignments) / len(alignments),
            states,
        )

"""How hypotheses of different lengths are compared.

- `"none"`: the sum of log-probabilities.
- `"average"`: divided by L^alpha (the beam search tutorial in the papers
  folder, alpha about 0.75; alpha = 1 is the per-token average).
- `"gnmt"`: divided by ((5 + L) / 6)^alpha (Wu et al. 2016, Eq. 14).
L counts the output tokens, </s> included. GNMT's coverage penalty,
beta * sum_j log(min(sum_i a_ij, 1)) over the real source positions j, is
added when `beta` > 0.

TensorFlow is imported where a score is computed, so that the config
modules import none.
"""

import dataclasses

LENGTH_PENALTIES = ("none", "average", "gnmt")


@dataclasses.dataclass(frozen=True)
class Scoring:
    """Length normalisation and coverage penalty.

    Attributes:
        length_penalty: how a hypothesis's length is scored: "none" (the
            sum of log-probabilities), "average" (divided by L^alpha) or
            "gnmt" (by ((5 + L) / 6)^alpha).
        alpha: the exponent of the length penalty.
        beta: the weight of GNMT's coverage penalty (0 for none).
    """

    length_penalty: str = "average"
    alpha: float = 0.75
    beta: float = 0.0

    def __post_init__(self):
        if self.length_penalty not in LENGTH_PENALTIES:
            raise ValueError(
                f"length_penalty must be one of {LENGTH_PENALTIES}, "
                f"got {self.length_penalty!r}"
            )
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 <= value < float("inf"):  # NaN fails too
                raise ValueError(
                    f"{name} must be a finite number >= 0, got {value}"
                )

    def length_divisor(self, lengths):
        """The length penalty lp(L) that log-probabilities are divided by."""
        import tensorflow as tf

        lengths = tf.cast(lengths, tf.float32)
        if self.length_penalty == "average":
            return tf.pow(tf.maximum(lengths, 1.0), self.alpha)
        if self.length_penalty == "gnmt":
            return tf.pow((5.0 + lengths) / 6.0, self.alpha)
        return tf.ones_like(lengths)

    def coverage_penalty(self, coverage, source_mask):
        """beta * sum_j log(min(coverage_j, 1)) over real source positions."""
        import tensorflow as tf

        if self.beta == 0:
            return tf.zeros(tf.shape(coverage)[:-1])
        clipped = tf.clip_by_value(coverage, 1e-10, 1.0)
        mask = tf.cast(source_mask, clipped.dtype)
        return self.beta * tf.reduce_sum(tf.math.log(clipped) * mask, axis=-1)

    def score(self, log_probs, lengths, coverage=None, source_mask=None):
        """The score hypotheses are ranked by."""
        score = log_probs / self.length_divisor(lengths)
        if self.beta > 0 and coverage is not None:
            score += self.coverage_penalty(coverage, source_mask)
        return score

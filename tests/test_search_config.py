"""The one search configuration: validated once, defaults per command."""

import pytest

from seq2seq_attn.config.scoring import Scoring
from seq2seq_attn.config.search import SearchConfig


def test_defaults_and_the_exports_nbest():
    assert SearchConfig() == SearchConfig.for_command("translate")
    assert SearchConfig().max_input_tokens == 100
    assert SearchConfig.for_command("export").nbest == 5
    # A default nbest follows a smaller beam; an explicit one must fit.
    assert SearchConfig.for_command("export", beam_size=3).nbest == 3
    with pytest.raises(ValueError, match="nbest must be in"):
        SearchConfig.for_command("export", beam_size=3, nbest=4)


@pytest.mark.parametrize(
    "options,message",
    [
        ({"beam_size": 0}, "beam_size must be"),
        ({"nbest": 6}, "nbest must be in"),
        ({"max_length_b": 0}, "max_length_b must be a number in"),
        # Each once made every translation one word, without an error.
        ({"max_length_b": 1e12}, r"max_length_b .* got 1000000000000\.0"),
        ({"max_length_a": float("inf")}, "max_length_a .* got inf"),
        ({"max_length_a": float("nan")}, "max_length_a .* got nan"),
        ({"scoring": {"alpha": float("nan")}}, "alpha must be a finite"),
        ({"scoring": {"beta": float("inf")}}, "beta must be a finite"),
        ({"max_input_tokens": 0}, "max_input_tokens must be"),
        ({"batch_size": 0}, "batch_size must be"),
    ],
)
def test_bad_values_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        if "scoring" in options:
            Scoring(**options["scoring"])
        else:
            SearchConfig(**options)


def test_the_largest_limits_are_counted_in_int32():
    import tensorflow as tf

    from seq2seq_attn.decoding.search_step import max_output_lengths

    source = tf.ones([2, 7], tf.int32)
    limits = max_output_lengths(source, 1000, 1_000_000).numpy()
    assert limits.tolist() == [1_007_000, 1_007_000]
    # An input of unlimited length cannot overflow the count either.
    huge = max_output_lengths(tf.ones([1, 3_000_000], tf.int32), 1000, 1)
    assert huge.numpy()[0] == 2**30


def test_it_is_frozen_and_compares_by_value():
    config = SearchConfig(scoring=Scoring("gnmt", 1.0, 0.2))
    assert config == SearchConfig(scoring=Scoring("gnmt", 1.0, 0.2))
    with pytest.raises(AttributeError):
        config.beam_size = 3

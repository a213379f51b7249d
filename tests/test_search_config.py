"""The one search configuration: validated once, defaults per command."""

import pytest

from seq2seq_attn.decoding.scoring import Scoring
from seq2seq_attn.decoding.search_config import SearchConfig


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
        ({"max_length_b": 0}, "output limit"),
        ({"max_input_tokens": 0}, "max_input_tokens must be"),
        ({"batch_size": 0}, "batch_size must be"),
    ],
)
def test_bad_values_are_named(options, message):
    with pytest.raises(ValueError, match=message):
        SearchConfig(**options)


def test_it_is_frozen_and_compares_by_value():
    config = SearchConfig(scoring=Scoring("gnmt", 1.0, 0.2))
    assert config == SearchConfig(scoring=Scoring("gnmt", 1.0, 0.2))
    with pytest.raises(AttributeError):
        config.beam_size = 3

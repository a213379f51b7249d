"""The workarounds of `seq2seq_attn.compat` (the tokenizer's named resource
is tested with the tokenizers)."""

import pytest

from seq2seq_attn.compat import _kept_lines

NOTE = b"WARNING: All log messages before absl::InitializeLog() is called "
LINES = {
    "I": b"I0000 00:00:1796610467.684773   12799 cudart_stub.cc:31] no cuda\n",
    "W": b"W0000 00:00:1796610467.684773   12799 port.cc:7] careful\n",
    "E": b"E1207 02:36:01.123456  5 cuda_platform.cc:52] failed cuInit\n",
    "F": b"F0000 00:00:1796610467.684773   12799 x.cc:1] fatal\n",
}
OTHER = b"Traceback (most recent call last): ... port.cc:1] not a log line\n"


@pytest.mark.parametrize(
    "level, shown", [(0, "IWEF"), (1, "WEF"), (2, "EF"), (3, "F")]
)
def test_start_up_lines_below_the_level_are_held_back(level, shown):
    # tensorflow/tensorflow#100442: what TF_CPP_MIN_LOG_LEVEL should do.
    text = NOTE + b"are written to STDERR\n" + b"".join(LINES.values()) + OTHER
    expected = b"".join(LINES[s] for s in shown) + OTHER
    assert _kept_lines(text, level) == expected

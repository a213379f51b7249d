"""Shared fixtures: quiet TensorFlow, fixed seeds, the shared data folder."""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHARED_DATA = (
    pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def padded_batch(rng, lengths, vocab_size, extra_padding=0):
    """Random ids in [4, vocab_size), each row cut to its length, 0 after."""
    width = max(lengths) + extra_padding
    ids = rng.integers(4, vocab_size, size=(len(lengths), width)).astype(
        "int32"
    )
    for row, length in enumerate(lengths):
        ids[row, length:] = 0
    return ids

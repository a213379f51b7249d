"""What every command line (`python -m seq2seq_attn.<verb>`) shares."""

import os

from absl import app


def run(main, argv=None):
    """`absl.app.run(main, argv)`, with the log lines of TensorFlow's C++
    start-up hidden (CUDA probing, "failed call to cuInit" on a machine
    without a GPU, CPU features, oneDNN): TensorFlow starts inside `main`,
    after this.
    Its errors still reach Python as exceptions; `TF_CPP_MIN_LOG_LEVEL=0`
    in the environment shows every line."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    app.run(main, argv)

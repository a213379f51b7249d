"""An export written at one end of the supported TensorFlow range answers
the same at the other: what a TF Serving image of another TensorFlow than
the exporting one must do. `.ci/run`'s second step runs this under the
oldest supported TensorFlow with `SEQ2SEQ_ATTN_OTHER_PYTHON` naming the
newest one's interpreter; without it there is no other version to ask."""

import os
import subprocess
import sys

import numpy as np
import pytest
from serving_process import answers_in_a_tf1_session

OTHER_PYTHON = os.environ.get("SEQ2SEQ_ATTN_OTHER_PYTHON")

pytestmark = [
    pytest.mark.both_ends,
    pytest.mark.skipif(
        not OTHER_PYTHON,
        reason="SEQ2SEQ_ATTN_OTHER_PYTHON names no interpreter of another "
        "TensorFlow (.ci/run's second step sets it)",
    ),
]
# Raw sentences and an empty one.
SENTENCES = [
    "A man is riding a bicycle.",
    "",
    "Is the café's owner, Zoë, smiling?",
    "Two dogs play in the snow!",
]


@pytest.mark.parametrize("writer", ["this", "other"])
def test_an_export_answers_the_same_under_the_other_tensorflow(
    raw_model_dir, tmp_path, writer
):
    pythons = {"this": sys.executable, "other": OTHER_PYTHON}
    reader = "other" if writer == "this" else "this"
    export_dir = tmp_path / "export"
    result = subprocess.run(
        [
            pythons[writer],
            "-m",
            "seq2seq_attn.export",
            f"--model_dir={raw_model_dir}",
            f"--export_dir={export_dir}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    written, read = (
        answers_in_a_tf1_session(export_dir / "1", SENTENCES, python=python)
        for python in (pythons[writer], pythons[reader])
    )
    assert written["tensorflow"] != read["tensorflow"]
    print(
        f"exported under tensorflow {written['tensorflow']} "
        f"(tensorflow-text {written['tensorflow_text']}), answered under "
        f"{read['tensorflow']} ({read['tensorflow_text']})"
    )
    (expected,), (got,) = written["answers"], read["answers"]
    assert got.keys() == expected.keys()
    for signature, outputs in expected.items():
        for name, values in outputs.items():
            if isinstance(values[0], str):
                assert got[signature][name] == values, (signature, name)
            else:
                np.testing.assert_allclose(
                    got[signature][name], values, atol=1e-4
                )
    translations = expected["serving_default"]["translation"]
    assert translations[1] == "" and all(translations[:1] + translations[2:])

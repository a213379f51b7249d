"""Exports answered as TF Serving loads them: in a fresh interpreter that
imports only tensorflow and tensorflow_text (TF Serving links the TF Text
ops in), and in a TF1 session as its model server runs them."""

import json
import subprocess
import sys
import textwrap

PRELUDE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF Text ops)
"""


def tensorflow_only(code, *args, python=None, timeout=600):
    """Runs `code` in a fresh `python` (this one by default) that imports
    only tensorflow (as `tf`), tensorflow_text, json and sys; `args` are its
    `sys.argv[1:]`. Returns the JSON of its last line of output."""
    result = subprocess.run(
        [
            python or sys.executable,
            "-c",
            PRELUDE + textwrap.dedent(code),
            *map(str, args),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


SESSION = """
tf.compat.v1.disable_eager_execution()
session = tf.compat.v1.Session(graph=tf.Graph())
with session.graph.as_default():
    meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], sys.argv[1])
sentences = json.loads(sys.argv[2])
rounds = int(sys.argv[3])


def run(name, **inputs):
    signature = meta.signature_def[name]
    feed = {signature.inputs[key].name: value for key, value in inputs.items()}
    names = sorted(signature.outputs)
    fetched = session.run([signature.outputs[key].name for key in names], feed)
    return {
        key: value.tolist()
        if value.dtype != object
        else [v.decode("utf-8") for v in value.ravel()]
        for key, value in zip(names, fetched)
    }


answers = []
for _ in range(rounds):
    answers.append({
        "serving_default": run("serving_default", text=sentences),
        "translate_nbest": run("translate_nbest", text=sentences),
        "align": run("align", text=sentences, target=sentences),
        "one": run("serving_default", text=sentences[:1]),
    })
print(json.dumps({
    "answers": answers,
    "ours": sorted(m for m in sys.modules if m.startswith("seq2seq")),
    "tensorflow": tf.__version__,
    "tensorflow_text": tensorflow_text.__version__,
}))
"""


def answers_in_a_tf1_session(export_path, sentences, rounds=1, python=None):
    """`{"answers": [one per round: {signature: {output: values}}], "ours":
    the seq2seq_attn modules imported (none), "tensorflow",
    "tensorflow_text": the versions}` from a TF1 session over the `serve`
    meta graph in a fresh `python` (this one by default), tensors found
    through each signature_def, the same session calling every signature on
    `sentences` `rounds` times."""
    args = (export_path, json.dumps(sentences), rounds)
    return tensorflow_only(SESSION, *args, python=python)

"""The SavedModel export, loaded as TF Serving would load it: in a fresh
process that imports only tensorflow and tensorflow_text."""

import gzip
import os
import pathlib
import subprocess
import sys
import time

import commands
import keras
import pytest
from conftest import SHARED_DATA
from serving_process import answers_in_a_tf1_session, tensorflow_only

from seq2seq_attn.data import build_tokenizer, load_corpus
from seq2seq_attn.decoding.translator import Translator
from seq2seq_attn.export import export, next_version
from seq2seq_attn.export.ops import disallowed_ops, saved_model_ops
from seq2seq_attn.models import ModelConfig, build_model

BIN = pathlib.Path(sys.executable).parent


@pytest.fixture(scope="module")
def exported(raw_model_dir, tmp_path_factory):
    """The export of the SentencePiece model: raw text in, raw text out."""
    export_dir = tmp_path_factory.mktemp("exports")
    result = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.export",
            f"--model_dir={raw_model_dir}",
            f"--export_dir={export_dir}",
            "--beam_size=3",
            "--nbest=3",
            "--max_input_tokens=60",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert (export_dir / "1" / "saved_model.pb").is_file()
    return export_dir / "1"


# Raw text as people type it: casing, punctuation attached to words,
# accents (composed and combining), other scripts, odd spacing, a ligature
# and full-width letters (which NFKC maps to ASCII).
RAW_SENTENCES = [
    "A man is riding a bicycle.",
    "Two dogs play in the snow!",
    "Is the café's owner, Zoë, smiling?",
    "A woman (in a red T-shirt) sells crêpes\u0301 at 5:30 p.m.",
    "  Lots   of   spaces\tand a tab  ",
    "An ﬁne ＦＵＬＬ-width sign: 日本語, Привет, مرحبا.",
    '"Quoted" words -- and dashes; ellipses...',
]


@pytest.mark.both_ends
def test_fresh_process_matches_the_translate_cli(
    exported, raw_model_dir, tmp_path
):
    val = SHARED_DATA / "multi30k" / "val.en.gz"
    with gzip.open(val, "rt") as stream:
        sentences = [next(stream).rstrip("\n") for _ in range(200)]
    sentences += RAW_SENTENCES
    source = tmp_path / "val200.en"
    source.write_text("\n".join(sentences) + "\n")
    cli = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.translate",
            f"--model_dir={raw_model_dir}",
            f"--input={source}",
            "--beam_size=3",
            "--max_input_tokens=60",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert cli.returncode == 0, cli.stderr[-3000:]
    expected = cli.stdout.split("\n")[:-1]
    got = tensorflow_only(
        """
        loaded = tf.saved_model.load(sys.argv[1])
        lines = open(sys.argv[2], encoding="utf-8").read().split("\\n")[:-1]
        out = loaded.signatures["serving_default"](text=tf.constant(lines))
        texts = [t.decode("utf-8") for t in out["translation"].numpy()]
        ours = sorted(m for m in sys.modules if m.startswith("seq2seq"))
        print(json.dumps({"modules": ours, "translations": texts}))
        """,
        exported,
        source,
    )
    assert got["modules"] == []
    assert len(got["translations"]) == len(sentences)
    assert got["translations"] == expected
    # Detokenised (pieces joined, no <unk> with byte fallback), and cased.
    joined = " ".join(expected)
    assert "\u2581" not in joined and "<unk>" not in joined
    assert any(c.isupper() for c in joined)


BAD_INPUT = """
serve = loaded.signatures["serving_default"]
rows = [b"", b"   ", b" ".join([b"dog"] * 5000), b"bad \\xff\\xfe bytes .",
        "ein \u2603 \u65e5\u672c zebraxyl".encode(), b"a man ."]
out = serve(text=tf.constant(rows))
empty = serve(text=tf.constant([], tf.string))
big = serve(text=tf.constant([b"a dog runs ."] * 512))
nbest = loaded.signatures["translate_nbest"](
    text=tf.constant(rows[:2] + rows[-1:]))
answers["bad_input"] = {
    "translations": [t.decode("utf-8") for t in out["translation"].numpy()],
    "scores": out["score"].numpy().tolist(),
    "empty": [list(v.shape) for v in empty.values()],
    "big": big["translation"].shape.as_list(),
    "big_same": len(set(big["translation"].numpy().tolist())),
    "nbest": nbest["translations"].shape.as_list(),
    "nbest_scores": nbest["scores"].numpy().tolist(),
}
"""


@pytest.fixture(scope="module")
def answers(exported):
    """What the export answered to the requests below (`WRONG_FORM` first,
    then `BAD_INPUT`, `LONG_LINES`, `ALIGN`), from one fresh process that
    loaded it once, as a server does: {name: answer}."""
    blocks = (WRONG_FORM, BAD_INPUT, LONG_LINES, ALIGN)
    answers = tensorflow_only(
        "loaded = tf.saved_model.load(sys.argv[1])\nanswers = {}\n"
        + "".join(blocks)
        + "ours = [m for m in sys.modules if m.startswith('seq2seq')]\n"
        + "print(json.dumps({'ours': ours, **answers}))\n",
        exported,
    )
    assert answers.pop("ours") == []
    return answers


def test_bad_input_gets_a_defined_output_for_every_row(answers):
    got = answers["bad_input"]
    translations, scores = got["translations"], got["scores"]
    assert translations[0] == translations[1] == "" and scores[:2] == [0.0, 0.0]
    assert all(t for t in translations[2:]), translations
    assert all(s == s and s <= 0 for s in scores)  # finite, no NaN
    # The 5,000-word input is cut to --max_input_tokens=60, so its output is
    # at most ceil(1.5 * 60 + 5) tokens long.
    assert len(translations[2].split()) <= 95
    assert got["empty"] == [[0], [0]]
    assert got["big"] == [512] and got["big_same"] == 1
    assert got["nbest"] == [3, 3]
    assert got["nbest_scores"][0] == [0.0, 0.0, 0.0]


WRONG_FORM = """
requests = {
    "serving_default": [
        {"text": tf.constant("a man")},
        {"text": tf.constant([["a man", "two dogs"], ["a dog", "a cat"]])},
    ],
    "translate_nbest": [{"text": tf.constant("a man")}],
    "align": [
        {"text": tf.constant("a man"), "target": tf.constant(["ein mann"])},
        {"text": tf.constant(["a man"]), "target": tf.constant("ein mann")},
        {"text": tf.constant(["a man", "a dog"]),
         "target": tf.constant(["ein mann"])},
    ],
}
errors = []
for name, calls in requests.items():
    for inputs in calls:
        try:
            loaded.signatures[name](**inputs)
            errors.append([name, "answered"])
        except tf.errors.InvalidArgumentError as error:
            errors.append([name, error.message])
after = loaded.signatures["serving_default"](text=tf.constant(["a man ."]))
answers["wrong_form"] = {
    "errors": errors, "after": after["translation"].numpy()[0].decode()
}
"""


LONG_LINES = """
serve = loaded.signatures["serving_default"]
line = "A man rides a horse. " * 500_000  # 10.5 MB
# 3,000 bytes (under the 64 x 60 bytes read) hold far more than 60 tokens.
rows = [line, line[:3000], line[:3000] + "é" * 4_000_000]
got = serve(text=tf.constant([r.encode() for r in rows]))["translation"]
answers["long_lines"] = [t.decode() for t in got.numpy()]
"""


def test_a_10_mb_line_is_cut_to_its_first_tokens(answers):
    # Only the bytes that can hold --max_input_tokens=60 tokens are
    # tokenized: the same 60 tokens as a shorter line, so the same output.
    long, short, multibyte = answers["long_lines"]
    assert long and long == short == multibyte


def _export_command(model_dir, export_dir):
    return [
        sys.executable,
        "-m",
        "seq2seq_attn.export",
        f"--model_dir={model_dir}",
        f"--export_dir={export_dir}",
        "--beam_size=2",
    ]


def _killed_when(command, appeared, timeout=300):
    """Starts `command` and kill -9s it as soon as `appeared()` is true."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + timeout
    while not appeared() and time.time() < deadline:
        assert process.poll() is None, "the export ended before the kill"
        time.sleep(0.002)
    process.kill()
    process.wait()


@pytest.mark.slow
def test_a_killed_export_leaves_no_incomplete_version(raw_model_dir, tmp_path):
    export_dir = tmp_path / "exports"
    command = _export_command(raw_model_dir, export_dir)

    def partial():
        return list(export_dir.glob(".1.partial-*"))

    # Killed while the version is written: no version folder at all.
    _killed_when(command, partial)
    (abandoned,) = partial()
    assert not (export_dir / "1").exists()

    # Killed the moment the version folder appears: it is complete.
    _killed_when(command, (export_dir / "1").exists)
    version = export_dir / "1"
    assert (version / "saved_model.pb").is_file()
    assert (version / "fingerprint.pb").is_file()
    assert (version / "variables" / "variables.index").is_file()
    assert list((version / "variables").glob("variables.data-*"))
    # The second export removed what the first one left.
    assert not abandoned.exists()


@pytest.mark.both_ends
def test_the_version_folder_is_readable_by_a_server_of_another_user(
    exported,
):
    # Its mode follows the umask (the export ran with this process's), as
    # `mkdir` does: 0755 under the usual 022, where a partial folder from
    # `tempfile.mkdtemp` kept 0700 through the rename.
    umask = os.umask(0)
    os.umask(umask)
    assert exported.stat().st_mode & 0o777 == 0o777 & ~umask
    assert not list(exported.parent.glob(".*"))


def test_requests_of_the_wrong_form_are_refused_and_the_server_lives(
    answers,
):
    # A scalar once crashed the process (SIGSEGV) inside a TF Text op, and a
    # 2-D batch answered the wrong rows. The process must exit cleanly
    # (tensorflow_only checks rc 0) after refusing each with a clear error,
    # and answer the requests after them (`answers` makes these first).
    got = answers["wrong_form"]
    names = [name for name, _ in got["errors"]]
    messages = [message for _, message in got["errors"]]
    assert (
        names == ["serving_default"] * 2 + ["translate_nbest"] + ["align"] * 3
    )
    for message in messages[:5]:
        assert "must_be_a_vector" in message, message
        assert "is not compatible with expected shape [?]" in message, message
    assert "text_must_be_a_vector" in messages[0]
    assert "target_must_be_a_vector" in messages[4]
    assert "text and target must have the same number of rows" in messages[5]
    assert got["after"], "the model stopped answering after the errors"


ALIGN = """
out = loaded.signatures["align"](
    text=tf.constant(["A man rides a horse.", ""]),
    target=tf.constant(["Ein Mann reitet.", "Hallo"]))
result = {"alignment": out["alignment"].numpy().tolist()}
for key in ("source_tokens", "target_tokens"):
    result[key] = [[t.decode() for t in row] for row in out[key].numpy()]
answers["align"] = result
"""


@pytest.mark.both_ends
def test_a_tf1_session_runs_every_signature_again_and_again(exported):
    # How TF Serving's model server runs an export (tests/tf1_session.py).
    sentences = ["A man is riding a bicycle.", "", "Two dogs play in the snow!"]
    got = answers_in_a_tf1_session(exported, sentences, rounds=3)
    assert got["ours"] == []
    first, *again = got["answers"]
    assert all(answer == first for answer in again)
    best = first["serving_default"]
    assert len(best["translation"]) == 3 and best["translation"][1] == ""
    assert best["score"][1] == 0.0
    assert best["translation"][0] and best["translation"][2]
    assert first["one"]["translation"] == best["translation"][:1]
    nbest = first["translate_nbest"]
    assert len(nbest["translations"]) == 3 * 3  # three rows of 3 hypotheses
    assert nbest["translations"][0] == best["translation"][0]
    assert nbest["translations"][3:6] == ["", "", ""]
    assert len(first["align"]["alignment"]) == 3


def test_align_signature(answers):
    got = answers["align"]

    def text(pieces):
        return "".join(pieces).replace("\u2581", " ").strip()

    assert text(got["source_tokens"][0]) == "A man rides a horse."
    target = [t for t in got["target_tokens"][0] if t]
    assert target[-1] == "</s>" and text(target[:-1]) == "Ein Mann reitet."
    rows = got["alignment"][0][: len(target)]
    assert all(abs(sum(row) - 1.0) < 1e-4 for row in rows)
    assert not any(any(row) for row in got["alignment"][1])


def test_saved_model_cli_show_and_run(exported):
    show = subprocess.run(
        [str(BIN / "saved_model_cli"), "show", "--all", "--dir", str(exported)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert show.returncode == 0, show.stderr[-2000:]
    for name in ("serving_default", "translate_nbest", "align", "translation"):
        assert name in show.stdout
    # `run` executes the graph, so the TF Text ops must be registered first:
    # the same CLI, started after `import tensorflow_text` (TF Serving links
    # those ops in instead).
    cli_with_tf_text = (
        "import sys, tensorflow_text;"
        "from tensorflow.python.tools.saved_model_cli import main;"
        "sys.argv[0] = 'saved_model_cli'; sys.exit(main())"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            cli_with_tf_text,
            "run",
            "--dir",
            str(exported),
            "--tag_set",
            "serve",
            "--signature_def",
            "serving_default",
            "--input_exprs",
            "text=['a dog runs .', '']",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "translation" in run.stdout and "score" in run.stdout


@pytest.mark.both_ends
def test_every_op_is_allowed(exported):
    assert disallowed_ops(exported) == []
    assert "SentencepieceTokenizeOp" in saved_model_ops(exported)


@pytest.mark.slow
@pytest.mark.parametrize(
    "kind, lowercase",
    [
        ("wordpiece", False),
        ("word", True),
        ("wordpiece", True),
        ("sentencepiece", True),
    ],
)
def test_every_tokenizer_exports_with_allowed_ops_only(
    kind, lowercase, tmp_path
):
    # Cased word tokenizers use a subset of the lowercased ones' ops;
    # cased SentencePiece is `exported` above.
    corpus = load_corpus("multi30k", "val", "en", "de", data_dir=SHARED_DATA)
    source, target = (
        build_tokenizer(kind, texts, tmp_path / side, 600, lowercase)
        for side, texts in (("s", corpus.sources), ("t", corpus.targets))
    )
    model = build_model(
        ModelConfig(
            architecture="luong",
            num_layers=2,
            attention_mode="local-p",
            source_vocab_size=source.vocab_size,
            target_vocab_size=target.vocab_size,
            embedding_dim=8,
            hidden_units=8,
        )
    )
    path = export(
        Translator(model, source, target, beam_size=2, nbest=2),
        tmp_path / "export",
    )
    assert path.name == "1" and next_version(tmp_path / "export") == 2
    assert disallowed_ops(path) == []
    keras.backend.clear_session()

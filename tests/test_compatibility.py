"""What users have on disk keeps working: the model directories and the
export that seq2seq_attn 0.1.0 (commit 05839fb) wrote, in
`../shared/fixtures/compat-05839fb` (its README says how each was made),
still load and give what they gave then."""

import json
import os
import shutil

import pytest
from conftest import SHARED_DATA
from serving_process import tensorflow_only

from seq2seq_attn.config.search import SearchConfig
from seq2seq_attn.export import export
from seq2seq_attn.model_dir import load_translator

FIXTURES = SHARED_DATA.parent / "fixtures" / "compat-05839fb"
# Which input each model directory reads (the Luong model was trained on
# Multi30k's tok/ text).
INPUTS = {"rnnsearch": "input.raw.en", "luong": "input.tok.en"}
SEARCHES = {"beam5": 5, "greedy": 1}

pytestmark = pytest.mark.both_ends


def _lines(path):
    return path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="module")
def users_files(tmp_path_factory):
    """A writable copy of the fixtures, as a user's disk holds them (the
    shared folder is read-only)."""
    copy = tmp_path_factory.mktemp("compat") / "compat-05839fb"
    shutil.copytree(FIXTURES, copy, copy_function=shutil.copyfile)
    for folder, _, _ in os.walk(copy):
        os.chmod(folder, 0o755)
    return copy


@pytest.mark.parametrize("search", sorted(SEARCHES))
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_model_directory_translates_as_it_did(users_files, name, search):
    translator = load_translator(
        users_files / name,
        search=SearchConfig.for_command(
            "translate", beam_size=SEARCHES[search]
        ),
    )
    sentences = _lines(users_files / INPUTS[name])
    expected = _lines(users_files / "expected" / f"{name}.{search}.de")
    assert translator.translate(sentences) == expected


ANSWERS = """
answers = {}
for path, lines in json.loads(sys.argv[1]).items():
    loaded = tf.saved_model.load(path)
    best = loaded.signatures["serving_default"](text=tf.constant(lines))
    nbest = loaded.signatures["translate_nbest"](text=tf.constant(lines[:5]))
    answers[path] = {
        "serving_default": {
            "translation": [t.decode() for t in best["translation"].numpy()],
            "score": best["score"].numpy().tolist(),
        },
        "translate_nbest": {
            "translations": [
                [t.decode() for t in row]
                for row in nbest["translations"].numpy()
            ],
        },
    }
print(json.dumps(answers))
"""


def _answers_of_exports(paths_and_lines):
    """The answers of each export to its lines, from one fresh process that
    imports only tensorflow and tensorflow_text, as TF Serving loads it."""
    answers = tensorflow_only(
        ANSWERS, json.dumps({str(p): lines for p, lines in paths_and_lines})
    )
    return [answers[str(path)] for path, _ in paths_and_lines]


def _assert_same_answers(got, expected):
    got_best, expected_best = (
        got["serving_default"],
        expected["serving_default"],
    )
    assert got_best["translation"] == expected_best["translation"]
    assert got_best["score"] == pytest.approx(expected_best["score"], abs=1e-4)
    assert got["translate_nbest"] == expected["translate_nbest"]


def test_the_export_and_a_re_export_answer_as_they_did(users_files, tmp_path):
    """The 0.1.0 export, and exports written today from both model
    directories with the export command's defaults (beam 5, nbest 5)."""
    exports = {"rnnsearch_export": users_files / "rnnsearch_export" / "1"}
    for name in INPUTS:
        translator = load_translator(
            users_files / name, search=SearchConfig.for_command("export")
        )
        exports[name] = export(translator, tmp_path / name)
    inputs = {
        "rnnsearch_export": _lines(users_files / "input.raw.en"),
        **{name: _lines(users_files / INPUTS[name]) for name in INPUTS},
    }
    old, rnnsearch, luong = _answers_of_exports(
        [(exports[key], inputs[key]) for key in ("rnnsearch_export", *INPUTS)]
    )
    expected = json.loads(
        (users_files / "expected" / "rnnsearch_export.json").read_text()
    )
    _assert_same_answers(old, expected)
    _assert_same_answers(rnnsearch, expected)
    assert luong["serving_default"]["translation"] == _lines(
        users_files / "expected" / "luong.beam5.de"
    )

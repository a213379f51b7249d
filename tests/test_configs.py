"""Every flagfile in configs/ parses, names its source and builds its model."""

import pathlib

import keras
import pytest

from seq2seq_attn.cli.train import run_config_from_flagfile
from seq2seq_attn.models import build_model

CONFIGS = pathlib.Path(__file__).resolve().parents[1] / "configs"
FLAGFILES = sorted(CONFIGS.rglob("*.flags"))


def test_there_are_flagfiles_for_both_papers():
    names = {path.relative_to(CONFIGS).as_posix() for path in FLAGFILES}
    for arch in ("rnnencdec", "rnnsearch"):
        for length in (30, 50):
            assert f"bahdanau/{arch}{length}.flags" in names
    for name in (
        "base",
        "global_location",
        "global_dot",
        "global_general",
        "global_concat",
        "local_m_general",
        "local_p_general",
    ):
        assert f"luong/{name}.flags" in names
        if name != "base":
            assert f"luong/{name}_feed.flags" in names
    assert "quickstart.flags" in names


@pytest.mark.slow
@pytest.mark.parametrize(
    "path", FLAGFILES, ids=lambda p: p.relative_to(CONFIGS).as_posix()
)
def test_flagfile_parses_names_its_source_and_builds(path):
    text = path.read_text()
    assert "Sec." in text or "App." in text, f"{path} names no paper section"
    run = run_config_from_flagfile(path)
    count = build_model(run.model).count_params()
    print(f"{path.relative_to(CONFIGS)}: {count:,} parameters")
    assert count > 0
    keras.backend.clear_session()


PAPER_FLAGFILES = [
    path for path in FLAGFILES if path.parent.name in ("bahdanau", "luong")
]


@pytest.mark.parametrize(
    "path", PAPER_FLAGFILES, ids=lambda p: p.relative_to(CONFIGS).as_posix()
)
def test_paper_recipes_leave_the_modern_features_off_and_say_so(path):
    run = run_config_from_flagfile(path)
    assert run.train.label_smoothing == 0.0
    assert run.train.accumulate_batches == 1
    assert run.train.ema_decay == 0.0
    assert run.model.tie_embeddings == "none" and not run.data.joint_vocab
    assert "Not in the paper, so left at their defaults (off)" in (
        path.read_text()
    )


def test_bahdanau_recipe_values():
    run = run_config_from_flagfile(CONFIGS / "bahdanau" / "rnnsearch50.flags")
    assert (run.train.optimizer, run.train.rho, run.train.epsilon) == (
        "adadelta",
        0.95,
        1e-6,
    )
    assert run.train.clip_norm == 1.0
    assert (run.data.batch_size, run.data.sort_window) == (80, 20)
    assert run.data.max_source_length == 50
    assert (run.model.embedding_dim, run.model.hidden_units) == (620, 1000)
    assert (run.model.maxout_units, run.model.attention_units) == (500, 1000)
    assert run.data.source_vocab_size == run.data.target_vocab_size == 30000
    # Sec. 4.1: WMT'14 en->fr, about 12M pairs, newstest2012+2013 to
    # validate, a word shortlist after tokenisation.
    assert run.data.tfds_dataset == "wmt14_translate/fr-en"
    assert (run.data.source, run.data.target) == ("en", "fr")
    assert run.data.max_train_pairs == 12_000_000
    assert run.data.valid_test_sets == "wmt12,wmt13"
    assert run.data.tokenizer == "word" and run.data.split_punctuation


def test_luong_recipe_values():
    run = run_config_from_flagfile(
        CONFIGS / "luong" / "local_p_general_feed.flags"
    )
    assert (run.model.num_layers, run.model.hidden_units) == (4, 1000)
    assert (run.train.optimizer, run.train.learning_rate) == ("sgd", 1.0)
    assert (run.train.epochs, run.train.halve_after_epochs) == (12, 8)
    assert run.model.dropout == 0.2 and run.model.reverse_source
    assert run.model.window == 10 and run.train.clip_norm == 5.0
    assert run.data.batch_size == 128 and run.data.max_source_length == 50
    base = run_config_from_flagfile(CONFIGS / "luong" / "base.flags")
    assert (base.train.epochs, base.train.halve_after_epochs) == (10, 5)
    assert base.data.source_vocab_size == 50000
    for data in (run.data, base.data):
        # Sec. 4.1: WMT'14 en->de (4.5M pairs), newstest2013 to validate.
        assert data.tfds_dataset == "wmt14_translate/de-en"
        assert (data.source, data.target) == ("en", "de")
        assert data.tokenizer == "word" and data.split_punctuation


@pytest.mark.parametrize(
    "recipe, flags, refusal",
    [
        (
            "bahdanau/rnnsearch50.flags",
            ["--attention_mode=local-p"],
            "model: --attention_mode has no effect on architecture=rnnsearch; "
            "remove it",
        ),
        (
            "bahdanau/rnnencdec50.flags",
            ["--reverse_source", "--score=dot"],
            "model: --score, --reverse_source have no effect on "
            "architecture=rnnencdec; remove them",
        ),
        (
            "luong/base.flags",
            ["--maxout_units=100"],
            "model: --maxout_units has no effect on architecture=luong; "
            "remove it",
        ),
    ],
)
def test_flags_that_the_architecture_ignores_are_refused_by_name(
    recipe, flags, refusal
):
    # They were accepted and ignored: a local-p rnnsearch trained as global.
    with pytest.raises(ValueError) as raised:
        run_config_from_flagfile(CONFIGS / recipe, *flags)
    assert str(raised.value) == refusal


def test_every_flag_is_explained_by_its_config_docstring():
    import dataclasses

    from absl import flags

    from seq2seq_attn.cli.config_flags import attribute_docs
    from seq2seq_attn.cli.train import FLAG_SECTIONS, SECTIONS

    for section, kind in SECTIONS.items():
        docs = attribute_docs(kind)
        for field in dataclasses.fields(kind):
            assert len(docs.get(field.name, "")) > 10, (kind, field.name)
            if FLAG_SECTIONS.get(field.name) == section:
                assert flags.FLAGS[field.name].help == docs[field.name]
    help_text = flags.FLAGS["batch_size"].help
    assert help_text.startswith("sentences per batch (80 in Bahdanau B.2")


def _flags_of(module, names):
    """{flag: [default, help, enum values or None]} of the flags `names`
    (a Python expression over `module`) that importing
    `seq2seq_attn.cli.<module>` defines, read in a process of its own (the
    commands define flags of the same names)."""
    import json
    import subprocess
    import sys

    code = f"""
import json
from absl import flags
from seq2seq_attn.cli import {module}
print(json.dumps({{n: [flags.FLAGS[n].default, flags.FLAGS[n].help,
                      getattr(flags.FLAGS[n].parser, "enum_values", None)]
                  for n in {names}}}))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_build_vocab_flags_are_data_config_fields():
    # One flag generator: build_vocab's data flags have DataConfig's names,
    # defaults and help, as train's do.
    import dataclasses

    found = _flags_of("build_vocab", "build_vocab.VOCABULARY_FIELDS")
    from seq2seq_attn.cli.config_flags import attribute_docs
    from seq2seq_attn.config.run import DataConfig

    docs = attribute_docs(DataConfig)
    defaults = {f.name: f.default for f in dataclasses.fields(DataConfig)}
    assert {"corpus", "tokenizer", "vocab_sample_lines"} <= set(found)
    for name, (default, help_text, _) in found.items():
        assert default == defaults[name] and help_text == docs[name], name


def test_search_flags_are_search_config_fields():
    # The search flags were written out beside SearchConfig and Scoring,
    # with help of their own; evaluate's --bleu_tokenize offered 4 of the
    # sacreBLEU tokenizers that DataConfig takes. Now both come from the
    # configs.
    import dataclasses

    found = _flags_of(
        "evaluate", '[*evaluate.search_flags.SECTIONS, "bleu_tokenize"]'
    )
    from seq2seq_attn.cli.config_flags import attribute_docs
    from seq2seq_attn.config.run import bleu_tokenizers
    from seq2seq_attn.config.scoring import LENGTH_PENALTIES, Scoring
    from seq2seq_attn.config.search import SearchConfig

    fields = [
        (kind, field)
        for kind in (SearchConfig, Scoring)
        for field in dataclasses.fields(kind)
        if field.name != "scoring"
    ]
    assert sorted(found) == sorted(
        [f.name for _, f in fields] + ["bleu_tokenize"]
    )
    for kind, field in fields:
        default, help_text, choices = found[field.name]
        doc = attribute_docs(kind)[field.name]
        shown = f"<{'|'.join(choices)}>: {doc}" if choices else doc
        assert default == field.default, field.name
        assert help_text == shown, field.name
    assert found["length_penalty"][2] == list(LENGTH_PENALTIES)
    assert found["bleu_tokenize"][2] == list(bleu_tokenizers())

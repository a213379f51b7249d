import dataclasses

import pytest

from seq2seq_attn.models import ModelConfig


def test_json_round_trip():
    config = ModelConfig(architecture="luong", score="concat", num_layers=4)
    assert ModelConfig.from_json(config.to_json()) == config


def test_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ModelConfig().hidden_units = 3


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(architecture="transformer"), "architecture must be one of"),
        (dict(score="cosine"), "score must be one of"),
        (dict(attention_mode="local"), "attention_mode must be one of"),
        (dict(hidden_units=0), "hidden_units must be >= 1, got 0"),
        (dict(hidden_units=2.5), "hidden_units must be an integer, got 2.5"),
        (
            dict(embedding_dim=2**31),
            "embedding_dim must be at most 2,147,483,647 \\(an int32",
        ),
        (dict(dropout=1.0), "dropout must be in"),
        (dict(initializer="he"), "initializer must be one of"),
        (
            dict(architecture="luong", score="none"),
            "input_feeding needs attention",
        ),
        (dict(target_vocab_size=3), "target_vocab_size must be >= 5"),
        (dict(encoder_units=0), "encoder_units must be >= 1, got 0"),
        (
            dict(architecture="luong", hidden_units=8, encoder_units=4),
            "encoder_units \\(4\\) must equal hidden_units \\(8\\)",
        ),
    ],
)
def test_bad_values_are_named(changes, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**changes)


def test_unknown_field_is_named():
    with pytest.raises(ValueError, match="unknown fields \\['hiden_units'\\]"):
        ModelConfig.from_dict({"hiden_units": 3})


def test_what_a_resume_may_change_is_declared_on_the_field():
    from seq2seq_attn.config.run import (
        RESUMABLE,
        DataConfig,
        RunConfig,
        TrainConfig,
    )

    for section, kind in (("data", DataConfig), ("train", TrainConfig)):
        declared = {
            field.name
            for field in dataclasses.fields(kind)
            if field.metadata.get("resumable")
        }
        assert RESUMABLE[section] == declared
    assert RESUMABLE["model"] == frozenset()
    assert {"learning_rate", "epochs"} <= RESUMABLE["train"]
    assert not {"optimizer", "seed"} & RESUMABLE["train"]
    assert not {"tokenizer", "batch_size"} & RESUMABLE["data"]
    # One loader for every section, naming the section and the key.
    run = RunConfig(ModelConfig(), DataConfig(), TrainConfig())
    text = run.to_json().replace('"epochs"', '"epoch"')
    with pytest.raises(
        ValueError, match=r"config.json: train: unknown .*epoch"
    ):
        RunConfig.from_json(text)
    assert RunConfig.from_json(run.to_json()) == run


def test_config_json_carries_a_format_version_that_loading_checks():
    import json

    from seq2seq_attn.config.run import (
        FORMAT_VERSION,
        DataConfig,
        RunConfig,
        TrainConfig,
    )

    run = RunConfig(ModelConfig(), DataConfig(), TrainConfig())
    written = json.loads(run.to_json())
    assert written["format_version"] == FORMAT_VERSION
    # No key: the format of 0.1.0, which wrote none.
    del written["format_version"]
    assert RunConfig.from_json(json.dumps(written)) == run
    for newer in (FORMAT_VERSION + 1, 99):
        written["format_version"] = newer
        with pytest.raises(
            ValueError,
            match=rf"format_version {newer} was written by a newer "
            rf"seq2seq_attn; this one \(.*\) reads formats up to "
            rf"{FORMAT_VERSION}: upgrade",
        ):
            RunConfig.from_json(json.dumps(written))
    written["format_version"] = "1"
    with pytest.raises(ValueError, match="must be an integer >= 1, got '1'"):
        RunConfig.from_json(json.dumps(written))


def test_a_run_recorded_with_an_ignored_field_resumes_without_it():
    # The train command once accepted --score for rnnsearch; it now refuses
    # it, so a resume without it must not be refused as a change.
    from seq2seq_attn.config.run import DataConfig, RunConfig, TrainConfig

    def run(**model):
        return RunConfig(ModelConfig(**model), DataConfig(), TrainConfig())

    recorded = run(architecture="rnnsearch", score="dot", window=3)
    assert recorded.differences(run(architecture="rnnsearch")) == []
    luong = run(architecture="luong", hidden_units=16, embedding_dim=16)
    changed = luong.model.replace(score="dot")
    assert luong.differences(RunConfig(changed, luong.data, luong.train)) == [
        ("model", "score", "general", "dot")
    ]
    assert recorded.differences(run(architecture="rnnencdec")) == [
        ("model", "architecture", "rnnsearch", "rnnencdec"),
        ("model", "score", "dot", "general"),
        ("model", "window", 3, 10),
    ]

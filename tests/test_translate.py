"""The translate CLI and the Translator on a model trained by the train CLI."""

import json
import shutil
import sys

import commands
import numpy as np
import pytest
import tensorflow as tf
from tiny_training import succeed, train_command

from seq2seq_attn.data import UNK
from seq2seq_attn.decoding.unk_replacement import (
    load_dictionary,
    replace_unknown_words,
)
from seq2seq_attn.export import export
from seq2seq_attn.model_dir import load_translator

SENTENCES = [
    "a man is riding a bicycle .",
    "",
    "two dogs play in the snow .",
    "   ",
    "a woman with a zebraxylophone .",
]


def _translate(model_dir, *flags, input_text=None, input_file=None):
    command = [
        sys.executable,
        "-m",
        "seq2seq_attn.translate",
        f"--model_dir={model_dir}",
    ]
    if input_file:
        command.append(f"--input={input_file}")
    result = commands.run([*command, *flags], input=input_text, timeout=600)
    return result


def test_one_line_out_per_line_in(trained_model_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n")
    result = _translate(trained_model_dir, "--beam_size=3", input_file=source)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    lines = result.stdout.decode().split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(SENTENCES)
    assert lines[1] == "" and lines[3] == ""
    assert lines[0] and lines[2] and lines[4]
    assert b"translating [" in result.stderr  # progress bar for files

    piped = _translate(
        trained_model_dir, "--beam_size=3", input_text=source.read_bytes()
    )
    assert piped.stdout == result.stdout


def test_nbest_scores_and_greedy(trained_model_dir):
    text = "\n".join(SENTENCES).encode()
    result = _translate(
        trained_model_dir,
        "--beam_size=4",
        "--nbest=3",
        "--scores",
        input_text=text,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    first = result.stdout.decode().split("\n")[0].split("\t")
    assert len(first) == 3
    scores = [float(field.split(" ", 1)[0]) for field in first]
    assert scores == sorted(scores, reverse=True)
    greedy = _translate(trained_model_dir, "--beam_size=1", input_text=text)
    assert greedy.returncode == 0
    assert len(greedy.stdout.decode().split("\n")) == len(SENTENCES) + 1


def test_invalid_utf8_is_named_unless_replaced(trained_model_dir):
    text = b"a dog .\nbad \xff byte .\n"
    result = _translate(trained_model_dir, input_text=text)
    assert result.returncode != 0
    assert b"-:2: invalid UTF-8" in result.stderr
    replaced = _translate(
        trained_model_dir, "--invalid_utf8=replace", input_text=text
    )
    assert replaced.returncode == 0
    assert len(replaced.stdout.decode().split("\n")) == 3
    skipped = _translate(
        trained_model_dir, "--invalid_utf8=skip", input_text=text
    )
    assert skipped.returncode == 0
    assert skipped.stdout.decode().split("\n")[1:] == ["", ""]


def test_unk_replacement_copies_the_attended_source_word(
    trained_model_dir, tmp_path
):
    plain = load_translator([trained_model_dir], beam_size=2)
    replacing = load_translator(
        [trained_model_dir], beam_size=2, replace_unk=True
    )
    sentences = ["a zebraxylophone and a quokkafish .", "a man ."] * 3
    before = plain.translations(sentences)
    after = replacing.translations(sentences)
    with_unk = [i for i, t in enumerate(before) if UNK in t.text.split()]
    assert with_unk, "the tiny model produced no <unk> to replace"
    source_words = set(" ".join(sentences).split())
    for i in with_unk:
        words = after[i].text.split()
        assert UNK not in words
        expected = replace_unknown_words(
            before[i].text.split(),
            before[i].alignment,
            sentences[i].split(),
        )
        assert words == expected
        assert set(words) - set(before[i].text.split()) <= source_words
    dictionary = tmp_path / "dict.txt"
    dictionary.write_text("".join(f"{w}\tX{w}\n" for w in source_words))
    mapped = load_translator(
        [trained_model_dir],
        beam_size=2,
        replace_unk=True,
        dictionary=load_dictionary(dictionary),
    ).translations(sentences)
    for i in with_unk:
        new = set(mapped[i].text.split()) - set(before[i].text.split())
        assert new and all(word.startswith("X") for word in new)


def test_load_translator_takes_strings_in_and_gives_strings_out(
    trained_model_dir,
):
    import seq2seq_attn

    # One directory as a plain string or a path (it was read as a list of
    # one-character directories), one sentence as a string (it was read as
    # a list of one-character sentences).
    translator = seq2seq_attn.load_translator(str(trained_model_dir))
    one = translator.translate("a man is riding a bike .")
    assert isinstance(one, str) and one
    many = seq2seq_attn.load_translator(trained_model_dir).translate(
        ["a man is riding a bike .", "", "two dogs ."]
    )
    assert isinstance(many, list) and len(many) == 3
    assert many[0] == one and many[1] == ""
    assert all(isinstance(text, str) for text in many)
    results = translator.translations(["a man is riding a bike ."])
    assert isinstance(results[0], seq2seq_attn.Translation)
    assert results[0].text == one
    with pytest.raises(TypeError, match="list of sentences"):
        translator.translations("a man .")
    with pytest.raises(ValueError, match="needs a model directory"):
        seq2seq_attn.load_translator([])


def test_replace_unknown_words_by_hand():
    alignment = np.array([[0.9, 0.1, 0.0], [0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    assert replace_unknown_words(
        ["das", UNK, UNK], alignment, ["the", "green", "zebra"], {"the": "der"}
    ) == ["das", "zebra", "der"]


def test_bad_dictionary_line_is_named(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("haus\thouse\nthree words here\n")
    with pytest.raises(ValueError, match="d.txt:2"):
        load_dictionary(path)


def test_ensemble_of_one_model_twice_equals_the_model(trained_model_dir):
    single = load_translator([trained_model_dir], beam_size=3)
    double = load_translator(
        [trained_model_dir, trained_model_dir], beam_size=3
    )
    sentences = [s for s in SENTENCES if s.strip()]
    for a, b in zip(
        single.translations(sentences),
        double.translations(sentences),
        strict=True,
    ):
        assert a.text == b.text
        assert abs(a.score - b.score) < 1e-4


def test_bfloat16_model_computes_close_to_float32(trained_model_dir, rng):
    from conftest import padded_batch

    from seq2seq_attn.model_dir import load_trained

    _, exact, _, _ = load_trained(trained_model_dir)
    _, fast, _, _ = load_trained(trained_model_dir, precision="bfloat16")
    source = padded_batch(rng, [9, 4, 12], 400)
    target = padded_batch(rng, [7, 10, 3], 400)
    expected = np.asarray(exact([source, target]))
    logits = np.asarray(fast([source, target]))
    assert logits.dtype == np.float32
    assert fast.get_layer("deep_output").compute_dtype == "bfloat16"
    # bfloat16 keeps 8 bits of mantissa: close, not equal.
    assert 0 < np.abs(logits - expected).max() < 0.05 * np.abs(expected).max()

    translator = load_translator([trained_model_dir], precision="bfloat16")
    results = translator.translate(SENTENCES)
    assert [bool(text) for text in results] == [
        bool(s.strip()) for s in SENTENCES
    ]


def test_unknown_precision_is_named(trained_model_dir):
    with pytest.raises(ValueError, match="precision must be one of"):
        load_translator([trained_model_dir], precision="int8")


def test_a_checkpoint_of_another_model_is_named_and_skipped(
    trained_model_dir, tmp_path, capfd
):
    from seq2seq_attn.config import ModelConfig
    from seq2seq_attn.model_dir import load_trained
    from seq2seq_attn.models import build_model
    from seq2seq_attn.training.checkpoints import DamagedCheckpointError

    copy = tmp_path / "model"
    shutil.copytree(trained_model_dir, copy)
    shutil.rmtree(copy / "best")
    # best/ missing every weight, and as the newest training checkpoint one
    # of a model of other sizes: it ended in "Received incompatible tensor"
    # without its name, after a hundred TensorFlow warnings.
    hollow = tf.train.Checkpoint(model=tf.Module(), step=tf.Variable(7))
    tf.train.CheckpointManager(hollow, str(copy / "best"), 1).save()
    other = build_model(
        ModelConfig(
            source_vocab_size=404, target_vocab_size=404, hidden_units=8
        )
    )
    tf.train.Checkpoint(model=other).write(
        str(copy / "checkpoints" / "ckpt-999")
    )
    capfd.readouterr()
    run, model, _, _ = load_trained(copy)
    stderr = capfd.readouterr().err
    assert f"warning: {copy}/best/ckpt-1: a checkpoint of another model" in (
        stderr
    )
    assert f"warning: {copy}/checkpoints/ckpt-999: a checkpoint of another" in (
        stderr
    )
    assert "using " in stderr and "WARNING" not in stderr, stderr
    assert len(stderr.splitlines()) == 3
    # Named where it is the only one asked for.
    with pytest.raises(DamagedCheckpointError, match="ckpt-999: a checkpoint"):
        load_trained(copy, checkpoint=str(copy / "checkpoints" / "ckpt-999"))


def test_long_inputs_are_cut_by_default_and_the_cut_is_said(
    trained_model_dir,
):
    long_line = " ".join(["a dog runs ."] * 100)  # 400 tokens
    text = f"a man .\n{long_line}\n".encode()
    result = _translate(trained_model_dir, "--beam_size=2", input_text=text)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    outputs = result.stdout.decode().split("\n")[:-1]
    assert len(outputs) == 2
    # Cut to 100 tokens, the output is at most ceil(1.5 * 100 + 5) tokens.
    assert 0 < len(outputs[1].split()) <= 155
    stderr = result.stderr.decode()
    assert "1 input line(s) of up to 400 tokens" in stderr
    assert "--max_input_tokens=100" in stderr

    uncut = _translate(
        trained_model_dir,
        "--beam_size=2",
        "--max_input_tokens=0",
        input_text=text,
    )
    assert uncut.returncode == 0 and b"were cut" not in uncut.stderr
    assert len(uncut.stdout.decode().split("\n")[:-1]) == 2


def test_leading_whitespace_is_not_read_as_part_of_the_input(
    trained_model_dir,
):
    # The bytes read for --max_input_tokens=100 (6,400) once counted the
    # spaces, so this translated to "" with "up to 0 tokens were cut".
    translator = load_translator(trained_model_dir)
    sentence = "a man is riding a bicycle ."
    padded, plain = translator.translations([" " * 7000 + sentence, sentence])
    assert padded.text == plain.text != ""
    assert not padded.cut and padded.input_tokens == plain.input_tokens == 7


def test_a_model_of_tokenised_text_says_what_input_it_reads(
    trained_model_dir, tmp_path
):
    copy = tmp_path / "tok_model"
    shutil.copytree(trained_model_dir, copy)
    config = json.loads((copy / "config.json").read_text())
    config["data"].update(
        corpus="multi30k",
        variant="tok",
        train_source_file=None,
        train_target_file=None,
        valid_source_file=None,
        valid_target_file=None,
    )
    (copy / "config.json").write_text(json.dumps(config))
    result = _translate(copy, "--beam_size=2", input_text=b"a man .\n")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert "trained on Multi30k's tok/ text" in result.stderr.decode()
    plain = _translate(trained_model_dir, "--beam_size=2", input_text=b"a .\n")
    assert b"tok/ text" not in plain.stderr


def test_one_generate_call_over_many_chunks_equals_one_call_per_sentence(
    trained_model_dir,
):
    # The in-graph sort and chunking (3 chunks of 2 here), and the padded
    # concatenation of chunks of different widths, change no sentence.
    translator = load_translator(
        [trained_model_dir], beam_size=3, nbest=2, batch_size=2
    )
    sentences = [*SENTENCES, "a little girl climbs a big tree in a park ."]
    together = {k: v.numpy() for k, v in translator.generate(sentences).items()}
    for row, sentence in enumerate(sentences):
        alone = {
            k: v.numpy() for k, v in translator.generate([sentence]).items()
        }
        assert together["texts"][row].tolist() == alone["texts"][0].tolist()
        np.testing.assert_allclose(
            together["scores"][row], alone["scores"][0], rtol=1e-5
        )
        lengths = alone["lengths"][0]
        np.testing.assert_array_equal(together["lengths"][row], lengths)
        for n, length in enumerate(lengths):
            np.testing.assert_array_equal(
                together["tokens"][row, n, :length],
                alone["tokens"][0, n, :length],
            )
            assert not together["tokens"][row, n, length:].any()
        width = int((alone["source_ids"][0] != 0).sum())
        np.testing.assert_allclose(
            together["alignments"][row, : lengths[0], :width],
            alone["alignments"][0, : lengths[0], :width],
            atol=1e-6,
        )
        assert not together["alignments"][row, lengths[0] :].any()


def test_translations_tokenize_once_as_generate_does(trained_model_dir):
    # `translations` tokenizes the whole list once and searches its ids
    # (`generate_from_ids`); the text-in `generate` tokenizes in the graph.
    # Both give the same ids, cut, translations and scores, across chunks
    # (batch_size 2) and for empty, blank, invalid and cut inputs.
    translator = load_translator(
        [trained_model_dir],
        beam_size=3,
        nbest=2,
        batch_size=2,
        max_input_tokens=6,
    )
    sentences = [
        *SENTENCES,
        "",
        "   ",
        b"a dog \xff runs .",
        "a little girl climbs a big tree in a park .",
    ]
    found = {k: v.numpy() for k, v in translator.generate(sentences).items()}
    results = translator.translations(sentences)
    ids, input_tokens, cut = translator.tokenize(sentences)
    np.testing.assert_array_equal(input_tokens, found["input_tokens"])
    np.testing.assert_array_equal(cut, found["cut"])
    assert cut[-1] and not cut[len(SENTENCES)] and not cut.all()
    for row, result in enumerate(results):
        source = found["source_ids"][row]
        source = source[source != 0]
        np.testing.assert_array_equal(result.source_ids, source)
        np.testing.assert_array_equal(ids[row].numpy(), source)
        assert result.input_tokens == found["input_tokens"][row]
        assert result.cut == found["cut"][row]
        if not len(source):
            assert result.nbest == [("", 0.0)]
            continue
        texts = [t.decode() for t in found["texts"][row]]
        assert [text for text, _ in result.nbest] == texts
        np.testing.assert_allclose(
            [score for _, score in result.nbest],
            found["scores"][row],
            rtol=1e-5,
        )


@pytest.mark.slow
def test_a_location_score_model_reads_its_positions_of_any_input(
    text_flags, tmp_path
):
    # Luong's location score has a column of W_a for each of
    # max_source_positions positions: a longer input failed the whole batch
    # ("Incompatible shapes: [1,1,20] vs. [1,1,12]"), in translate, evaluate
    # and the SavedModel alike. The model's own cut now applies, and is said.
    model_dir = tmp_path / "location"
    positions = ["--max_source_positions=12", "--max_source_length=12"]
    flags = [*text_flags, "--score=location", "--max_steps=1"]
    refused = commands.run(
        train_command(
            tmp_path / "refused",
            *flags,
            "--max_source_length=13",
            "--max_source_positions=12",
        ),
        text=True,
    )
    assert refused.returncode == 2
    assert "max_source_length (13) must be in [1, max_source_positions=12]" in (
        refused.stderr
    )
    assert not (tmp_path / "refused").exists()
    succeed(train_command(model_dir, *flags, *positions))
    long_line = "a man in a blue shirt is riding a bicycle down a street " * 2
    text = f"a dog runs .\n{long_line}\n".encode()  # 4 and 26 tokens
    result = _translate(model_dir, "--beam_size=2", input_text=text)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert len(result.stdout.decode().split("\n")[:-1]) == 2
    stderr = result.stderr.decode()
    assert "1 input line(s) of up to 26 tokens or more were cut to 12" in (
        stderr
    )
    assert "location score" in stderr

    translator = load_translator(model_dir, beam_size=2)
    assert translator.config.max_input_tokens == 12
    short, long = translator.translations(["a dog runs .", long_line])
    assert not short.cut and long.cut and long.input_tokens == 26
    assert len(long.source_ids) == 12
    served = tf.saved_model.load(str(export(translator, tmp_path / "export")))
    out = served.signatures["serving_default"](
        text=tf.constant(["a dog runs .", long_line])
    )
    assert [t.decode() for t in out["translation"].numpy()] == [
        short.text,
        long.text,
    ]

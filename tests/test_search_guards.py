"""The search guards on a model forced to loop: the output length limit
ceil(a * |x| + b) and the repeated n-gram block, in the searches, in
translate and in the export alike."""

import json
import math
import shutil
import subprocess
import sys
import textwrap

import commands
import numpy as np
import pytest
import tensorflow as tf
from conftest import padded_batch

from seq2seq_attn.config import SearchConfig
from seq2seq_attn.decoding import beam_search, greedy_search
from seq2seq_attn.decoding.search_step import block_repeated_ngrams
from seq2seq_attn.model_dir import load_trained
from seq2seq_attn.models import InferenceForm
from seq2seq_attn.special_tokens import EOS_ID
from seq2seq_attn.training.layout import ModelDir

LOOPED_WORD = "ein"


def _ngrams(tokens, n):
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def _numpy_blocked(logits, written, position, n):
    """The block from its definition: a token is banned where the row's
    last n - 1 tokens and it would form an n-gram the row wrote before."""
    blocked = logits.copy()
    for row in range(logits.shape[0]):
        history = list(written[:position, row])
        prefix = tuple(history[len(history) - n + 1 :]) if n > 1 else ()
        for gram in _ngrams(history, n):
            if gram[:-1] == prefix:
                blocked[row, gram[-1]] = -np.inf
    return blocked


@pytest.mark.parametrize("n", [1, 2, 3, 4])
@pytest.mark.parametrize("position", [0, 1, 3, 6, 9])
def test_the_block_bans_what_its_definition_bans(n, position, rng):
    # Histories over 4 tokens repeat n-grams often; time-major [T, N].
    written = rng.integers(4, 8, size=(9, 6)).astype("int32")
    written[position:] = rng.integers(0, 8, size=(9 - position, 6))
    logits = rng.normal(size=(6, 10)).astype("float32")
    got = block_repeated_ngrams(
        tf.constant(logits), tf.constant(written), tf.constant(position), n
    )
    expected = _numpy_blocked(logits, written, position, n)
    np.testing.assert_array_equal(np.asarray(got), expected)


def _loop_forever(model, looped):
    """Makes `model` (an RNNsearch) write `looped` at every step and </s>
    never: the runaway the guards are for."""
    bias = model.get_layer("deep_output").output_bias
    values = bias.numpy()
    values[looped], values[EOS_ID] = 30.0, -30.0
    bias.assign(values)


@pytest.fixture(scope="module")
def looping(trained_model_dir):
    _, model, source_tokenizer, target_tokenizer = load_trained(
        trained_model_dir
    )
    words = ModelDir(trained_model_dir).vocab_dir("target") / "vocab.txt"
    looped = words.read_text().splitlines().index(LOOPED_WORD)
    _loop_forever(model, looped)
    return model, looped


@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_a_looping_model_is_capped_and_never_repeats_an_ngram(
    looping, beam_size, n, rng
):
    model, looped = looping
    form = InferenceForm(model)
    lengths = [1, 3, 6, 9]
    source = padded_batch(rng, lengths, 50)
    options = dict(max_length_a=1.5, max_length_b=5, no_repeat_ngram_size=n)
    if beam_size == 1:
        result = greedy_search(form, source, **options)
    else:
        result = beam_search(form, source, beam_size=beam_size, **options)
    for row, length in enumerate(lengths):
        limit = math.ceil(1.5 * length + 5)
        tokens = np.asarray(result.tokens[row, 0]).tolist()
        assert int(result.lengths[row, 0]) == limit  # </s> forced at it
        assert tokens[limit - 1] == EOS_ID and EOS_ID not in tokens[: limit - 1]
        assert np.isfinite(float(result.scores[row, 0]))
        written = tokens[: limit - 1]
        if n == 0:
            assert written == [looped] * (limit - 1)
        else:
            grams = _ngrams(written, n)
            assert len(grams) == len(set(grams)), (n, written)
            assert written[0] == looped


def _looping_model_dir(trained_model_dir, directory):
    """A model directory whose best checkpoint loops (`_loop_forever`)."""
    source, target = ModelDir(trained_model_dir), ModelDir(directory)
    target.path.mkdir(parents=True)
    shutil.copytree(source.vocab, target.vocab)
    shutil.copyfile(source.path / "config.json", target.path / "config.json")
    _, model, _, _ = load_trained(source.path)
    words = (source.vocab_dir("target") / "vocab.txt").read_text()
    _loop_forever(model, words.splitlines().index(LOOPED_WORD))
    checkpoint = tf.train.Checkpoint(model=model, step=tf.Variable(1, tf.int64))
    tf.train.CheckpointManager(checkpoint, str(target.best), 1).save()
    return target.path


def _translate(model_dir, sentences, *flags):
    result = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.translate",
            f"--model_dir={model_dir}",
            *flags,
        ],
        input="\n".join(sentences) + "\n",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.split("\n")[:-1]


def test_translate_and_the_export_apply_both_guards(
    trained_model_dir, tmp_path
):
    model_dir = _looping_model_dir(trained_model_dir, tmp_path / "looping")
    sentences = ["a man .", "two dogs play in the snow .", ""]
    plain = _translate(model_dir, sentences, "--beam_size=3")
    # ceil(1.5 |x| + 5) tokens with </s>, |x| the source's tokens (words).
    for sentence, line in zip(sentences[:2], plain, strict=False):
        limit = math.ceil(1.5 * len(sentence.split()) + 5)
        assert line.split() == [LOOPED_WORD] * (limit - 1)
    assert plain[2] == ""
    guarded = _translate(
        model_dir, sentences, "--beam_size=3", "--no_repeat_ngram_size=2"
    )
    for line, cap in zip(guarded, plain, strict=True):
        words = line.split()
        assert len(words) == len(cap.split())
        assert len(set(_ngrams(words, 2))) == len(_ngrams(words, 2))

    export_dir = tmp_path / "export"
    exported = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.export",
            f"--model_dir={model_dir}",
            f"--export_dir={export_dir}",
            "--beam_size=3",
            "--no_repeat_ngram_size=2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert exported.returncode == 0, exported.stderr[-3000:]
    code = textwrap.dedent(
        """
        import json, sys
        import tensorflow as tf
        import tensorflow_text  # noqa: F401
        serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
        out = serve(text=tf.constant(json.loads(sys.argv[2])))
        print(json.dumps([t.decode() for t in out["translation"].numpy()]))
        """
    )
    served = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(export_dir / "1"),
            json.dumps(sentences),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    assert json.loads(served.stdout.strip().splitlines()[-1]) == guarded


def test_the_block_is_off_by_default_and_checked():
    assert SearchConfig().no_repeat_ngram_size == 0
    with pytest.raises(ValueError, match=r"no_repeat_ngram_size must be in"):
        SearchConfig(no_repeat_ngram_size=-1)

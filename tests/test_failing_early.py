"""Every command fails early, in one line, and leaves nothing half-written:
bad flags before any work, file errors as `error: PATH: what`, damaged
corpora named with the line reached."""

import gzip
import os
import shutil
import subprocess
import sys

import commands
import pytest
from conftest import multi30k_file_flags, multi30k_slice

from seq2seq_attn.cli import file_error_line

# Each test runs a command in a fresh interpreter; one is in-process.
pytestmark = pytest.mark.slow

# A model directory that does not exist: a check that names its own flag
# instead of the missing model ran before the model was loaded.
NO_MODEL = "/nonexistent/model"


def _command(verb, *flags, input_text=None):
    """Runs `python -m seq2seq_attn.<verb>` as a user would (TensorFlow's
    start-up lines hidden by the command); returns the result."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return commands.run(
        [sys.executable, "-m", f"seq2seq_attn.{verb}", *flags],
        input=input_text,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _one_error_line(result):
    """The one line a failed command printed (exit 2, no traceback)."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_translate_checks_its_output_before_loading_a_model(tmp_path):
    missing = tmp_path / "missing" / "out.txt"
    line = _one_error_line(
        _command("translate", f"--model_dir={NO_MODEL}", f"--output={missing}")
    )
    assert line == (
        f"error: {missing}: cannot be written: no folder {missing.parent}"
    )
    line = _one_error_line(
        _command("translate", f"--model_dir={NO_MODEL}", f"--output={tmp_path}")
    )
    assert line == f"error: {tmp_path}: is a folder, not a file to write"


def test_an_input_folder_is_one_line(tmp_path):
    line = _one_error_line(
        _command("translate", f"--model_dir={NO_MODEL}", f"--input={tmp_path}")
    )
    assert line == f"error: {tmp_path}: Is a directory"


@pytest.mark.parametrize(
    "flag,message",
    [
        ("--max_length_b=1e12", "max_length_b must be a number in"),
        ("--max_length_a=inf", "max_length_a must be a number in"),
        ("--max_length_a=nan", "got nan"),
        ("--alpha=nan", "alpha must be a finite number >= 0, got nan"),
        # Each size has a ceiling, said with the flag and the limit (these
        # ended in errors from inside the graph, after loading the model).
        (
            "--batch_size=1000000000000",
            "batch_size must be at most 2,147,483,647 (an int32 of the "
            "graph), got 1,000,000,000,000",
        ),
        (
            "--max_input_tokens=1000000000000",
            "max_input_tokens must be at most 2,097,151",
        ),
        ("--beam_size=2147483648", "beam_size must be at most 2,147,483,647"),
        ("--beam_size=40000000", "beam_size x batch_size (the rows of one"),
        ("--memory_budget_gb=0", "memory_budget_gb must be a positive"),
    ],
)
def test_search_flags_out_of_range_are_refused(flag, message):
    line = _one_error_line(
        _command("translate", f"--model_dir={NO_MODEL}", flag)
    )
    assert message in line


def test_translate_with_its_standard_output_closed_says_so(tmp_path):
    # `translate ... >&-` ended in an AttributeError after translating all.
    quiet = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    closed = subprocess.run(
        f"{sys.executable} -m seq2seq_attn.translate "
        f"--model_dir={NO_MODEL} >&-",
        shell=True,
        capture_output=True,
        text=True,
        timeout=300,
        env=quiet,
    )
    assert _one_error_line(closed) == (
        "error: standard output is closed; give --output=FILE"
    )


def test_evaluate_parses_its_flags_and_gold_file_first(tmp_path):
    (tmp_path / "src").write_text("a man .\ntwo dogs .\n")
    (tmp_path / "ref").write_text("ein mann .\nzwei hunde .\n")
    files = [f"--src={tmp_path / 'src'}", f"--ref={tmp_path / 'ref'}"]
    line = _one_error_line(
        _command(
            "evaluate", f"--model_dir={NO_MODEL}", *files, "--length_edges=abc"
        )
    )
    assert line == "error: --length_edges: 'abc' is not a non-negative integer"
    line = _one_error_line(
        _command(
            "evaluate",
            f"--model_dir={NO_MODEL}",
            *files,
            "--length_edges=20,10",
        )
    )
    assert line == "error: --length_edges must ascend, got 20,10"
    # Both were found only after translating the whole test set.
    no_model = f"--model_dir={NO_MODEL}"
    line = _one_error_line(
        _command("evaluate", no_model, *files, "--length_edges=")
    )
    assert line == "error: --length_edges: give at least one integer"
    ensemble = f"--model_dir={NO_MODEL},{NO_MODEL}"
    gold_flag = f"--gold_alignments={tmp_path / 'ref'}"
    line = _one_error_line(_command("evaluate", ensemble, *files, gold_flag))
    assert line == (
        "error: --gold_alignments: alignments are read from one model, not "
        "an ensemble; give one --model_dir"
    )

    gold = tmp_path / "gold"
    gold.write_text("0-0 1-1\n0-0 1_1\n")
    line = _one_error_line(
        _command(
            "evaluate",
            f"--model_dir={NO_MODEL}",
            *files,
            f"--gold_alignments={gold}",
        )
    )
    assert line == f"error: {gold}:2: cannot read link '1_1'"

    line = _one_error_line(
        _command(
            "evaluate",
            f"--model_dir={NO_MODEL}",
            *files,
            f"--output_dir={tmp_path / 'src' / 'eval'}",
        )
    )
    assert line == (
        f"error: {tmp_path / 'src'}: is a file, not a folder to write into"
    )


def test_export_refuses_a_negative_version_and_a_file_for_a_folder(tmp_path):
    export_dir = tmp_path / "exports"
    line = _one_error_line(
        _command(
            "export",
            f"--model_dir={NO_MODEL}",
            f"--export_dir={export_dir}",
            "--version=-3",
        )
    )
    assert "version must be a positive integer" in line and "-3" in line
    assert not export_dir.exists()
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    line = _one_error_line(
        _command("export", f"--model_dir={NO_MODEL}", f"--export_dir={a_file}")
    )
    assert line == (
        f"error: {a_file}: is a file; --export_dir is the folder of the "
        "version folders"
    )


@pytest.fixture(scope="module")
def text_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text")
    return multi30k_slice(directory, train=200, val=20)


def _train(model_dir, files, *flags):
    return _command(
        "train",
        f"--model_dir={model_dir}",
        "--corpus=",
        *multi30k_file_flags(files),
        "--tokenizer=word",
        "--source_vocab_size=300",
        "--target_vocab_size=300",
        "--hidden_units=8",
        "--embedding_dim=8",
        "--max_steps=1",
        *flags,
    )


@pytest.mark.parametrize(
    "flag,message",
    [
        ("--log_every=0", "train: log_every must be >= 1, got 0"),
        ("--learning_rate=inf", "train: learning_rate must be a finite"),
        ("--clip_norm=nan", "train: clip_norm must be a finite number"),
        ("--tokenizer=bpe", "data: tokenizer must be one of"),
        ("--window=5", "model: --window has no effect on architecture="),
        (
            "--batch_size=1000000000000",
            "data: batch_size must be at most 2,147,483,647",
        ),
        ("--hidden_units=10000000000", "ModelConfig: hidden_units must be at"),
        (
            "--accumulate_batches=3000000000",
            "train: accumulate_batches must be at most 2,147,483,647 (an "
            "int32 of the graph), got 3,000,000,000",
        ),
    ],
)
def test_train_refuses_bad_numbers_before_any_work(
    text_files, tmp_path, flag, message
):
    model_dir = tmp_path / "model"
    line = _one_error_line(_train(model_dir, text_files, flag))
    assert message in line
    assert not model_dir.exists()


def _damaged_copies(directory, source):
    """The source file of a slice, gzipped and damaged three ways."""
    data = gzip.compress(source.read_bytes())
    damaged = {
        "cut short": data[: len(data) // 2],
        "plain text": source.read_bytes(),
        "trailing junk": data + b"junk after the gzip data",
    }
    paths = {}
    for name, content in damaged.items():
        paths[name] = directory / f"{name.replace(' ', '_')}.en.gz"
        paths[name].write_bytes(content)
    return paths


def test_damaged_corpora_are_named_with_the_line_reached(text_files, tmp_path):
    damaged = _damaged_copies(tmp_path, text_files["train", "en"])
    expected = {
        "cut short": "unreadable after line 1",  # some line of the 200
        "plain text": "not gzip data, although the name ends in .gz",
        "trailing junk": "unreadable after line 200: bytes that are not gzip",
    }
    for name, path in damaged.items():
        files = dict(text_files)
        files["train", "en"] = path
        model_dir = tmp_path / name.replace(" ", "_")
        line = _one_error_line(_train(model_dir, files))
        assert line.startswith(f"error: {path}: "), line
        assert expected[name] in line or (
            name == "cut short" and "end before their end marker" in line
        ), line
        assert not model_dir.exists()


def test_blank_corpus_and_duplicate_vocabulary_are_one_line(
    text_files, tmp_path
):
    blank = dict(text_files)
    for language in ("en", "de"):
        blank["train", language] = tmp_path / f"blank.{language}"
        blank["train", language].write_text("\n \n\t\n" * 50)
    line = _one_error_line(
        _train(tmp_path / "blank", blank, "--tokenizer=sentencepiece")
    )
    assert "no sentence pairs" in line or "all empty or blank" in line

    built = tmp_path / "built"
    assert _train(built, text_files).returncode == 0
    vocab = tmp_path / "vocab"
    shutil.copytree(built / "vocab", vocab)
    words = vocab / "source" / "vocab.txt"
    lines = words.read_text().splitlines()
    words.write_text("\n".join([*lines, lines[7]]) + "\n")
    line = _one_error_line(
        _train(tmp_path / "dup", text_files, f"--vocab_dir={vocab}")
    )
    assert line == (
        f"error: {words}:{len(lines) + 1}: {lines[7]!r} is already on line 8;"
        " a vocabulary lists each token once"
    )
    assert not (tmp_path / "dup").exists()


def test_a_full_disk_is_one_line(trained_model_dir):
    # /dev/full takes the open and refuses every write: ENOSPC.
    result = _command(
        "translate",
        f"--model_dir={trained_model_dir}",
        "--beam_size=1",
        "--output=/dev/full",
        input_text="a man .\n",
    )
    assert (
        _one_error_line(result)
        == ("error: No space left on device (the disk is full)")
        or "/dev/full: No space left on device" in result.stderr
    )


def test_a_search_over_the_memory_budget_is_refused_before_translating(
    trained_model_dir,
):
    # beam_size=10**6 was accepted: 2 sentences reached 6.6 GB before a kill.
    line = _one_error_line(
        _command(
            "translate",
            f"--model_dir={trained_model_dir}",
            "--beam_size=1000000",
            input_text="a man .\n",
        )
    )
    assert "needs about" in line and "over memory_budget_gb=8" in line
    assert "lower --beam_size or --batch_size" in line
    from seq2seq_attn.model_dir import load_translator

    with pytest.raises(ValueError, match="beam_size must be at most"):
        load_translator(trained_model_dir, beam_size=2**31)
    # A larger budget lets the same search through.
    wide = load_translator(
        trained_model_dir, beam_size=2000, batch_size=1, memory_budget_gb=64
    )
    assert wide.config.beam_size == 2000


def test_file_errors_read_as_path_and_reason():
    import errno

    denied = PermissionError(errno.EACCES, "Permission denied", "/srv/in.txt")
    assert file_error_line(denied) == "/srv/in.txt: Permission denied"
    full = OSError(errno.ENOSPC, "No space left on device", "out.txt")
    assert file_error_line(full) == (
        "out.txt: No space left on device (the disk is full)"
    )
    assert file_error_line(KeyError("a bug")) is None


def _damaged_copy(model_dir, destination, damage):
    """A copy of `model_dir` with `damage(copy)` done to it."""
    copy = destination / "model"
    shutil.copytree(model_dir, copy, ignore=shutil.ignore_patterns("*.lock"))
    damage(copy)
    return copy


def _translating(model_dir, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("A dog runs.\n")
    return _command(
        "translate", f"--model_dir={model_dir}", f"--input={source}"
    )


def _garbage_sentencepiece(copy):
    (copy / "vocab" / "source" / "sentencepiece.model").write_bytes(
        b"\x00" * 64
    )


def _cut_sentencepiece(copy):
    path = copy / "vocab" / "target" / "sentencepiece.model"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])


def _unknown_tokenizer_option(copy):
    path = copy / "vocab" / "source" / "tokenizer.json"
    path.write_text(
        '{"kind": "sentencepiece", "options": {"normalization": "nmt_nfkc", '
        '"lowercase": true}}\n'
    )


def _bogus_normalization(copy):
    # Options were checked by name only: "bogus" was accepted.
    path = copy / "vocab" / "source" / "tokenizer.json"
    path.write_text(
        '{"kind": "sentencepiece", "options": {"normalization": "bogus"}}\n'
    )


def _case_folding_added(copy):
    # A valid value, but not the model's: it silently changed tokenization.
    path = copy / "vocab" / "target" / "tokenizer.json"
    path.write_text(
        '{"kind": "sentencepiece", "options": {"normalization": '
        '"nmt_nfkc_cf"}}\n'
    )


def _swapped_vocabularies(copy):
    vocab = copy / "vocab"
    (vocab / "source").rename(vocab / "swap")
    (vocab / "target").rename(vocab / "source")
    (vocab / "swap").rename(vocab / "target")


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            _garbage_sentencepiece,
            "vocab/source/sentencepiece.model: not a SentencePiece model",
        ),
        (
            _cut_sentencepiece,
            "vocab/target/sentencepiece.model: not a SentencePiece model",
        ),
        (
            _unknown_tokenizer_option,
            "vocab/source/tokenizer.json: unknown option(s) ['lowercase'] "
            "for a sentencepiece tokenizer",
        ),
        (
            _bogus_normalization,
            'vocab/source/tokenizer.json: option normalization="bogus" must '
            'be one of "identity", "nmt_nfkc", "nmt_nfkc_cf"',
        ),
        (
            _case_folding_added,
            'vocab/target/tokenizer.json: options {"normalization": '
            '"nmt_nfkc_cf"} are not those this model was trained with '
            '({"normalization": "nmt_nfkc"}',
        ),
        (
            _swapped_vocabularies,
            "vocab/source/sentencepiece.model: not the source vocabulary this "
            "model was trained with",
        ),
    ],
    ids=[
        "garbage_model",
        "cut_model",
        "unknown_option",
        "bogus_value",
        "changed_option",
        "swapped",
    ],
)
def test_a_damaged_model_directory_is_one_line(
    raw_model_dir, tmp_path, damage, message
):
    copy = _damaged_copy(raw_model_dir, tmp_path, damage)
    line = _one_error_line(_translating(copy, tmp_path))
    assert line.startswith(f"error: {copy}/{message}"), line
    if damage is _swapped_vocabularies:
        assert line.endswith("it is the target vocabulary: swapped?)"), line


def test_export_of_a_model_dir_that_is_a_file_is_one_line(tmp_path):
    model_file = tmp_path / "model"
    model_file.write_text("not a directory\n")
    line = _one_error_line(
        _command(
            "export",
            f"--model_dir={model_file}",
            f"--export_dir={tmp_path / 'exports'}",
        )
    )
    assert line == f"error: {model_file}: is a file, not a model directory"
    assert not (tmp_path / "exports").exists()

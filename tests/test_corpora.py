import gzip
import zipfile

import pytest
from conftest import SHARED_DATA

from seq2seq_attn.data import (
    anki_split,
    load_corpus,
    read_parallel_files,
    read_tsv_pairs,
)
from seq2seq_attn.data.text_stream import ParallelText


def _write(path, lines, newline=b"\n"):
    path.write_bytes(newline.join(lines) + newline)
    return path


def test_multi30k_train_raw_and_tok():
    raw = load_corpus("multi30k", "train", "en", "de", data_dir=SHARED_DATA)
    tok = load_corpus(
        "multi30k", "train", "en", "de", variant="tok", data_dir=SHARED_DATA
    )
    assert len(raw) == len(tok) == 29000
    assert raw.report.read == raw.report.kept == 29000
    assert (
        raw.sources[0] == "Two young, White males are outside near many bushes."
    )
    assert tok.targets[0].startswith("zwei junge weiße männer")
    fr = load_corpus("multi30k", "test2016", "en", "fr", data_dir=SHARED_DATA)
    assert len(fr) == 1000


def test_line_count_mismatch_names_both_files(tmp_path):
    source = _write(tmp_path / "a.en", [b"one", b"two", b"three"])
    target = _write(tmp_path / "a.de", [b"eins", b"zwei"])
    with pytest.raises(ValueError) as error:
        read_parallel_files(source, target)
    message = str(error.value)
    assert "a.en has 3 lines" in message and "a.de has 2" in message


def test_empty_and_whitespace_lines_are_dropped_and_counted(tmp_path):
    source = _write(tmp_path / "s.txt", [b"a b", b"   ", b"c", b"d"])
    target = _write(tmp_path / "t.txt", [b"x", b"y", b"\t", b"z"])
    corpus = read_parallel_files(source, target)
    assert corpus.sources == ["a b", "d"] and corpus.targets == ["x", "z"]
    assert (corpus.report.read, corpus.report.kept, corpus.report.empty) == (
        4,
        2,
        2,
    )
    assert "2 dropped as empty" in corpus.report.summary()


def test_invalid_utf8_error_replace_and_skip(tmp_path):
    source = _write(
        tmp_path / "s.txt", [b"good", b"bad \xff\xfe here", b"fine"]
    )
    target = _write(tmp_path / "t.txt", [b"gut", b"schlecht", b"gut"])
    with pytest.raises(ValueError, match=r"s\.txt:2: invalid UTF-8"):
        read_parallel_files(source, target)
    replaced = read_parallel_files(source, target, invalid_utf8="replace")
    assert replaced.sources[1] == "bad \ufffd\ufffd here"
    assert replaced.report.replaced_utf8 == 1 and replaced.report.kept == 3
    skipped = read_parallel_files(source, target, invalid_utf8="skip")
    assert skipped.sources == ["good", "fine"]
    assert skipped.report.invalid_utf8 == 1
    with pytest.raises(ValueError, match="invalid_utf8 must be one of"):
        read_parallel_files(source, target, invalid_utf8="ignore")


def test_gzip_crlf_and_unicode_line_separators(tmp_path):
    lines = ["first\u2028still first", "second\r"]
    source = tmp_path / "s.gz"
    with gzip.open(source, "wb") as stream:
        stream.write("\n".join(lines).encode() + b"\n")
    target = _write(tmp_path / "t.txt", [b"eins", b"zwei"], newline=b"\r\n")
    corpus = read_parallel_files(source, target)
    assert corpus.sources == ["first\u2028still first", "second"]
    assert corpus.targets == ["eins", "zwei"]


def _errors_of_both_readers(source, target):
    """The ValueError messages of the in-memory reader and of the training
    stream's pre-pass on the same two files."""
    with pytest.raises(ValueError) as in_memory:
        read_parallel_files(source, target)
    with pytest.raises(ValueError) as streamed:
        ParallelText.from_files([source], [target]).scan()
    return str(in_memory.value), str(streamed.value)


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda data: data[: len(data) // 2], "unreadable after line "),
        (lambda data: data + b"junk", "unreadable after line 300: bytes that"),
        (gzip.decompress, "not gzip data, although the name ends in .gz"),
    ],
    ids=["cut_short", "trailing_junk", "plain_text"],
)
def test_both_readers_name_a_damaged_gzip_file_alike(damage, message, tmp_path):
    # One line reader (data/lines.py) under the in-memory reader and the
    # training stream's pre-pass: the same error, naming the line reached.
    lines = [f"sentence number {i} of a few".encode() for i in range(300)]
    source = tmp_path / "source.en.gz"
    source.write_bytes(damage(gzip.compress(b"\n".join(lines) + b"\n")))
    target = _write(tmp_path / "target.de", lines)
    in_memory, streamed = _errors_of_both_readers(source, target)
    assert in_memory == streamed
    assert in_memory.startswith(f"{source}: {message}")


def test_invalid_utf8_is_named_alike_by_both_readers(tmp_path):
    source = _write(tmp_path / "s.en", [b"fine", b"caf\xe9 noir", b"ok"])
    target = _write(tmp_path / "t.de", [b"gut", b"Kaffee", b"ok"])
    in_memory, streamed = _errors_of_both_readers(source, target)
    expected = f"{source}:2: invalid UTF-8 at byte 3 (b'\\xe9 no'); set"
    assert in_memory.startswith(expected)
    assert in_memory == streamed


def test_tsv_pairs_from_zip_and_malformed_line(tmp_path):
    corpus = read_tsv_pairs(SHARED_DATA / "anki" / "spa-eng.zip")
    assert len(corpus) == 118964
    assert (corpus.sources[0], corpus.targets[0]) == ("Go.", "Ve.")
    archive = tmp_path / "pairs.zip"
    with zipfile.ZipFile(archive, "w") as stream:
        stream.writestr("_about.txt", "about")
        stream.writestr("pairs.txt", "Hi.\tHola.\nBye.\n")
    with pytest.raises(ValueError, match=r"pairs\.txt:2: expected at least 2"):
        read_tsv_pairs(archive)


def test_anki_split_is_seeded_disjoint_and_complete():
    splits = {
        split: load_corpus("anki", split, "es", "en", data_dir=SHARED_DATA)
        for split in ("train", "val", "test")
    }
    sizes = {split: len(corpus) for split, corpus in splits.items()}
    assert sizes == {"train": 107068, "val": 5948, "test": 5948}
    again = load_corpus("anki", "val", "es", "en", data_dir=SHARED_DATA)
    assert again.sources == splits["val"].sources
    assert splits["val"].targets[0] and splits["val"].sources[0]
    everything = read_tsv_pairs(SHARED_DATA / "anki" / "spa-eng.zip")
    other_seed = anki_split(everything, "val", seed=7)
    assert other_seed.sources != splits["val"].sources
    fr = load_corpus("anki", "test", "en", "fr", data_dir=SHARED_DATA)
    assert len(fr) == round(0.05 * 142787)


@pytest.mark.parametrize(
    "options,message",
    [
        (dict(name="multi30k", split="dev", source="en", target="de"), "split"),
        (dict(name="multi30k", source="en", target="cs"), "languages are"),
        (dict(name="anki", source="es", target="fr"), "anki pairs English"),
        (dict(name="wmt14", source="en", target="fr"), "unknown corpus"),
    ],
)
def test_bad_corpus_options_are_named(options, message):
    options.setdefault("split", "train")
    with pytest.raises(ValueError, match=message):
        load_corpus(data_dir=SHARED_DATA, **options)


def test_missing_file_in_data_dir_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="multi30k/val.en.gz"):
        load_corpus("multi30k", "val", "en", "de", data_dir=tmp_path)

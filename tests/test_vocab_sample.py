"""The vocabulary sample on disk: the same pairs as in memory, read again
on each pass; SentencePiece's character limit; no sample left behind."""

import gzip
import pathlib

import pytest
from conftest import SHARED_DATA, write_lines

from seq2seq_attn.config.run import DataConfig
from seq2seq_attn.data import ParallelText
from seq2seq_attn.data.text_stream import SampleFile
from seq2seq_attn.data.tokenizers import SentencePieceTokenizer
from seq2seq_attn.data.vocabularies import (
    build_vocabularies,
    vocabularies_of_text,
)


@pytest.fixture(scope="module")
def multi30k_lines():
    sides = []
    for lang in ("en", "de"):
        path = SHARED_DATA / "multi30k" / f"train.{lang}.gz"
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            sides.append([next(lines).strip() for _ in range(3000)])
    return sides


def _texts(tmp_path):
    sources = [f"s{i} \u00fc\rx".encode() for i in range(500)]
    targets = [f"t{i}".encode() for i in range(500)]
    files = ParallelText.from_files(
        [
            write_lines(tmp_path / "a.en", sources[:200]),
            write_lines(tmp_path / "b.en.gz", sources[200:]),
        ],
        [
            write_lines(tmp_path / "a.de.gz", targets[:200]),
            write_lines(tmp_path / "b.de", targets[200:]),
        ],
    )
    rows = [s + b"\t" + t for s, t in zip(sources, targets, strict=True)]
    tsv = ParallelText.from_tsv([write_lines(tmp_path / "pairs.tsv", rows)])
    lists = ParallelText.from_lists(
        [s.decode() for s in sources], [t.decode() for t in targets]
    )
    return {"files": files, "tsv": tsv, "lists": lists}


@pytest.mark.parametrize("kind", ["files", "tsv", "lists"])
def test_a_sample_on_disk_holds_the_pairs_of_the_sample_in_memory(
    tmp_path, kind
):
    text = _texts(tmp_path)[kind]
    folder = tmp_path / "sample"
    folder.mkdir()
    in_memory = text.sample(120, seed=7, lines=500)
    on_disk = text.sample(120, seed=7, lines=500, directory=folder)
    assert all(isinstance(side, SampleFile) for side in on_disk)
    assert [len(side) for side in on_disk] == [120, 120]
    assert [list(side) for side in on_disk] == list(in_memory)
    assert in_memory[0][0].endswith(" \u00fc\rx")  # a lone \r stays inside
    # Read again on each pass; [::k] is every k-th, also of a view.
    assert list(on_disk[0]) == in_memory[0]
    assert list(on_disk[1][::7]) == in_memory[1][::7]
    assert len(on_disk[1][::7]) == len(in_memory[1][::7]) == 18
    assert list(on_disk[0][::2][::3]) == in_memory[0][::6]
    with pytest.raises(TypeError, match=r"only \[::k\]"):
        on_disk[0][5]


def test_a_newline_inside_a_text_keeps_the_sides_aligned(tmp_path):
    text = ParallelText.from_lists(["a\nb", "c"], ["x", "y\nz"])
    sources, targets = text.sample(2, directory=tmp_path)
    assert list(sources) == ["a b", "c"] and list(targets) == ["x", "y z"]


def _data(**fields):
    sizes = {"source_vocab_size": 400, "target_vocab_size": 400}
    return DataConfig(tokenizer="sentencepiece", **{**sizes, **fields})


def test_sentencepiece_learns_from_every_kth_sentence_past_the_limit(
    tmp_path, multi30k_lines
):
    characters = [sum(map(len, side)) for side in multi30k_lines]
    limit = max(characters) // 3  # the German side is the longer one
    lines = []
    built = build_vocabularies(
        _data(sentencepiece_max_characters=limit),
        tmp_path / "limited",
        multi30k_lines,
        log=lines.append,
    )
    for side, texts, tokenizer, count in zip(
        ("en", "de"), multi30k_lines, built, characters, strict=True
    ):
        step = -(-count // limit)
        assert step in (3, 4)
        assert f"(1 in {step} of 3,000: {count:,} characters" in "\n".join(
            lines
        )
        alone = SentencePieceTokenizer.build(
            texts[::step], tmp_path / f"every_{side}", vocab_size=400
        )
        assert tokenizer.fingerprint() == alone.fingerprint()
    unlimited = build_vocabularies(
        _data(sentencepiece_max_characters=0),
        tmp_path / "all",
        multi30k_lines,
        log=lines.append,
    )
    everything = SentencePieceTokenizer.build(
        multi30k_lines[0], tmp_path / "everything", vocab_size=400
    )
    assert unlimited[0].fingerprint() == everything.fingerprint()
    assert "from 3,000 sentences: 400 entries" in lines[-1]


def test_the_sample_is_removed_after_building_and_after_a_failure(
    tmp_path, multi30k_lines
):
    paths = [
        write_lines(tmp_path / f"train.{lang}", [t.encode() for t in side])
        for lang, side in zip(("en", "de"), multi30k_lines, strict=True)
    ]
    text = ParallelText.from_files([paths[0]], [paths[1]])
    vocab_dir = tmp_path / "vocab"
    stale = vocab_dir / ".sample-left-by-a-killed-run"
    stale.mkdir(parents=True)
    (stale / "source.txt").write_text("old\n")
    data = _data(joint_vocab=True)
    source, target = vocabularies_of_text(
        data, text, 3000, vocab_dir, log=lambda line: None
    )
    assert source.fingerprint() == target.fingerprint()
    assert sorted(p.name for p in vocab_dir.iterdir()) == ["source", "target"]
    too_many = tmp_path / "too_many"
    with pytest.raises(ValueError, match="lower the vocabulary size"):
        vocabularies_of_text(
            _data(source_vocab_size=90_000, target_vocab_size=90_000),
            text,
            3000,
            too_many,
            log=lambda line: None,
        )
    assert not pathlib.Path(too_many).exists()

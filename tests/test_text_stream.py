"""Training text as a stream: the pre-pass, the sample, the `tf.data`
stream of pairs, workers' shares, and bounded iterator checkpoints."""

import dataclasses
import gzip
import pathlib

import commands
import pytest
import tensorflow as tf
from conftest import SHARED_DATA, sacrebleu_cache, write_lines

from seq2seq_attn.cli.train import run_config_from_flagfile
from seq2seq_attn.config.run import DataConfig
from seq2seq_attn.data import (
    EOS_ID,
    ParallelText,
    encode_corpus,
    load_corpus,
    read_parallel_files,
)
from seq2seq_attn.data.sources import validation_corpus
from seq2seq_attn.data.training_data import training_data

CONFIGS = pathlib.Path(__file__).resolve().parents[1] / "configs"


def _pairs(dataset):
    return [(s.decode(), t.decode()) for s, t in dataset.as_numpy_iterator()]


def test_several_files_per_side_plain_and_gzip_in_order(tmp_path):
    text = ParallelText.from_files(
        [
            write_lines(tmp_path / "a.en.gz", [b"one", b"two"]),
            write_lines(tmp_path / "b.en", [b" three ", b"four"], b"\r\n"),
        ],
        [
            write_lines(tmp_path / "a.de.gz", [b"eins", b"zwei"]),
            write_lines(tmp_path / "b.de", [b"drei", b"vier"]),
        ],
    )
    scan = text.scan()
    assert scan.pairs == 4 and len(scan.files) == 4
    assert "a.en.gz + a.de.gz + b.en + b.de: 4 pairs" in scan.summary()
    expected = [("one", "eins"), ("two", "zwei"), ("three", "drei")]
    expected.append(("four", "vier"))
    assert _pairs(text.dataset()) == expected
    shares = [_pairs(text.dataset(num_shards=2, shard_index=i)) for i in (0, 1)]
    assert shares == [expected[0::2], expected[1::2]]


def test_prepass_names_mismatched_files_and_invalid_lines(tmp_path):
    source = write_lines(
        tmp_path / "s.en", [b"good", b"bad \xff\xfe here", b"ok"]
    )
    target = write_lines(tmp_path / "t.de", [b"gut", b"schlecht", b"gut"])
    short = write_lines(tmp_path / "short.de", [b"gut", b"schlecht"])
    with pytest.raises(ValueError) as error:
        ParallelText.from_files([source], [short]).scan()
    assert "s.en has 3 lines, " in str(error.value)
    assert "short.de has 2" in str(error.value)
    text = ParallelText.from_files([source], [target])
    with pytest.raises(ValueError, match=r"s\.en:2: invalid UTF-8 at byte 4"):
        text.scan("error")
    scan = text.scan("skip")
    assert scan.invalid_lines == 1 and "their pairs skipped" in scan.summary(
        "skip"
    )
    assert _pairs(text.dataset("skip")) == [("good", "gut"), ("ok", "gut")]
    replaced = _pairs(text.dataset("replace"))
    assert replaced[1] == ("bad \ufffd\ufffd here", "schlecht")
    with pytest.raises(FileNotFoundError, match="missing.de"):
        ParallelText.from_files([source], [tmp_path / "missing.de"]).scan()


def test_tsv_columns_and_a_short_line(tmp_path):
    path = write_lines(
        tmp_path / "pairs.tsv.gz",
        [b"Hi.\tHola.\tCC-BY", b"Bye.\tAdi\xc3\xb3s.\r"],
    )
    text = ParallelText.from_tsv([path], source_column=1, target_column=0)
    assert text.scan().pairs == 2
    assert _pairs(text.dataset()) == [("Hola.", "Hi."), ("Adiós.", "Bye.")]
    assert text.sample(5, seed=1) == (["Hola.", "Adiós."], ["Hi.", "Bye."])
    bad = write_lines(tmp_path / "bad.tsv", [b"Hi.\tHola.", b"Bye."])
    with pytest.raises(ValueError, match=r"bad\.tsv:2: expected at least 2"):
        ParallelText.from_tsv([bad]).scan()


def _read_pairs(corpus):
    return list(zip(corpus.sources, corpus.targets, strict=True))


def test_read_keeps_what_the_stream_gives_and_counts_what_it_drops(tmp_path):
    # The in-memory reader (validation, evaluate, the public readers) and
    # the training stream read the same pairs; `read` also drops the pairs
    # with an empty side (the stream drops them after tokenizing) and
    # counts each thing it dropped or replaced.
    text = ParallelText.from_files(
        [
            write_lines(tmp_path / "a.en.gz", [b" one ", b"", b"t\xffwo"]),
            write_lines(tmp_path / "b.en", [b"three", b"four"], b"\r\n"),
        ],
        [
            write_lines(tmp_path / "a.de.gz", [b"eins", b"null", b"zwei"]),
            write_lines(tmp_path / "b.de", [b"drei", b" \t "]),
        ],
    )
    for policy, dropped in (("replace", 0), ("skip", 1)):
        corpus = text.read(policy)
        streamed = [pair for pair in _pairs(text.dataset(policy)) if all(pair)]
        assert _read_pairs(corpus) == streamed
        report = corpus.report
        assert (report.read, report.empty, report.invalid_utf8) == (
            5,
            2,
            dropped,
        )
        assert report.replaced_utf8 == 1 - dropped
        assert report.source == "a.en.gz + a.de.gz + b.en + b.de"
    assert text.read("replace").sources[1] == "t\ufffdwo"
    # "error" names the first bad line in pair order, as the stream's
    # pre-pass names it.
    flipped = ParallelText.from_files(
        [write_lines(tmp_path / "s.en", [b"ok", b"ok", b"b\xffd"])],
        [write_lines(tmp_path / "t.de", [b"ok", b"b\xfed", b"ok"])],
    )
    with pytest.raises(ValueError, match=r"t\.de:2: invalid UTF-8 at byte 1"):
        flipped.read()
    tsv = write_lines(
        tmp_path / "p.tsv", [b"Hi.\tHola.", b"Bye.\tAdi\xc3\xb3s."]
    )
    tsv_text = ParallelText.from_tsv([tsv], source_column=1, target_column=0)
    corpus = tsv_text.read()
    assert _read_pairs(corpus) == _pairs(tsv_text.dataset())
    in_memory = ParallelText.from_lists([" a ", "b", ""], ["x", " ", "z"])
    assert in_memory.read().sources == ["a"]
    assert in_memory.read().report.empty == 2


def test_the_sample_is_seeded_and_spread_over_every_file(tmp_path):
    sources = [f"s{i}".encode() for i in range(3000)]
    targets = [f"t{i}".encode() for i in range(3000)]
    text = ParallelText.from_files(
        [
            write_lines(tmp_path / "1.en", sources[:1000]),
            write_lines(tmp_path / "2.en.gz", sources[1000:]),
        ],
        [
            write_lines(tmp_path / "1.de.gz", targets[:1000]),
            write_lines(tmp_path / "2.de", targets[1000:]),
        ],
    )
    picked_sources, picked_targets = text.sample(300, seed=3)
    assert len(set(picked_sources)) == 300
    assert [s[1:] for s in picked_sources] == [t[1:] for t in picked_targets]
    numbers = sorted(int(s[1:]) for s in picked_sources)
    assert numbers[0] < 100 and numbers[-1] > 2900
    assert sum(n < 1000 for n in numbers) in range(60, 140)
    assert text.sample(300, seed=3) == (picked_sources, picked_targets)
    assert text.sample(300, seed=4) != (picked_sources, picked_targets)
    everything = text.sample(10_000, seed=0)
    assert everything[0] == [s.decode() for s in sources]


def _file_config(files, **options):
    fields = dict(
        corpus=None,
        train_source_file=str(files[0]),
        train_target_file=str(files[1]),
        tokenizer="word",
        source_vocab_size=400,
        target_vocab_size=400,
        max_source_length=20,
        max_target_length=20,
        batch_size=16,
        sort_window=4,
    )
    return DataConfig(**{**fields, **options})


def _multi30k_files(directory, count):
    files = []
    for language in ("en", "de"):
        source = SHARED_DATA / f"multi30k/tok/train.lc.norm.tok.{language}.gz"
        with gzip.open(source, "rt") as stream:
            lines = [next(stream) for _ in range(count)]
        path = directory / f"train.{language}"
        path.write_text("".join(lines))
        files.append(path)
    return files


def _id_pairs(batches, count):
    """The first `count` (source, target) id tuples of padded batches, as
    plain ints."""
    found = []
    for (source, _), target in batches:
        for row_source, row_target in zip(
            source.numpy(), target.numpy(), strict=True
        ):
            found.append(
                (
                    tuple(int(i) for i in row_source if i),
                    tuple(int(i) for i in row_target if i),
                )
            )
        if len(found) >= count:
            return found
    return found


def test_two_workers_train_on_disjoint_shares_with_the_chiefs_vocabulary(
    tmp_path,
):
    files = _multi30k_files(tmp_path, 300)
    # Batches of 16 per worker, in the order the pairs come (no windows).
    config = _file_config(files, batch_size=32, sort_window=1)
    chief = training_data(
        config,
        tmp_path / "vocab",
        tmp_path / "epoch.json",
        num_workers=2,
        worker_index=0,
        log=lambda line: None,
    )
    logged = []
    worker = training_data(
        config,
        tmp_path / "vocab",
        tmp_path / "epoch.json",
        num_workers=2,
        worker_index=1,
        log=logged.append,
    )
    assert not any("built" in line for line in logged)
    assert chief.steps_per_epoch == worker.steps_per_epoch
    assert chief.source_tokenizer.fingerprint() == (
        worker.source_tokenizer.fingerprint()
    )
    # What each worker should see: lines i, i + 2, ... that pass the filter.
    everything = read_parallel_files(*files)
    seen = []
    for index, prepared in enumerate((chief, worker)):
        share = everything.subset(range(index, len(everything), 2))
        encoded = encode_corpus(
            share, prepared.source_tokenizer, prepared.target_tokenizer, 20, 20
        )
        expected = set(
            (tuple(s), tuple(t) + (EOS_ID,))
            for s, t in zip(
                encoded.source_ids.numpy(),
                encoded.target_ids.numpy(),
                strict=True,
            )
        )
        # The batches that hold the first pass over the share (the last one
        # runs on into the second pass, of the same share).
        got = _id_pairs(prepared.train, len(expected))
        assert set(got) == set(expected)
        seen.append(set(got))
    assert not seen[0] & seen[1]


def _iterator_checkpoint_bytes(directory, data, steps=3):
    iterator = iter(data.train)
    for _ in range(steps):
        next(iterator)
    prefix = tf.train.Checkpoint(iterator=iterator).write(str(directory / "c"))
    return sum(
        path.stat().st_size for path in directory.glob("c*") if path.is_file()
    ), prefix


def test_checkpointed_iterator_is_bounded_by_the_buffer_and_resumes_exactly(
    tmp_path,
):
    def prepared(directory, count=None):
        if count is not None:
            directory.mkdir()
            _multi30k_files(directory, count)
        files = [directory / "train.en", directory / "train.de"]
        return training_data(
            _file_config(files, shuffle_buffer=200),
            directory / "vocab",
            directory / "epoch.json",
            seed=5,
            log=lambda line: None,
        )

    sizes = {}
    for count in (2000, 20000):
        data = prepared(tmp_path / str(count), count)
        sizes[count], prefix = _iterator_checkpoint_bytes(
            tmp_path / str(count), data
        )
    assert sizes[20000] < 1.2 * sizes[2000], sizes
    # Restored into the pipeline of a new call (as a resumed run builds it),
    # the iterator gives the batches an uninterrupted one gives after the
    # same steps, past the end of the pass over the files.
    small = tmp_path / "2000"
    _, prefix = _iterator_checkpoint_bytes(small, prepared(small), steps=5)
    uninterrupted = iter(prepared(small).train)
    for _ in range(5):
        next(uninterrupted)
    data = prepared(small)
    restored = iter(data.train)
    tf.train.Checkpoint(iterator=restored).read(prefix).assert_consumed()
    for _ in range(data.steps_per_epoch + 10):
        (a, b), c = next(uninterrupted)
        (x, y), z = next(restored)
        for left, right in ((a, x), (b, y), (c, z)):
            assert left.numpy().tolist() == right.numpy().tolist()


def test_build_vocab_samples_and_train_uses_it_on_tsv_pairs(tmp_path):
    import os
    import sys

    english, german = _multi30k_files(tmp_path, 400)
    pairs = tmp_path / "pairs.tsv.gz"
    with gzip.open(pairs, "wt") as stream:
        for source, target in zip(
            english.read_text().splitlines(),
            german.read_text().splitlines(),
            strict=True,
        ):
            stream.write(f"{source}\t{target}\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    built = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.build_vocab",
            f"--tsv_file={pairs}",
            "--tokenizer=word",
            "--vocab_size=300",
            "--sample_lines=100",
            f"--output_dir={tmp_path / 'vocab'}",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "pairs.tsv.gz: 400 pairs" in built.stdout
    assert "sampled 100 of 400 pairs" in built.stdout
    model_dir = tmp_path / "model"
    trained = commands.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.train",
            f"--model_dir={model_dir}",
            "--corpus=",
            f"--train_tsv_file={pairs}",
            f"--vocab_dir={tmp_path / 'vocab'}",
            "--tokenizer=word",
            "--architecture=luong",
            "--num_layers=1",
            "--embedding_dim=8",
            "--hidden_units=8",
            "--batch_size=32",
            "--max_steps=1",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert trained.returncode == 0, trained.stderr[-2000:]
    assert "copied the vocabularies" in trained.stdout
    assert "built the" not in trained.stdout
    for side in ("source", "target"):
        for name in ("tokenizer.json", "vocab.txt"):
            ours = (model_dir / "vocab" / side / name).read_bytes()
            assert ours == (tmp_path / "vocab" / side / name).read_bytes()
    config = (model_dir / "config.json").read_text()
    assert '"source_vocab_size": 300' in config


def test_max_train_pairs_takes_every_kth_pair(tmp_path):
    files = _multi30k_files(tmp_path, 300)
    config = _file_config(
        files, batch_size=16, sort_window=1, max_train_pairs=100
    )
    logged = []
    data = training_data(
        config,
        tmp_path / "vocab",
        tmp_path / "epoch.json",
        log=logged.append,
    )
    assert any("every 3th pair" in line for line in logged), logged
    every_third = read_parallel_files(*files).subset(range(0, 300, 3))
    encoded = encode_corpus(
        every_third, data.source_tokenizer, data.target_tokenizer, 20, 20
    )
    expected = {tuple(ids) for ids in encoded.source_ids.numpy()}
    got = {source for source, _ in _id_pairs(data.train, len(expected))}
    assert got == expected


def test_luongs_recipe_trains_on_a_tfds_dataset_in_its_direction(tmp_path):
    # configs/luong/: WMT'14 de-en through TFDS, English -> German, words
    # split at punctuation; raw Multi30k pairs stand in for WMT's.
    tfds = pytest.importorskip("tensorflow_datasets")
    pairs = load_corpus("multi30k", "train", "en", "de", data_dir=SHARED_DATA)
    splits = {"train": pairs.subset(range(300))}
    splits["validation"] = pairs.subset(range(300, 320))

    def as_dataset(self, split, **options):
        # TFDS's WMT examples: {"de": ..., "en": ...}.
        corpus = splits[split]
        return tf.data.Dataset.from_tensor_slices(
            {"de": corpus.targets, "en": corpus.sources}
        )

    recipe = run_config_from_flagfile(CONFIGS / "luong" / "base.flags").data
    config = dataclasses.replace(
        recipe,
        source_vocab_size=400,
        target_vocab_size=400,
        batch_size=16,
        data_dir=str(tmp_path / "tfds"),
    )
    logged = []
    with tfds.testing.mock_data(as_dataset_fn=as_dataset):
        data = training_data(
            config,
            tmp_path / "vocab",
            tmp_path / "epoch.json",
            log=logged.append,
        )
        (source, _), target = next(iter(data.train))
    assert "wmt14_translate/de-en train: 300 pairs" in logged[0]
    assert any("(counted; " in line for line in logged)
    source_words = (tmp_path / "vocab/source/vocab.txt").read_text().split()
    target_words = (tmp_path / "vocab/target/vocab.txt").read_text().split()
    assert "man" in source_words and "man" not in target_words
    assert "Mann" in target_words and "Mann" not in source_words
    assert "." in target_words and "Mann." not in target_words
    assert source.shape[0] == target.shape[0] == 16
    assert data.validation.sources == splits["validation"].sources
    assert data.validation.targets == splits["validation"].targets
    report = data.validation.report  # read as files are (`read`)
    assert report.read == report.kept == 20
    assert report.source == "wmt14_translate/de-en validation"
    assert data.identity["tfds"] == "wmt14_translate/de-en"
    assert (data.identity["source"], data.identity["target"]) == ("en", "de")
    bad = dataclasses.replace(config, source="fr")
    with tfds.testing.mock_data(as_dataset_fn=as_dataset):
        with pytest.raises(ValueError, match="has no language 'fr'"):
            training_data(bad, tmp_path / "v2", tmp_path / "e2.json")


def test_bahdanaus_recipe_validates_on_newstest2012_and_2013(
    tmp_path, monkeypatch
):
    # configs/bahdanau/ (Sec. 4.1): both test sets, one after the other,
    # from sacreBLEU's registry (written where it keeps its downloads).
    from sacrebleu.dataset import DATASETS

    val = load_corpus("multi30k", "val", "en", "fr", data_dir=SHARED_DATA)
    for name, lines in (("wmt12", range(0, 5)), ("wmt13", range(5, 12))):
        part = val.subset(lines)
        outdir = sacrebleu_cache(
            tmp_path, name, "en-fr", part.sources, part.targets
        )
        monkeypatch.setattr(DATASETS[name], "_outdir", str(outdir))
    recipe = run_config_from_flagfile(
        CONFIGS / "bahdanau" / "rnnsearch50.flags"
    )
    corpus = validation_corpus(recipe.data)
    assert corpus.sources == val.sources[:12]
    assert corpus.targets == val.targets[:12]
    assert corpus.report.read == corpus.report.kept == 12
    assert "wmt12.en-fr.src" in corpus.report.source

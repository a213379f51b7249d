import collections

import numpy as np
import pytest
from conftest import SHARED_DATA

from seq2seq_attn.data import (
    BOS_ID,
    EOS_ID,
    WordTokenizer,
    encode_corpus,
    load_corpus,
    make_dataset,
    padding_fraction,
)


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    directory = tmp_path_factory.mktemp("vocab")
    train = load_corpus(
        "multi30k", "train", "en", "de", variant="tok", data_dir=SHARED_DATA
    )
    val = load_corpus(
        "multi30k", "val", "en", "de", variant="tok", data_dir=SHARED_DATA
    )
    source = WordTokenizer.build(train.sources, directory / "en", max_size=8000)
    target = WordTokenizer.build(train.targets, directory / "de", max_size=8000)
    return val, encode_corpus(val, source, target, 20, 20), source, target


def _rows(dataset):
    rows = []
    for (source, target_input), target_output in dataset:
        for s, ti, to in zip(
            source.numpy(),
            target_input.numpy(),
            target_output.numpy(),
            strict=True,
        ):
            rows.append(
                (tuple(s[s != 0]), tuple(ti[ti != 0]), tuple(to[to != 0]))
            )
    return rows


def test_length_filter_counts_what_it_drops(encoded):
    val, result, _, _ = encoded
    source_lengths = np.array([len(s.split()) for s in val.sources])
    target_lengths = np.array([len(t.split()) for t in val.targets])
    too_long = int(((source_lengths > 20) | (target_lengths > 20)).sum())
    assert too_long > 0
    assert result.report.too_long == too_long
    assert result.report.kept == len(result) == len(val) - too_long
    assert f"{too_long} longer than 20/20" in result.report.summary()


@pytest.mark.parametrize(
    "options",
    [
        dict(sort_window=1),
        dict(sort_window=20, batch_size=16),
        dict(batch_by="tokens", batch_size=400),
        dict(bucket_boundaries=[6, 10, 14]),
        dict(bucket_boundaries=[6, 10, 14, 30], pad_to_bucket_boundary=True),
    ],
)
def test_every_pair_once_per_epoch_with_specials(encoded, options):
    _, result, _, _ = encoded
    dataset = make_dataset(result, seed=5, **options)
    rows = _rows(dataset)
    expected = [
        (tuple(s), (BOS_ID, *t), (*t, EOS_ID))
        for s, t in zip(
            result.source_ids.to_list(),
            result.target_ids.to_list(),
            strict=True,
        )
    ]
    assert collections.Counter(rows) == collections.Counter(expected)
    for (source, target_input), target_output in dataset.take(3):
        assert source.dtype == target_input.dtype == "int32"
        assert target_input.shape == target_output.shape
        assert np.all(target_input.numpy()[:, 0] == BOS_ID)


def test_padding_to_the_bucket_boundary_gives_few_shapes(encoded):
    _, result, _, _ = encoded
    dataset = make_dataset(
        result, bucket_boundaries=[6, 10, 14, 30], pad_to_bucket_boundary=True
    )
    shapes = {
        (source.shape[1], target_input.shape[1])
        for (source, target_input), _ in dataset
    }
    # Both sides padded to the bucket's longest length (boundary - 1).
    assert shapes <= {(5, 5), (9, 9), (13, 13), (29, 29)}
    assert len(shapes) >= 2


def test_token_batches_respect_the_budget(encoded):
    _, result, _, _ = encoded
    for (source, target_input), _ in make_dataset(
        result, batch_by="tokens", batch_size=300
    ):
        longest = max(source.shape[1], target_input.shape[1])
        assert source.shape[0] * longest <= 300 or source.shape[0] == 1


def test_sorting_reduces_padding(encoded):
    _, result, _, _ = encoded
    unsorted = padding_fraction(
        make_dataset(result, batch_size=16, sort_window=1)
    )
    window = padding_fraction(
        make_dataset(result, batch_size=16, sort_window=20)
    )
    print(
        f"padding: unsorted {unsorted:.3f}, "
        f"sorted in windows of 20 {window:.3f}"
    )
    assert window < unsorted / 2


def test_same_seed_same_batches(encoded):
    _, result, _, _ = encoded

    def first_batches(seed):
        return [
            x[0].numpy() for (x, _) in make_dataset(result, seed=seed).take(3)
        ]

    a, b, c = first_batches(1), first_batches(1), first_batches(2)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(
        x.shape == z.shape and np.array_equal(x, z)
        for x, z in zip(a, c, strict=True)
    )


def test_bad_batching_options(encoded):
    _, result, _, _ = encoded
    with pytest.raises(ValueError, match="batch_by must be one of"):
        make_dataset(result, batch_by="words")
    with pytest.raises(ValueError, match="at least 1"):
        make_dataset(result, batch_size=0)

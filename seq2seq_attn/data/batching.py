"""From sentence pairs to padded, length-sorted `tf.data` batches.

`batch_pairs` turns a stream of id pairs (from `data.training_data`, which
tokenizes and filters files as they are read) into a `tf.data.Dataset` of
`((source_ids, target_input_ids), target_output_ids)`, padded with 0:

    source_ids        x_1 .. x_Tx
    target_input_ids  <s> y_1 .. y_Ty
    target_output_ids y_1 .. y_Ty </s>

Padding is kept small by Bahdanau's B.2 recipe (take `sort_window`
minibatches' worth of pairs, sort them by length, cut them into minibatches)
or by bucketing by length; batches hold a number of sentences or about a
number of tokens. Shuffling is seeded, so a seed gives the same batches.

`encode_corpus` and `make_dataset` do the same for a small corpus held in
memory (the notebooks, validation), with a filter that counts what it drops.
"""

import dataclasses

import tensorflow as tf

from seq2seq_attn.data.text_to_ids import (
    sentence_ids,
    sentence_ids_in_chunks,
    teacher_forcing,
)
from seq2seq_attn.special_tokens import PAD_ID

BATCH_BY = ("sentences", "tokens")
TOKENIZE_CHUNK = 256


@dataclasses.dataclass
class FilterReport:
    """What the length filter removed.

    Attributes:
        pairs: pairs tokenized.
        kept: pairs kept.
        too_long: pairs with a side over its maximum length.
        empty: pairs with a side that tokenized to nothing.
        max_source_length, max_target_length: the limits used (None: none).
    """

    pairs: int = 0
    kept: int = 0
    too_long: int = 0
    empty: int = 0
    max_source_length: int | None = None
    max_target_length: int | None = None

    def summary(self):
        """One line for logs."""
        return (
            f"{self.pairs} pairs tokenized, {self.kept} kept, {self.too_long} "
            f"longer than {self.max_source_length}/{self.max_target_length} "
            f"tokens filtered, {self.empty} empty after tokenization"
        )


@dataclasses.dataclass
class EncodedCorpus:
    """Token ids of the pairs that passed the filter (int32 ragged)."""

    source_ids: tf.RaggedTensor
    target_ids: tf.RaggedTensor
    report: FilterReport

    def __len__(self):
        return int(self.source_ids.nrows())


def encode_corpus(
    corpus,
    source_tokenizer,
    target_tokenizer,
    max_source_length=50,
    max_target_length=50,
):
    """Tokenizes both sides and drops pairs that are too long or empty.

    Args:
        corpus: a `ParallelCorpus`.
        source_tokenizer, target_tokenizer: from `data.tokenizers`.
        max_source_length, max_target_length: the most tokens a side may
            have (the papers filter at 30 or 50 words); None for no limit.
            The target's <s> and </s> are not counted.

    Returns:
        An `EncodedCorpus` whose `report` counts what was filtered.
    """
    source = sentence_ids_in_chunks(source_tokenizer, corpus.sources)
    target = sentence_ids_in_chunks(target_tokenizer, corpus.targets)
    source_lengths = source.row_lengths()
    target_lengths = target.row_lengths()
    keep = keep_pair(
        source_lengths, target_lengths, max_source_length, max_target_length
    ).numpy()
    empty = ((source_lengths == 0) | (target_lengths == 0)).numpy()
    report = FilterReport(
        pairs=len(keep),
        kept=int(keep.sum()),
        too_long=int((~keep & ~empty).sum()),
        empty=int(empty.sum()),
        max_source_length=max_source_length,
        max_target_length=max_target_length,
    )
    mask = tf.constant(keep)
    return EncodedCorpus(
        tf.ragged.boolean_mask(source, mask),
        tf.ragged.boolean_mask(target, mask),
        report,
    )


def keep_pair(
    source_length, target_length, max_source_length, max_target_length
):
    """Whether a pair (or each pair, elementwise) passes the length filter:
    neither side empty, neither over its maximum (None or 0: no limit)."""
    keep = (source_length > 0) & (target_length > 0)
    if max_source_length:
        keep &= source_length <= max_source_length
    if max_target_length:
        keep &= target_length <= max_target_length
    return keep


def tokenized_pairs(
    text_pairs,
    source_tokenizer,
    target_tokenizer,
    max_source_length=None,
    max_target_length=None,
):
    """A dataset of `(source_ids, target_ids)` (int32 [T]) from one of
    `(source, target)` strings: tokenized `TOKENIZE_CHUNK` pairs at a time
    in a parallel, order-keeping `map`, then filtered by `keep_pair`."""

    def tokenize(sources, targets):
        return (
            sentence_ids(source_tokenizer, sources),
            sentence_ids(target_tokenizer, targets),
        )

    def keep(source, target):
        return keep_pair(
            tf.size(source),
            tf.size(target),
            max_source_length,
            max_target_length,
        )

    return (
        text_pairs.batch(TOKENIZE_CHUNK)
        .map(
            tokenize,
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        .unbatch()
        .filter(keep)
    )


def _add_specials(source, target):
    return source, *teacher_forcing(target)


def _to_model_inputs(source, target_input, target_output):
    return (source, target_input), target_output


def _pair_length(source, target_input, target_output):
    return tf.maximum(tf.shape(source)[0], tf.shape(target_output)[0])


def _sort_window(source, target_input, target_output):
    """Sorts a ragged window of pairs by (source length, target length)."""
    source_lengths = tf.cast(source.row_lengths(), tf.int64)
    target_lengths = tf.cast(target_output.row_lengths(), tf.int64)
    key = source_lengths * 100000 + target_lengths
    order = tf.argsort(key, stable=True)
    return (
        tf.gather(source, order),
        tf.gather(target_input, order),
        tf.gather(target_output, order),
    )


def _dense_rows(*rows):
    """Unbatched rows of a ragged window, as plain tensors."""
    return tuple(
        row if isinstance(row, tf.Tensor) else row.to_tensor() for row in rows
    )


def longest_pair(encoded):
    """The longest pair of an `EncodedCorpus` as batched: the source, or the
    target with its </s> (or <s>)."""
    return int(
        max(
            tf.reduce_max(encoded.source_ids.row_lengths()),
            tf.reduce_max(encoded.target_ids.row_lengths()) + 1,
        )
    )


def bucket_boundaries_for(max_length, width=2):
    """Length boundaries every `width` tokens up to `max_length` + 1."""
    return list(range(width + 1, max_length + 2, width))


def make_dataset(
    encoded,
    batch_size=80,
    batch_by="sentences",
    sort_window=20,
    bucket_boundaries=None,
    shuffle=True,
    seed=0,
    drop_remainder=False,
    pad_to_bucket_boundary=False,
):
    """The batched `tf.data.Dataset` of an `EncodedCorpus` held in memory
    (every pair shuffled each epoch); `batch_pairs` does the batching.

    Args:
        encoded: from `encode_corpus`.
        bucket_boundaries: as in `batch_pairs`; token batching buckets by
            default, every 2 tokens up to the longest pair.
        shuffle: shuffle the pairs (and the batches of a window) each epoch.
        Others: as in `batch_pairs`.
    """
    pairs = tf.data.Dataset.from_tensor_slices(
        (encoded.source_ids, encoded.target_ids)
    )
    if shuffle:
        pairs = pairs.shuffle(
            len(encoded), seed=seed, reshuffle_each_iteration=True
        )
    if batch_by == "tokens" and bucket_boundaries is None:
        bucket_boundaries = bucket_boundaries_for(longest_pair(encoded))
    return batch_pairs(
        pairs,
        batch_size=batch_size,
        batch_by=batch_by,
        sort_window=sort_window,
        bucket_boundaries=bucket_boundaries,
        shuffle=shuffle,
        seed=seed,
        drop_remainder=drop_remainder,
        pad_to_bucket_boundary=pad_to_bucket_boundary,
    )


def batch_pairs(
    pairs,
    batch_size=80,
    batch_by="sentences",
    sort_window=20,
    bucket_boundaries=None,
    shuffle=True,
    seed=0,
    drop_remainder=False,
    pad_to_bucket_boundary=False,
):
    """Padded batches of a dataset of id pairs, in the order they come.

    Args:
        pairs: a `tf.data.Dataset` of `(source_ids, target_ids)`, int32 [T].
        batch_size: sentences per batch, or with `batch_by="tokens"` the most
            padded tokens (of the longer side) per batch.
        batch_by: "sentences" or "tokens".
        sort_window: with `batch_by="sentences"` and no buckets: sort this
            many batches' worth of pairs by length before cutting them into
            batches (Bahdanau B.2 uses 20 batches of 80); 1 turns sorting off.
        bucket_boundaries: length boundaries for bucketing instead (token
            batching needs them; see `bucket_boundaries_for`).
        shuffle: shuffle the batches of a window (or recent buckets).
        seed: the shuffling seed; the same seed gives the same batches.
        drop_remainder: drop a last, smaller batch.
        pad_to_bucket_boundary: with buckets, pad both sides of a batch to
            its bucket's longest length, so that batches come in a few
            shapes only (what XLA compiles once each); every length must be
            below the last boundary.

    Returns:
        A dataset of `((source_ids, target_input_ids), target_output_ids)`,
        int32, padded with 0, prefetched.
    """
    if batch_by not in BATCH_BY:
        raise ValueError(
            f"batch_by must be one of {BATCH_BY}, got {batch_by!r}"
        )
    if batch_size < 1 or sort_window < 1:
        raise ValueError("batch_size and sort_window must be at least 1")
    if batch_by == "tokens" and bucket_boundaries is None:
        raise ValueError("batch_by='tokens' needs bucket_boundaries")
    dataset = pairs.map(_add_specials)
    if bucket_boundaries is not None:
        dataset = _bucketed(
            dataset,
            sorted(bucket_boundaries),
            batch_size,
            batch_by,
            drop_remainder,
            pad_to_bucket_boundary,
        )
        if shuffle:
            dataset = dataset.shuffle(64, seed=seed + 1)
    else:
        dataset = _sorted_windows(
            dataset, batch_size, sort_window, drop_remainder
        )
        if shuffle and sort_window > 1:
            dataset = dataset.shuffle(sort_window, seed=seed + 1)
    options = tf.data.Options()
    options.deterministic = True
    return (
        dataset.map(_to_model_inputs)
        .with_options(options)
        .prefetch(tf.data.AUTOTUNE)
    )


def _sorted_windows(dataset, batch_size, sort_window, drop_remainder):
    """Bahdanau B.2: `sort_window` batches' worth of pairs sorted by length,
    then cut into padded batches of `batch_size`."""
    if sort_window > 1:
        dataset = (
            dataset.ragged_batch(sort_window * batch_size)
            .map(_sort_window)
            .unbatch()
            .map(_dense_rows)
        )
    return dataset.padded_batch(batch_size, drop_remainder=drop_remainder)


def _bucketed(
    dataset,
    boundaries,
    batch_size,
    batch_by,
    drop_remainder,
    pad_to_bucket_boundary,
):
    """Batches of pairs of similar length, by buckets: `batch_size`
    sentences each, or with `batch_by="tokens"` about that many tokens."""
    if batch_by == "tokens":
        upper = boundaries + [boundaries[-1] * 2]
        sizes = [max(1, batch_size // (bound - 1)) for bound in upper]
    else:
        sizes = [batch_size] * (len(boundaries) + 1)
    return dataset.bucket_by_sequence_length(
        _pair_length,
        boundaries,
        sizes,
        drop_remainder=drop_remainder,
        pad_to_bucket_boundary=pad_to_bucket_boundary,
    )


def padding_fraction(dataset):
    """Share of padded positions over both sides of every batch of an epoch."""
    padded = total = 0
    for (source, target_input), _ in dataset:
        for ids in (source, target_input):
            total += int(tf.size(ids))
            padded += int(
                tf.reduce_sum(tf.cast(tf.equal(ids, PAD_ID), tf.int32))
            )
    return padded / max(total, 1)

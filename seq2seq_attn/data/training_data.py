"""From a `DataConfig` to what the trainer reads: tokenizers, the training
batches as a stream, the epoch length, and the validation text.

    data = training_data(config, vocab_dir, epoch_file, seed=1234)
    data.train             # repeated batches, read from the files as needed
    data.steps_per_epoch   # from the pre-pass's pair count (see below)

The training pairs flow from the files through `tf.data`:

    lines of each side (TextLineDataset, plain or gzip)
      -> this worker's share (`shard`, before anything else)
      -> a bounded shuffle buffer (`shuffle_buffer` pairs of text), each
         pass over the files in a new order, without end
      -> tokenized a chunk at a time in a parallel `map` (the tokenizers'
         graph ops, as in translate and the export)
      -> the length filter (`keep_pair`)
      -> Bahdanau's sorted windows, or buckets (`batch_pairs`)

so that memory, and the checkpointed iterator, are bounded by the buffer
and the window, not by the corpus. Nothing tokenizes the whole corpus
before the first step: a pre-pass counts the lines (at disk speed), and a
seeded sample spread over the whole corpus builds the vocabularies
(`vocabularies`) and estimates the epoch length (`epoch_plan`), which the
chief writes for the other workers (`chief`). Where the text comes from,
and the validation pairs: `sources`.
"""

import dataclasses
import pathlib
import time

import tensorflow as tf

from seq2seq_attn.data.batching import (
    batch_pairs,
    bucket_boundaries_for,
    encode_corpus,
    make_dataset,
    tokenized_pairs,
)
from seq2seq_attn.data.chief import prepare_as_chief, tokenizers_of_chief
from seq2seq_attn.data.epoch_plan import read_epoch, training_stride
from seq2seq_attn.data.sources import (
    data_identity,
    parallel_text,
    validation_corpus,
)

LONGEST_BUCKET = 1022


@dataclasses.dataclass
class TrainingData:
    """What `training_data` returns.

    Attributes:
        source_tokenizer, target_tokenizer: the run's tokenizers.
        train: this worker's training batches, repeated without end:
            `((source_ids, target_input_ids), target_output_ids)`.
        steps_per_epoch: steps that make an epoch (the same on every worker).
        identity: what the training data is (corpus, or file sha256s).
        validation: the validation `ParallelCorpus` (None without one).
        validation_batches: its batches, in order (None without one).
    """

    source_tokenizer: object
    target_tokenizer: object
    train: tf.data.Dataset
    steps_per_epoch: int
    identity: dict
    validation: object = None
    validation_batches: tf.data.Dataset | None = None


def training_data(
    data,
    vocab_dir,
    epoch_file,
    seed=0,
    pad_to_bucket_boundary=False,
    num_workers=1,
    worker_index=0,
    log=print,
):
    """The tokenizers, training stream and validation text of `data`.

    Args:
        data: a `DataConfig`.
        vocab_dir: where the tokenizers are (`source/`, `target/`), or are
            built by the chief from a sample if missing.
        epoch_file: a JSON file with the epoch length, written by the chief
            the first time and read afterwards (also on resume, so that an
            epoch keeps its length).
        seed: the shuffling seed.
        pad_to_bucket_boundary: pad batches to their bucket (for XLA).
        num_workers, worker_index: this worker's share of the pairs.
        log: where progress lines go.

    Returns:
        A `TrainingData`.

    Raises:
        ValueError: on files whose sides differ in lines, invalid UTF-8
            (with `invalid_utf8="error"`), an empty corpus, or a filter that
            keeps nothing; each message names the file (and line).
    """
    vocab_dir, epoch_file = pathlib.Path(vocab_dir), pathlib.Path(epoch_file)
    text, scan = _scanned(data, log)
    stride = training_stride(scan.pairs, data.max_train_pairs, log)
    options = batching_options(data, pad_to_bucket_boundary, num_workers)
    if worker_index == 0:
        global_options = dict(options, batch_size=data.batch_size)
        tokenizers = prepare_as_chief(
            data,
            text,
            scan.pairs,
            stride,
            vocab_dir,
            epoch_file,
            global_options,
            log,
        )
    else:
        tokenizers = tokenizers_of_chief(vocab_dir, epoch_file, log)
    epoch = read_epoch(epoch_file, log)
    train = _train_stream(
        data,
        text,
        tokenizers,
        options,
        seed,
        num_workers * stride,
        worker_index * stride,
    )
    validation, validation_batches = _validation(data, tokenizers)
    _note_words_of_raw_text(data, log)
    return TrainingData(
        *tokenizers,
        train=train,
        steps_per_epoch=int(epoch["steps_per_epoch"]),
        identity=data_identity(data, text, scan),
        validation=validation,
        validation_batches=validation_batches,
    )


def batching_options(data, pad_to_bucket_boundary=False, num_workers=1):
    """`batch_pairs` arguments for `data`, per worker: `batch_size` is the
    global batch, split evenly between the workers. Buckets end past the
    length limits (or at 1,022 tokens without limits)."""
    if data.batch_size < num_workers:
        raise ValueError(
            f"data: batch_size {data.batch_size} is less than one per worker "
            f"({num_workers} workers)"
        )
    longest = max(data.max_source_length or 0, data.max_target_length or 0)
    longest = longest + 1 if longest else LONGEST_BUCKET
    boundaries = None
    if data.bucket_width:
        boundaries = bucket_boundaries_for(
            longest + data.bucket_width, data.bucket_width
        )
    elif data.batch_by == "tokens":
        boundaries = bucket_boundaries_for(longest)
    return dict(
        batch_size=data.batch_size // num_workers,
        batch_by=data.batch_by,
        sort_window=data.sort_window,
        bucket_boundaries=boundaries,
        pad_to_bucket_boundary=pad_to_bucket_boundary,
    )


def _scanned(data, log):
    """The training text of `data` and its pre-pass (lines, sha256, invalid
    UTF-8), logged; refuses text without pairs."""
    started = time.perf_counter()
    text = parallel_text(data)
    scan = text.scan(data.invalid_utf8)
    log(
        f"{scan.summary(data.invalid_utf8)} "
        f"[pre-pass {time.perf_counter() - started:.1f} s]"
    )
    if not scan.pairs:
        raise ValueError(f"no sentence pairs to train on: {scan.summary()}")
    return text, scan


def _note_words_of_raw_text(data, log):
    if data.tokenizer == "word" and data.corpus and data.variant == "raw":
        log(
            "note: the word tokenizer splits raw text at whitespace only, "
            'so "bicycle." and "bicycle" are different words and the '
            "output stays split the same way; --tokenizer=sentencepiece "
            "reads and writes raw text"
        )


def _train_stream(data, text, tokenizers, options, seed, shards, index):
    """This worker's training batches, without end: every `shards`-th pair
    from `index`."""
    pairs = text.dataset(data.invalid_utf8, shards, index)
    # Repeated before anything else: the shuffle starts each pass over the
    # files in a new order, and a restored iterator goes on exactly (tf.data
    # does not restore the reshuffling seeds of a pipeline repeated at its
    # end, past a batch-map-unbatch: passes after a resume came out in
    # another order). Batches flow on across passes; an epoch is a count of
    # steps.
    pairs = pairs.shuffle(
        data.shuffle_buffer, seed=seed, reshuffle_each_iteration=True
    ).repeat()
    return batch_pairs(
        tokenized_pairs(
            pairs, *tokenizers, data.max_source_length, data.max_target_length
        ),
        seed=seed,
        **options,
    )


def _validation(data, tokenizers):
    """The validation pairs and their batches, in order."""
    corpus = validation_corpus(data)
    if corpus is None:
        return None, None
    encoded = encode_corpus(corpus, *tokenizers, None, None)
    batches = make_dataset(encoded, batch_size=64, sort_window=1, shuffle=False)
    return corpus, batches

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
seeded sample spread over the whole corpus (`vocab_sample_lines` pairs)
builds the vocabularies and estimates the epoch length (the sample is
written to a temporary folder in the vocabulary folder and read from there,
so that memory does not grow with it either):

    steps per epoch = batches of the sample x pairs / sample pairs

(exact when the sample is the whole corpus, as for Multi30k). The chief
(worker 0) builds the vocabularies and writes the epoch length to
`epoch_file`; the other workers wait for them and read them, so that every
worker uses the same vocabularies and takes the same number of steps.
"""

import contextlib
import dataclasses
import itertools
import json
import pathlib
import shutil
import tempfile
import time

import tensorflow as tf

from seq2seq_attn.config.run import read_json
from seq2seq_attn.data.batching import (
    batch_pairs,
    bucket_boundaries_for,
    encode_corpus,
    keep_pair,
    make_dataset,
)
from seq2seq_attn.data.corpora import (
    ParallelCorpus,
    ReadReport,
    load_corpus,
    multi30k_files,
    read_parallel_files,
)
from seq2seq_attn.data.text_stream import ParallelText, TfdsText
from seq2seq_attn.data.text_to_ids import sentence_ids
from seq2seq_attn.data.tokenizers import build_tokenizer, load_tokenizer
from seq2seq_attn.data.wmt_sets import named_test_set

ESTIMATE_SAMPLE = 50_000
SAMPLE_FOLDER = ".sample-"
TOKENIZE_CHUNK = 256
LONGEST_BUCKET = 1022
WORKER_WAIT_SECONDS = 3600


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


def _file_list(value):
    """A comma-separated flag value as a list of paths."""
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def named_corpus(data, split):
    """A split of the named corpus of `data` (a `DataConfig`), in memory."""
    return load_corpus(
        data.corpus,
        split,
        data.source,
        data.target,
        variant=data.variant,
        data_dir=data.data_dir,
        invalid_utf8=data.invalid_utf8,
    )


def parallel_text(data):
    """The training `ParallelText` of `data` (a `DataConfig`): Multi30k is
    read from its (downloaded or local) files, Anki's seeded split is made
    in memory (the corpus is 0.1-0.2M pairs)."""
    if data.tfds_dataset:
        return TfdsText(
            data.tfds_dataset, data.source, data.target, data_dir=data.data_dir
        )
    if data.corpus == "multi30k":
        source, target = multi30k_files(
            "train", data.source, data.target, data.variant, data.data_dir
        )
        return ParallelText.from_files([source], [target])
    if data.corpus:
        corpus = named_corpus(data, "train")
        return ParallelText.from_lists(corpus.sources, corpus.targets)
    if data.train_tsv_file:
        return ParallelText.from_tsv(_file_list(data.train_tsv_file))
    return ParallelText.from_files(
        _file_list(data.train_source_file), _file_list(data.train_target_file)
    )


def data_identity(data, text, scan):
    """What the training data is, whatever its paths: the corpus and
    languages, or the sha256 of each training file (one value per flag, a
    list where the flag names several files)."""
    if data.tfds_dataset:
        return {**text.identity(), "source": data.source, "target": data.target}
    if data.corpus:
        return {
            "corpus": data.corpus,
            "variant": data.variant,
            "source": data.source,
            "target": data.target,
        }
    digests = [file.sha256 for file in scan.files]
    if text.tsv_files:
        groups = {"train_tsv_file sha256": digests}
    else:
        groups = {
            "train_source_file sha256": digests[0::2],
            "train_target_file sha256": digests[1::2],
        }
    return {
        key: values[0] if len(values) == 1 else values
        for key, values in groups.items()
    }


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


def build_vocabularies(data, vocab_dir, sample, log=print):
    """Builds and saves `vocab_dir/source` and `vocab_dir/target` from
    `sample` (two lists of sentences) as `data` says (kind, sizes, case;
    with `joint_vocab` one vocabulary from both lists, saved as both);
    returns the two tokenizers."""
    for side, texts in zip(("source", "target"), sample, strict=True):
        if not any(text.strip() for text in texts):
            raise ValueError(
                f"data: the {side} side has no text to build a vocabulary "
                f"from: its {len(texts):,} sampled lines are all empty or "
                "blank"
            )
    vocab_dir = pathlib.Path(vocab_dir)
    if data.joint_vocab:
        joint = _build_vocabulary(
            data,
            "joint",
            _Joined(*sample),
            vocab_dir / "source",
            data.source_vocab_size,
            log,
        )
        joint.save(vocab_dir / "target")
        return joint, load_tokenizer(vocab_dir / "target")
    return tuple(
        _build_vocabulary(data, side, texts, vocab_dir / side, size, log)
        for side, texts, size in zip(
            ("source", "target"),
            sample,
            (data.source_vocab_size, data.target_vocab_size),
            strict=True,
        )
    )


def check_joint_vocabulary(tie_embeddings, source_tokenizer, target_tokenizer):
    """Refuses tie_embeddings="all" (one embedding for both sides) unless
    the two vocabularies are one (`joint_vocab`, or a joint `vocab_dir`)."""
    if tie_embeddings == "all" and (
        source_tokenizer.fingerprint() != target_tokenizer.fingerprint()
    ):
        raise ValueError(
            "model: tie_embeddings=all shares one embedding between the "
            f"sides, but the vocabularies of {source_tokenizer.directory} "
            f"and {target_tokenizer.directory} differ: build one joint "
            "vocabulary (--joint_vocab)"
        )


class _Joined:
    """Both sides of a sample, one after the other, read again on each
    pass (the joint vocabulary's text, not copied)."""

    def __init__(self, sources, targets):
        self.sides = (sources, targets)

    def __len__(self):
        return sum(len(side) for side in self.sides)

    def __iter__(self):
        return itertools.chain(*self.sides)


def _build_vocabulary(data, side, texts, directory, size, log):
    started = time.perf_counter()
    count, note = len(texts), ""
    limit = data.sentencepiece_max_characters
    if data.tokenizer == "sentencepiece" and limit:
        characters = sum(len(text) for text in texts)
        step = -(-characters // limit)
        if step > 1:
            count = -(-count // step)
            note = (
                f" (1 in {step} of {len(texts):,}: "
                f"{characters:,} characters, over "
                f"sentencepiece_max_characters={limit:,})"
            )
            texts = itertools.islice(texts, 0, None, step)
    tokenizer = build_tokenizer(
        data.tokenizer,
        texts,
        directory,
        size,
        lowercase=data.lowercase,
        seed=0,
        split_punctuation=data.split_punctuation,
    )
    log(
        f"built the {side} {data.tokenizer} vocabulary from "
        f"{count:,} sentences{note}: {tokenizer.vocab_size} "
        f"entries [{time.perf_counter() - started:.0f} s]"
    )
    return tokenizer


def _sample(text, size, pairs, directory, log):
    """A seeded sample of `size` of the `pairs` pairs of `text`, written to
    `directory` (two `SampleFile`s), logged."""
    started = time.perf_counter()
    sample = text.sample(size, seed=0, lines=pairs, directory=directory)
    log(
        f"sampled {len(sample[0]):,} of {pairs:,} pairs "
        f"[{time.perf_counter() - started:.1f} s]"
    )
    return sample


@contextlib.contextmanager
def _sample_folder(vocab_dir):
    """A temporary folder for the sample inside `vocab_dir` (on the run's
    disk, not a RAM-backed /tmp; one writer per run directory), removed
    afterwards, as is any a killed run left there; `vocab_dir` too if it
    was made here and is still empty."""
    vocab_dir = pathlib.Path(vocab_dir)
    made = not vocab_dir.exists()
    vocab_dir.mkdir(parents=True, exist_ok=True)
    for stale in vocab_dir.glob(SAMPLE_FOLDER + "*"):
        shutil.rmtree(stale, ignore_errors=True)
    try:
        with tempfile.TemporaryDirectory(
            prefix=SAMPLE_FOLDER, dir=vocab_dir
        ) as folder:
            yield folder
    finally:
        if made and not any(vocab_dir.iterdir()):
            vocab_dir.rmdir()


def vocabularies_of_text(data, text, pairs, vocab_dir, log=print, sample=None):
    """The vocabularies of a run, built into `vocab_dir` from
    `data.vocab_sample_lines` pairs spread over a seeded sample of the
    `pairs` pairs of `text` (the chief passes the larger `sample` it draws
    for the epoch estimate too; `build_vocab` draws one of that size); returns
    the two tokenizers."""
    if sample is None:
        with _sample_folder(vocab_dir) as folder:
            sample = _sample(text, data.vocab_sample_lines, pairs, folder, log)
            return build_vocabularies(data, vocab_dir, sample, log)
    vocab_sample = [spread(side, data.vocab_sample_lines) for side in sample]
    return build_vocabularies(data, vocab_dir, vocab_sample, log)


def spread(items, count):
    """At most `count` of `items`, evenly spaced (all if fewer)."""
    step = -(-len(items) // count) if count else 1
    return items[::step]


def _load_tokenizers(vocab_dir):
    vocab_dir = pathlib.Path(vocab_dir)
    return tuple(
        load_tokenizer(vocab_dir / side) for side in ("source", "target")
    )


def _estimate_epoch(data, sample, pairs, tokenizers, options):
    """Steps per epoch: the batches of a sample of the corpus, scaled to
    its pair count; exact when the sample is the whole corpus."""
    sources, targets = (list(spread(side, ESTIMATE_SAMPLE)) for side in sample)
    batches = batch_pairs(
        tokenized_pairs(
            tf.data.Dataset.from_tensor_slices(
                (
                    tf.constant(sources, tf.string),
                    tf.constant(targets, tf.string),
                )
            ),
            *tokenizers,
            data.max_source_length,
            data.max_target_length,
        ),
        shuffle=False,
        **options,
    )
    counted = kept = 0
    for (source, _), _ in batches:
        counted += 1
        kept += int(source.shape[0])
    if not counted:
        raise ValueError(
            f"no pair of a sample of {len(sources):,} passes the length "
            f"filter (at most {data.max_source_length} source and "
            f"{data.max_target_length} target tokens, neither side empty)"
        )
    return dict(
        pairs=pairs,
        sample_pairs=len(sources),
        sample_kept=kept,
        sample_batches=counted,
        steps_per_epoch=max(1, round(counted * pairs / len(sources))),
    )


def _prepare_as_chief(
    data, text, pairs, stride, vocab_dir, epoch_file, options, log
):
    """The chief's tokenizers: loaded, copied from `data.vocab_dir`, or built
    from a sample of the `pairs`; and `epoch_file`, written (last) if
    missing, for every `stride`-th pair."""
    have_vocab = all(
        (vocab_dir / side / "tokenizer.json").is_file()
        for side in ("source", "target")
    )
    if not have_vocab and data.vocab_dir:
        _load_tokenizers(data.vocab_dir)  # named where the user wrote them
        for side in ("source", "target"):
            shutil.copytree(
                pathlib.Path(data.vocab_dir) / side, vocab_dir / side
            )
        log(f"copied the vocabularies of {data.vocab_dir}")
        have_vocab = True
    if have_vocab and epoch_file.is_file():
        return _load_tokenizers(vocab_dir)
    size = ESTIMATE_SAMPLE
    if not have_vocab:
        size = max(size, data.vocab_sample_lines)
    with _sample_folder(vocab_dir) as folder:
        sample = _sample(text, size, pairs, folder, log)
        if have_vocab:
            tokenizers = _load_tokenizers(vocab_dir)
        else:
            tokenizers = vocabularies_of_text(
                data, text, pairs, vocab_dir, log, sample
            )
        if not epoch_file.is_file():
            epoch = _estimate_epoch(
                data, sample, -(-pairs // stride), tokenizers, options
            )
            temporary = epoch_file.with_name(epoch_file.name + ".tmp")
            temporary.write_text(json.dumps(epoch, indent=2) + "\n")
            temporary.replace(epoch_file)
    return tokenizers


def _read_epoch(epoch_file, log):
    epoch = read_json(epoch_file)
    needed = ("pairs", "sample_pairs", "steps_per_epoch")
    if not isinstance(epoch, dict) or not all(key in epoch for key in needed):
        raise ValueError(
            f"{epoch_file}: damaged, not an epoch length with "
            f"{', '.join(needed)}"
        )
    sampled, kept = epoch["sample_pairs"], epoch.get("sample_kept")
    if sampled == epoch["pairs"]:
        how = "counted"
        if kept is not None:
            how += f"; {kept:,} of {sampled:,} pairs pass the length filter"
    else:
        how = f"estimated from {sampled:,} sampled pairs"
        if kept is not None:
            how += f", {kept / sampled:.1%} of which pass the length filter"
    log(f"{epoch['steps_per_epoch']} steps per epoch ({how})")
    return epoch


def _wait_for(path, seconds, log):
    """Waits until the chief has written `path` (other workers)."""
    deadline = time.monotonic() + seconds
    if not path.is_file():
        log(f"waiting for the chief to write {path}")
    while not path.is_file():
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"the chief did not write {path} within {seconds} s"
            )
        time.sleep(0.5)


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
    started = time.perf_counter()
    text = parallel_text(data)
    scan = text.scan(data.invalid_utf8)
    log(
        f"{scan.summary(data.invalid_utf8)} "
        f"[pre-pass {time.perf_counter() - started:.1f} s]"
    )
    if not scan.pairs:
        raise ValueError(f"no sentence pairs to train on: {scan.summary()}")
    stride = _stride(scan.pairs, data.max_train_pairs, log)
    options = batching_options(data, pad_to_bucket_boundary, num_workers)
    global_options = dict(options, batch_size=data.batch_size)
    if worker_index == 0:
        tokenizers = _prepare_as_chief(
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
        _wait_for(epoch_file, WORKER_WAIT_SECONDS, log)
        tokenizers = _load_tokenizers(vocab_dir)
    epoch = _read_epoch(epoch_file, log)
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


def _note_words_of_raw_text(data, log):
    if data.tokenizer == "word" and data.corpus and data.variant == "raw":
        log(
            "note: the word tokenizer splits raw text at whitespace only, "
            'so "bicycle." and "bicycle" are different words and the '
            "output stays split the same way; --tokenizer=sentencepiece "
            "reads and writes raw text"
        )


def _stride(pairs, max_train_pairs, log):
    """k, to train on every k-th of `pairs` (at most `max_train_pairs`)."""
    if not max_train_pairs or pairs <= max_train_pairs:
        return 1
    stride = -(-pairs // max_train_pairs)
    log(
        f"training on every {stride}th pair (max_train_pairs "
        f"{max_train_pairs:,}): {-(-pairs // stride):,} pairs"
    )
    return stride


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


def validation_corpus(data):
    """The validation pairs of `data` in memory (the first
    `valid_max_sentences`), or None without any."""
    if data.valid_test_sets:
        corpus = _test_sets_corpus(data)
    elif data.tfds_dataset:
        text = dataclasses.replace(parallel_text(data), split="validation")
        corpus = ParallelCorpus(*text.sample(1 << 31), ReadReport())
    elif data.corpus:
        corpus = named_corpus(data, "val")
    elif data.valid_source_file and data.valid_target_file:
        corpus = read_parallel_files(
            data.valid_source_file,
            data.valid_target_file,
            invalid_utf8=data.invalid_utf8,
        )
    else:
        return None
    if data.valid_max_sentences:
        corpus = corpus.subset(
            range(min(len(corpus), data.valid_max_sentences))
        )
    return corpus


def _test_sets_corpus(data):
    """The sacreBLEU test sets of `data.valid_test_sets`, one after another."""
    sources, targets, reports = [], [], []
    for name in _file_list(data.valid_test_sets):
        files = named_test_set(name, f"{data.source}-{data.target}")
        corpus = read_parallel_files(*files, invalid_utf8=data.invalid_utf8)
        sources += corpus.sources
        targets += corpus.targets
        reports.append(corpus.report)
    counts = {
        field.name: sum(getattr(report, field.name) for report in reports)
        for field in dataclasses.fields(ReadReport)
        if field.name != "source"
    }
    names = " + ".join(report.source for report in reports)
    return ParallelCorpus(sources, targets, ReadReport(names, **counts))


def _validation(data, tokenizers):
    """The validation pairs and their batches, in order."""
    corpus = validation_corpus(data)
    if corpus is None:
        return None, None
    encoded = encode_corpus(corpus, *tokenizers, None, None)
    batches = make_dataset(encoded, batch_size=64, sort_window=1, shuffle=False)
    return corpus, batches

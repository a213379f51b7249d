"""Where a run's text comes from, as a `DataConfig` says: the training
`ParallelText` (a named corpus, files, TSV or a TFDS dataset), what that
data is whatever its paths (`data_identity`), and the validation pairs."""

import dataclasses

from seq2seq_attn.data.corpora import load_corpus, multi30k_files
from seq2seq_attn.data.text_stream import ParallelText, TfdsText
from seq2seq_attn.data.wmt_sets import named_test_set


def file_list(value):
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
        return ParallelText.from_tsv(file_list(data.train_tsv_file))
    return ParallelText.from_files(
        file_list(data.train_source_file), file_list(data.train_target_file)
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


def validation_corpus(data):
    """The validation pairs of `data` in memory (the first
    `valid_max_sentences`), or None without any: read by
    `ParallelText.read`, as `evaluate` reads a test set."""
    if data.valid_test_sets:
        files = [
            named_test_set(name, f"{data.source}-{data.target}")
            for name in file_list(data.valid_test_sets)
        ]
        text = ParallelText.from_files(*zip(*files, strict=True))
        corpus = text.read(data.invalid_utf8)
    elif data.tfds_dataset:
        text = dataclasses.replace(parallel_text(data), split="validation")
        corpus = text.read(data.invalid_utf8)
    elif data.corpus:
        corpus = named_corpus(data, "val")
    elif data.valid_source_file and data.valid_target_file:
        text = ParallelText.from_files(
            [data.valid_source_file], [data.valid_target_file]
        )
        corpus = text.read(data.invalid_utf8)
    else:
        return None
    if data.valid_max_sentences:
        corpus = corpus.subset(
            range(min(len(corpus), data.valid_max_sentences))
        )
    return corpus

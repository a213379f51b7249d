"""Parallel text on disk, read as a stream: a fast pre-pass, a seeded
sample, and a `tf.data` stream of string pairs whose memory does not grow
with the corpus.

    text = ParallelText.from_files(["a.en.gz", "b.en"], ["a.de.gz", "b.de"])
    scan = text.scan(invalid_utf8="error")   # lines, sha256, bad lines
    sources, targets = text.sample(1_000_000, seed=0)   # two lists
    sources, targets = text.sample(1_000_000, directory=tmp)   # on disk
    pairs = text.dataset(invalid_utf8="error")   # (source, target) strings
    corpus = text.read(invalid_utf8="error")   # all of it, in memory

The pre-pass reads the bytes once, in chunks: it counts lines, checks that
the two sides have as many, hashes each file (the run's data identity) and
finds invalid UTF-8 (naming the file and line); it neither decodes lines
into Python strings nor tokenizes. The stream reads lines with
`tf.data.TextLineDataset` (plain or gzip), so that a checkpointed iterator
holds a file offset, not the corpus. `read` takes a small text (validation
pairs, a test set) into memory whole, decoded by `parallel_corpus`'s policy.
"""

import dataclasses
import hashlib
import pathlib

import numpy as np
import tensorflow as tf

from seq2seq_attn.data.lines import (
    check_invalid_utf8_policy,
    invalid_utf8_error,
    invalid_utf8_refused,
    line_chunks,
    read_byte_lines,
)
from seq2seq_attn.data.parallel_corpus import decoded_pairs, tsv_pairs
from seq2seq_attn.data.text_to_ids import clean_text


@dataclasses.dataclass
class FileScan:
    """What the pre-pass found in one file.

    Attributes:
        path: the file.
        lines: its lines (a last line without a newline counts).
        sha256: of its bytes as stored (compressed, for `.gz`).
        invalid_lines: lines that are not valid UTF-8.
        first_invalid: "path:line: invalid UTF-8 at byte N (...)" of the
            first of them, or None.
        short_lines: TSV only: lines with too few columns, and the first.
    """

    path: str
    lines: int = 0
    sha256: str = ""
    invalid_lines: int = 0
    first_invalid: str | None = None
    short_lines: int = 0
    first_short: str | None = None


def scan_file(path, columns=0):
    """The `FileScan` of `path` (`columns`: TSV columns a line needs)."""
    digest = hashlib.sha256()
    scan = FileScan(str(path))
    for chunk in line_chunks(path, digest):
        if columns:
            _check_columns(scan, chunk, columns)
        try:
            chunk.decode("utf-8")
        except UnicodeDecodeError:
            _find_invalid(scan, chunk)
        scan.lines += chunk.count(b"\n")
    scan.sha256 = digest.hexdigest()
    return scan


def _find_invalid(scan, chunk):
    for number, line in enumerate(chunk.split(b"\n")[:-1], scan.lines + 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            scan.invalid_lines += 1
            if scan.first_invalid is None:
                scan.first_invalid = invalid_utf8_error(
                    f"{scan.path}:{number}", line, error
                )


def _check_columns(scan, chunk, columns):
    for number, line in enumerate(chunk.split(b"\n")[:-1], scan.lines + 1):
        found = line.count(b"\t") + 1
        if found < columns:
            scan.short_lines += 1
            if scan.first_short is None:
                scan.first_short = (
                    f"{scan.path}:{number}: expected at least {columns} "
                    f"tab-separated columns, found {found}"
                )


@dataclasses.dataclass
class TextScan:
    """The pre-pass of a `ParallelText`: pairs, per-file scans, and what
    the UTF-8 policy will do with the invalid lines."""

    pairs: int
    files: list
    invalid_lines: int
    name: str = ""

    def summary(self, invalid_utf8="error"):
        """One line for logs."""
        names = " + ".join(pathlib.Path(f.path).name for f in self.files)
        names = names or self.name or "in memory"
        line = f"{names}: {self.pairs:,} pairs"
        if self.invalid_lines:
            action = {
                "skip": "their pairs skipped",
                "replace": "invalid bytes replaced",
            }[invalid_utf8]
            line += (
                f", {self.invalid_lines:,} lines with invalid UTF-8 ({action})"
            )
        return line


@dataclasses.dataclass(frozen=True)
class ParallelText:
    """Sentence pairs in files: line-aligned pairs of files (several per
    side, taken in order) or tab-separated files (a pair per line).

    Attributes:
        file_pairs: `((source_file, target_file), ...)`, line-aligned.
        tsv_files: tab-separated files, read instead of `file_pairs`.
        source_column, target_column: the TSV columns of the pair.
    """

    file_pairs: tuple = ()
    tsv_files: tuple = ()
    source_column: int = 0
    target_column: int = 1
    in_memory: tuple = dataclasses.field(default=(), repr=False)

    @classmethod
    def from_lists(cls, sources, targets):
        """Pairs already in memory (a small corpus, e.g. an Anki split)."""
        if len(sources) != len(targets):
            raise ValueError(
                f"{len(sources)} sources but {len(targets)} targets"
            )
        return cls(in_memory=(tuple(sources), tuple(targets)))

    @classmethod
    def from_files(cls, source_files, target_files):
        """Line-aligned files: `source_files[i]` pairs with
        `target_files[i]` (plain or `.gz`)."""
        source_files, target_files = list(source_files), list(target_files)
        if not source_files or len(source_files) != len(target_files):
            raise ValueError(
                "give as many source files as target files (at least one): "
                f"{len(source_files)} source, {len(target_files)} target"
            )
        return cls(
            file_pairs=tuple(zip(source_files, target_files, strict=True))
        )

    @classmethod
    def from_tsv(cls, files, source_column=0, target_column=1):
        """Tab-separated files (plain or `.gz`), a pair per line."""
        if not files:
            raise ValueError("give at least one TSV file")
        return cls(
            tsv_files=tuple(files),
            source_column=source_column,
            target_column=target_column,
        )

    def _files(self):
        if self.tsv_files:
            return list(self.tsv_files)
        return [path for pair in self.file_pairs for path in pair]

    def scan(self, invalid_utf8="error"):
        """The pre-pass (see the module docstring).

        Raises:
            ValueError: if two paired files differ in lines (naming both and
                both counts), a TSV line has too few columns, or (with
                "error") a line is not UTF-8, naming the file and line.
        """
        check_invalid_utf8_policy(invalid_utf8)
        if self.in_memory:
            return TextScan(len(self.in_memory[0]), [], 0)
        for path in self._files():
            if not pathlib.Path(path).is_file():
                raise FileNotFoundError(f"no such file: {path}")
        columns = max(self.source_column, self.target_column) + 1
        if self.tsv_files:
            scans = [scan_file(path, columns) for path in self.tsv_files]
            for scan in scans:
                if scan.short_lines:
                    raise ValueError(scan.first_short)
        else:
            scans = []
            for source, target in self.file_pairs:
                pair = [scan_file(source), scan_file(target)]
                if pair[0].lines != pair[1].lines:
                    raise _length_mismatch(
                        source, pair[0].lines, target, pair[1].lines
                    )
                scans += pair
        invalid = [s for s in scans if s.invalid_lines]
        if invalid and invalid_utf8 == "error":
            raise invalid_utf8_refused(invalid[0].first_invalid)
        pairs = sum(s.lines for s in scans[:: 1 if self.tsv_files else 2])
        return TextScan(
            pairs=pairs,
            files=scans,
            invalid_lines=sum(s.invalid_lines for s in scans),
        )

    def read(self, invalid_utf8="error"):
        """All the pairs in memory, as a `ParallelCorpus` (a validation or
        test set; `dataset` streams a training corpus): decoded under
        `invalid_utf8`, stripped, a pair with an empty side dropped, all of
        it counted in its report (`parallel_corpus.decoded_pairs`).

        Raises:
            ValueError: as `scan` does, naming the first offending line in
                pair order.
        """
        if self.in_memory:
            names = "in memory"
        else:
            names = " + ".join(pathlib.Path(p).name for p in self._files())
        return decoded_pairs(self._numbered_pairs(), invalid_utf8, names)

    def _numbered_pairs(self):
        """The pairs as bytes, each side with its `(path, line number)`."""
        if self.in_memory:
            pairs = zip(*self.in_memory, strict=True)
            for number, (source, target) in enumerate(pairs, 1):
                where = ("pair", number)
                yield source.encode(), where, target.encode(), where
        for path in self.tsv_files:
            yield from tsv_pairs(
                read_byte_lines(path),
                path,
                self.source_column,
                self.target_column,
            )
        for source, target in self.file_pairs:
            source_lines = read_byte_lines(source)
            target_lines = read_byte_lines(target)
            if len(source_lines) != len(target_lines):
                raise _length_mismatch(
                    source, len(source_lines), target, len(target_lines)
                )
            pairs = zip(source_lines, target_lines, strict=True)
            for number, (source_line, target_line) in enumerate(pairs, 1):
                yield (
                    source_line,
                    (source, number),
                    target_line,
                    (target, number),
                )

    def _line_datasets(self):
        """One dataset of lines per side (TSV: one of whole lines)."""

        def lines(paths):
            return tf.data.Dataset.from_tensor_slices(
                [str(p) for p in paths]
            ).flat_map(_text_lines)

        if self.tsv_files:
            return (lines(self.tsv_files),)
        sources, targets = zip(*self.file_pairs, strict=True)
        return lines(sources), lines(targets)

    def dataset(self, invalid_utf8="error", num_shards=1, shard_index=0):
        """A `tf.data.Dataset` of `(source, target)` strings, in file order,
        stripped; with `num_shards`, every `num_shards`-th pair from
        `shard_index` (a worker's share). Invalid UTF-8 is replaced, or with
        "skip" the pair is dropped (`scan` has counted them)."""
        if self.in_memory:
            pairs = tf.data.Dataset.from_tensor_slices(
                tuple(tf.constant(side, tf.string) for side in self.in_memory)
            )
        elif self.tsv_files:
            source_column, target_column = (
                self.source_column,
                self.target_column,
            )

            def split(line):
                columns = tf.strings.split(
                    tf.strings.regex_replace(line, "\r$", ""), "\t"
                )
                return columns[source_column], columns[target_column]

            pairs = self._line_datasets()[0].map(split)
        else:
            pairs = tf.data.Dataset.zip(self._line_datasets())
        return _share(pairs, invalid_utf8, num_shards, shard_index)

    def sample(self, count, seed=0, lines=None, directory=None):
        """Up to `count` pairs drawn without replacement, seeded, spread over
        the whole text (the first lines of a corpus are often one source),
        in file order (so that a vocabulary built from all of a small corpus
        is the one its files give): two lists of `str`, or with `directory`
        two `SampleFile`s written there (a large sample on disk, not in
        memory). Invalid UTF-8 is replaced. `lines`: the pair count
        (`scan().pairs`) if known."""
        total = lines if lines is not None else self.scan("replace").pairs
        rng = np.random.default_rng(seed)
        chosen = np.sort(
            rng.choice(total, size=min(count, total), replace=False)
        )
        return _kept(self._picked_pairs(chosen), directory)

    def _picked_pairs(self, chosen):
        """The decoded pairs at the sorted line numbers `chosen` (counted
        across the files of a side, from 0), in order."""
        if self.in_memory:
            sources, targets = self.in_memory
            return ((sources[i], targets[i]) for i in chosen)
        if self.tsv_files:
            source, target = self.source_column, self.target_column
            return (
                (row[source].strip(), row[target].strip())
                for row in (
                    line.split("\t")
                    for line in _picked_lines(self.tsv_files, chosen)
                )
            )
        sources, targets = zip(*self.file_pairs, strict=True)
        return zip(
            _picked_lines(sources, chosen),
            _picked_lines(targets, chosen),
            strict=True,
        )


def _length_mismatch(source, source_lines, target, target_lines):
    return ValueError(
        f"parallel files differ in length: {source} has {source_lines} "
        f"lines, {target} has {target_lines}"
    )


def _picked_lines(paths, chosen):
    """The lines of `paths` (one side, its files in order) at the sorted
    line numbers `chosen`, decoded and stripped, read a chunk at a time."""
    offset = position = 0
    for path in paths:
        for chunk in line_chunks(path):
            if position == len(chosen):
                return
            lines = chunk.split(b"\n")[:-1]
            end = offset + len(lines)
            while position < len(chosen) and chosen[position] < end:
                line = lines[chosen[position] - offset]
                yield line.rstrip(b"\r").decode("utf-8", "replace").strip()
                position += 1
            offset = end


def _kept(pairs, directory):
    """`pairs` as two lists, or as two `SampleFile`s in `directory`."""
    if directory is None:
        sources, targets = [], []
        for source, target in pairs:
            sources.append(source)
            targets.append(target)
        return sources, targets
    return SampleFile.write_pairs(directory, pairs)


class SampleFile:
    """Sampled sentences in a file, one a line, read again on each pass, so
    that a large sample costs disk, not memory. `len()` counts them,
    iterating yields them (`str`, in order), and `sample[::k]` is every k-th
    of them, read from the same file."""

    def __init__(self, path, lines, step=1):
        self.path, self.lines, self.step = pathlib.Path(path), lines, step

    @classmethod
    def write_pairs(cls, directory, pairs):
        """Writes `(source, target)` pairs to `directory/source.txt` and
        `target.txt` (a newline inside a text becomes a space, so that the
        sides stay aligned); returns the two files."""
        directory = pathlib.Path(directory)
        paths = (directory / "source.txt", directory / "target.txt")
        count = 0
        with (
            open(paths[0], "w", encoding="utf-8", newline="\n") as sources,
            open(paths[1], "w", encoding="utf-8", newline="\n") as targets,
        ):
            for source, target in pairs:
                sources.write(source.replace("\n", " ") + "\n")
                targets.write(target.replace("\n", " ") + "\n")
                count += 1
        return tuple(cls(path, count) for path in paths)

    def __len__(self):
        return -(-self.lines // self.step)

    def __iter__(self):
        with open(self.path, encoding="utf-8", newline="\n") as lines:
            for index, line in enumerate(lines):
                if index % self.step == 0:
                    yield line[:-1]

    def __getitem__(self, key):
        if not (
            isinstance(key, slice)
            and key.start is None
            and key.stop is None
            and (key.step or 1) >= 1
        ):
            raise TypeError("a SampleFile takes only [::k], k >= 1")
        return SampleFile(self.path, self.lines, self.step * (key.step or 1))


def _text_lines(path):
    compression = tf.where(
        tf.strings.regex_full_match(path, r".*\.gz"), "GZIP", ""
    )
    return tf.data.TextLineDataset(path, compression_type=compression)


def _share(pairs, invalid_utf8, num_shards, shard_index):
    """Every `num_shards`-th pair from `shard_index`, valid UTF-8 (invalid
    bytes replaced, or with "skip" the pair dropped) and stripped."""
    if num_shards > 1:
        pairs = pairs.shard(num_shards, shard_index)
    if invalid_utf8 == "skip":
        pairs = pairs.filter(_valid_utf8)
    return pairs.map(_clean_pair)


def _valid_utf8(source, target):
    return tf.logical_and(
        tf.equal(clean_text(source), source),
        tf.equal(clean_text(target), target),
    )


def _clean_pair(source, target):
    return tf.strings.strip(clean_text(source)), tf.strings.strip(
        clean_text(target)
    )


_PREPARED = set()


def _tensorflow_datasets():
    try:
        import tensorflow_datasets
    except ImportError:
        raise ImportError(
            "reading a TFDS dataset needs tensorflow-datasets: "
            'pip install "seq2seq_attn[tfds]"'
        ) from None
    return tensorflow_datasets


@dataclasses.dataclass(frozen=True)
class TfdsText:
    """The pairs of a TensorFlow Datasets translation dataset, e.g.
    `wmt14_translate/de-en`, whose examples are `{language: text}`: the
    direction is `source` -> `target`, whatever TFDS's supervised keys.

    The same interface as `ParallelText`. TFDS prepares the dataset once
    (downloading many GB for WMT) into `data_dir` (TFDS's default without
    one); the pair count comes from its metadata, so there is no pre-pass.

    Attributes:
        name: the TFDS name, with its config ("wmt14_translate/fr-en").
        source, target: the language keys of its examples.
        split: the TFDS split ("train", "validation", "test", or a slice).
        data_dir: TFDS's data directory.
    """

    name: str
    source: str
    target: str
    split: str = "train"
    data_dir: str | None = None

    def _builder(self):
        tfds = _tensorflow_datasets()
        return tfds.builder(self.name, data_dir=self.data_dir)

    def prepare(self, log=print):
        """Downloads and prepares the dataset if TFDS has not yet (once per
        process)."""
        builder = self._builder()
        if not builder.is_prepared() and self not in _PREPARED:
            log(
                f"preparing the TFDS dataset {self.name} in "
                f"{builder.data_dir} (WMT downloads many GB, once)"
            )
            builder.download_and_prepare()
        _PREPARED.add(self)
        return builder

    def _examples(self, **options):
        builder = self.prepare()
        keys = set(builder.info.features.keys())
        for language in (self.source, self.target):
            if language not in keys:
                raise ValueError(
                    f"{self.name} has no language {language!r}: its "
                    f"examples hold {sorted(keys)}"
                )
        source, target = self.source, self.target
        return builder.as_dataset(split=self.split, **options).map(
            lambda example: (example[source], example[target])
        )

    def scan(self, invalid_utf8="error"):
        """The pair count, from TFDS's metadata (or by counting the
        examples where the metadata has none)."""
        builder = self.prepare()
        try:
            pairs = builder.info.splits[self.split].num_examples
        except (KeyError, ValueError):
            pairs = int(self._examples().reduce(0, lambda count, _: count + 1))
        return TextScan(pairs, [], 0, name=f"{self.name} {self.split}")

    def identity(self):
        """The dataset, split and version (the run's data identity)."""
        return {
            "tfds": self.name,
            "split": self.split,
            "version": str(self._builder().version),
        }

    def dataset(self, invalid_utf8="error", num_shards=1, shard_index=0):
        """As `ParallelText.dataset`, in TFDS's order."""
        pairs = self._examples(shuffle_files=False)
        return _share(pairs, invalid_utf8, num_shards, shard_index)

    def read(self, invalid_utf8="error"):
        """As `ParallelText.read`: the split's pairs in memory, in TFDS's
        order, decoded by the same policy (`parallel_corpus`)."""
        name = f"{self.name} {self.split}"
        numbered = (
            (source, (name, number), target, (name, number))
            for number, (source, target) in enumerate(
                self._examples(shuffle_files=False).as_numpy_iterator(), 1
            )
        )
        return decoded_pairs(numbered, invalid_utf8, name)

    def sample(self, count, seed=0, lines=None, directory=None):
        """Up to `count` pairs: every k-th example (k = pairs / count),
        spread evenly over the whole split; as `ParallelText.sample`."""
        total = lines if lines is not None else self.scan().pairs
        step = max(1, -(-total // count))
        pairs = (
            (
                source.decode("utf-8", "replace"),
                target.decode("utf-8", "replace"),
            )
            for source, target in self.dataset()
            .shard(step, 0)
            .take(count)
            .as_numpy_iterator()
        )
        return _kept(pairs, directory)

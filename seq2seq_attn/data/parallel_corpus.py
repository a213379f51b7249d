"""Sentence pairs held in memory (`ParallelCorpus`), and the one policy by
which the package decodes pairs it reads in Python: each side decoded under
the `invalid_utf8` policy, stripped of surrounding whitespace, a pair with
an empty side dropped, all of it counted in a `ReadReport`.

`ParallelText.read` (`text_stream`) reads whole files through it (the
validation pairs, `evaluate`'s test set); `corpora`'s readers (the notebooks
and the public `seq2seq_attn.data` API) are thin layers over that.
"""

import dataclasses

from seq2seq_attn.data.lines import (
    check_invalid_utf8_policy,
    invalid_utf8_error,
    invalid_utf8_refused,
)


@dataclasses.dataclass
class ReadReport:
    """What reading a corpus kept and dropped.

    Attributes:
        source: where the pairs came from (file names).
        read: pairs read.
        kept: pairs kept.
        empty: pairs dropped because one side was empty or whitespace only.
        invalid_utf8: pairs dropped for invalid UTF-8 (with "skip").
        replaced_utf8: pairs kept with invalid bytes replaced (with "replace").
    """

    source: str = ""
    read: int = 0
    kept: int = 0
    empty: int = 0
    invalid_utf8: int = 0
    replaced_utf8: int = 0

    def summary(self):
        """One line for logs, e.g. "train.en + train.de: 29000 read, ..."."""
        parts = [f"{self.read} read", f"{self.kept} kept"]
        if self.empty:
            parts.append(f"{self.empty} dropped as empty")
        if self.invalid_utf8:
            parts.append(f"{self.invalid_utf8} dropped for invalid UTF-8")
        if self.replaced_utf8:
            parts.append(f"{self.replaced_utf8} with invalid UTF-8 replaced")
        return f"{self.source}: " + ", ".join(parts)


@dataclasses.dataclass
class ParallelCorpus:
    """Sentence pairs and the report of how they were read."""

    sources: list
    targets: list
    report: ReadReport

    def __len__(self):
        return len(self.sources)

    def subset(self, indices):
        """The pairs at `indices`, in that order (the report is shared)."""
        return ParallelCorpus(
            [self.sources[i] for i in indices],
            [self.targets[i] for i in indices],
            self.report,
        )


def decoded_pairs(numbered_pairs, invalid_utf8="error", source=""):
    """The `ParallelCorpus` of byte pairs read from `source` (its name).

    Args:
        numbered_pairs: `(source_bytes, where, target_bytes, where)` tuples,
            `where` a line's `(path, line number)`, named in an error.
        invalid_utf8: "error" (raise, naming the line), "replace" (U+FFFD,
            counted) or "skip" (drop the pair, counted).
        source: the report's name of where the pairs came from.
    """
    check_invalid_utf8_policy(invalid_utf8)
    report = ReadReport(source=source)
    sources, targets = [], []
    for raw_source, where_source, raw_target, where_target in numbered_pairs:
        report.read += 1
        source_text, replaced_source = _decoded(
            raw_source, where_source, invalid_utf8
        )
        target_text, replaced_target = _decoded(
            raw_target, where_target, invalid_utf8
        )
        if source_text is None or target_text is None:
            report.invalid_utf8 += 1
            continue
        source_text, target_text = source_text.strip(), target_text.strip()
        if not source_text or not target_text:
            report.empty += 1
            continue
        report.replaced_utf8 += int(replaced_source or replaced_target)
        sources.append(source_text)
        targets.append(target_text)
    report.kept = len(sources)
    return ParallelCorpus(sources, targets, report)


def _decoded(raw, where, invalid_utf8):
    """`(text or None to skip the pair, whether bytes were replaced)`."""
    try:
        return raw.decode("utf-8"), False
    except UnicodeDecodeError as error:
        if invalid_utf8 == "error":
            path, number = where
            raise invalid_utf8_refused(
                invalid_utf8_error(f"{path}:{number}", raw, error)
            ) from None
        if invalid_utf8 == "skip":
            return None, False
        return raw.decode("utf-8", errors="replace"), True


def tsv_pairs(lines, where, source_column=0, target_column=1):
    """The numbered pairs (as `decoded_pairs` takes them) of tab-separated
    byte `lines` from `where` (a path, or "archive!member"); a "\\r" before
    a line's end is dropped.

    Raises:
        ValueError: on a line with too few columns, naming it.
    """
    needed = max(source_column, target_column) + 1
    for number, line in enumerate(lines, 1):
        columns = line.rstrip(b"\r").split(b"\t")
        if len(columns) < needed:
            raise ValueError(
                f"{where}:{number}: expected at least {needed} "
                f"tab-separated columns, found {len(columns)}"
            )
        line = (where, number)
        yield columns[source_column], line, columns[target_column], line

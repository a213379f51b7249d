"""BLEU by source sentence length (Bahdanau Fig. 2, Luong Fig. 6)."""

import dataclasses

from seq2seq_attn.evaluation.bleu import corpus_bleu

DEFAULT_EDGES = (10, 20, 30, 40, 50)


@dataclasses.dataclass
class Bucket:
    """Sentences whose source length is in [low, high]."""

    low: int
    high: int | None
    sentences: int
    bleu: float

    @property
    def label(self):
        if self.high is None:
            return f">{self.low - 1}"
        return f"{self.low}-{self.high}"


def bleu_by_length(
    sources, hypotheses, references, edges=DEFAULT_EDGES, tokenize="13a"
):
    """Corpus BLEU of each source-length bucket (lengths in whitespace words).

    Buckets are 1..e_1, e_1+1..e_2, ..., and over the last edge; empty
    buckets are left out.
    """
    lengths = [len(source.split()) for source in sources]
    bounds = [(1, edges[0])]
    bounds += [
        (low + 1, high) for low, high in zip(edges, edges[1:], strict=False)
    ]
    bounds.append((edges[-1] + 1, None))
    buckets = []
    for low, high in bounds:
        rows = [
            i
            for i, length in enumerate(lengths)
            if length >= low and (high is None or length <= high)
        ]
        if not rows:
            continue
        score = corpus_bleu(
            [hypotheses[i] for i in rows],
            [references[i] for i in rows],
            tokenize,
        )
        buckets.append(Bucket(low, high, len(rows), score.value))
    return buckets


def buckets_table(named_buckets):
    """A Markdown table: one column per system, one row per bucket."""
    names = list(named_buckets)
    labels = []
    for buckets in named_buckets.values():
        labels += [b.label for b in buckets if b.label not in labels]
    lines = ["| source words | sentences | " + " | ".join(names) + " |"]
    lines.append("|---|---:|" + "---:|" * len(names))
    for label in labels:
        cells, count = [], ""
        for name in names:
            match = [b for b in named_buckets[name] if b.label == label]
            cells.append(f"{match[0].bleu:.2f}" if match else "")
            count = count or (str(match[0].sentences) if match else "")
        lines.append(f"| {label} | {count} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

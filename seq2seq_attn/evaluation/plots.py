"""PNG figures: attention heatmaps (Bahdanau Fig. 3) and BLEU by length
(Bahdanau Fig. 2, Luong Fig. 6). Uses matplotlib's Agg backend."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def attention_heatmap(
    attention, source_tokens, target_tokens, path, title=None
):
    """Saves a grey-scale heatmap of attention [Ty, Tx] with the words on the
    axes (source along the top, target down the side)."""
    attention = np.asarray(attention)[
        : len(target_tokens), : len(source_tokens)
    ]
    height = max(2.5, 0.35 * len(target_tokens) + 1)
    width = max(2.5, 0.35 * len(source_tokens) + 1)
    figure, axes = plt.subplots(figsize=(width, height))
    axes.imshow(attention, cmap="gray", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(source_tokens)))
    axes.set_xticklabels(source_tokens, rotation=90)
    axes.xaxis.tick_top()
    axes.set_yticks(range(len(target_tokens)))
    axes.set_yticklabels(target_tokens)
    if title:
        axes.set_xlabel(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def bleu_by_length_plot(named_buckets, path):
    """Saves a line plot of BLEU per source-length bucket, one line each;
    each bucket's label gives its number of sentences."""
    figure, axes = plt.subplots(figsize=(6, 4))
    for name, buckets in named_buckets.items():
        axes.plot(
            [f"{b.label}\n({b.sentences})" for b in buckets],
            [b.bleu for b in buckets],
            marker="o",
            label=name,
        )
    axes.set_xlabel("source sentence length (words)")
    axes.set_ylabel("BLEU")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path

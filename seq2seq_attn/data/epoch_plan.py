"""The epoch plan: how many steps make an epoch, estimated once from a
sample of the corpus and kept in a file, so that a resumed run and every
worker take the same number of steps.

    steps per epoch = batches of the sample x pairs / sample pairs

(exact when the sample is the whole corpus, as for Multi30k).
"""

import tensorflow as tf

from seq2seq_attn.config.run import read_json
from seq2seq_attn.data.batching import batch_pairs, tokenized_pairs
from seq2seq_attn.data.vocabularies import spread

ESTIMATE_SAMPLE = 50_000


def estimate_epoch(data, sample, pairs, tokenizers, options):
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


def read_epoch(epoch_file, log):
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


def training_stride(pairs, max_train_pairs, log):
    """k, to train on every k-th of `pairs` (at most `max_train_pairs`)."""
    if not max_train_pairs or pairs <= max_train_pairs:
        return 1
    stride = -(-pairs // max_train_pairs)
    log(
        f"training on every {stride}th pair (max_train_pairs "
        f"{max_train_pairs:,}): {-(-pairs // stride):,} pairs"
    )
    return stride

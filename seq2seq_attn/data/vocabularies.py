"""A run's vocabularies: built from a seeded sample of the training
text (`vocab_sample_lines` pairs spread over the corpus, written to a
temporary folder inside the vocabulary folder so that memory does not grow
with it), saved as `source/` and `target/`, and loaded again."""

import contextlib
import itertools
import pathlib
import shutil
import tempfile
import time

from seq2seq_attn.data.tokenizers import build_tokenizer, load_tokenizer

SAMPLE_FOLDER = ".sample-"


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


def draw_sample(text, size, pairs, directory, log):
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
def sample_folder(vocab_dir):
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
        with sample_folder(vocab_dir) as folder:
            sample = draw_sample(
                text, data.vocab_sample_lines, pairs, folder, log
            )
            return build_vocabularies(data, vocab_dir, sample, log)
    vocab_sample = [spread(side, data.vocab_sample_lines) for side in sample]
    return build_vocabularies(data, vocab_dir, vocab_sample, log)


def spread(items, count):
    """At most `count` of `items`, evenly spaced (all if fewer)."""
    step = -(-len(items) // count) if count else 1
    return items[::step]


def load_tokenizers(vocab_dir):
    vocab_dir = pathlib.Path(vocab_dir)
    return tuple(
        load_tokenizer(vocab_dir / side) for side in ("source", "target")
    )

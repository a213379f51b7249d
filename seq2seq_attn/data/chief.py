"""The chief/worker handshake: the chief (worker 0) builds or copies the
vocabularies and writes the epoch plan; the other workers wait for them
and read them, so that every worker uses the same vocabularies and takes
the same number of steps."""

import json
import pathlib
import shutil
import time

from seq2seq_attn.config.run import write_atomically
from seq2seq_attn.data.epoch_plan import ESTIMATE_SAMPLE, estimate_epoch
from seq2seq_attn.data.vocabularies import (
    draw_sample,
    load_tokenizers,
    sample_folder,
    vocabularies_of_text,
)

WORKER_WAIT_SECONDS = 3600


def prepare_as_chief(
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
        load_tokenizers(data.vocab_dir)  # named where the user wrote them
        for side in ("source", "target"):
            shutil.copytree(
                pathlib.Path(data.vocab_dir) / side, vocab_dir / side
            )
        log(f"copied the vocabularies of {data.vocab_dir}")
        have_vocab = True
    if have_vocab and epoch_file.is_file():
        return load_tokenizers(vocab_dir)
    size = ESTIMATE_SAMPLE
    if not have_vocab:
        size = max(size, data.vocab_sample_lines)
    with sample_folder(vocab_dir) as folder:
        sample = draw_sample(text, size, pairs, folder, log)
        if have_vocab:
            tokenizers = load_tokenizers(vocab_dir)
        else:
            tokenizers = vocabularies_of_text(
                data, text, pairs, vocab_dir, log, sample
            )
        if not epoch_file.is_file():
            epoch = estimate_epoch(
                data, sample, -(-pairs // stride), tokenizers, options
            )
            write_atomically(epoch_file, json.dumps(epoch, indent=2) + "\n")
    return tokenizers


def wait_for_chief(path, seconds, log):
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


def tokenizers_of_chief(vocab_dir, epoch_file, log):
    """Another worker's tokenizers: those the chief wrote to `vocab_dir`,
    once it has written `epoch_file` (last)."""
    wait_for_chief(epoch_file, WORKER_WAIT_SECONDS, log)
    return load_tokenizers(vocab_dir)

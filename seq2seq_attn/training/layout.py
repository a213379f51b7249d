"""The layout of a model directory, which training writes and the other
commands read (`seq2seq_attn.model_dir` loads a trained model from it).

MODEL_DIR/
  config.json          RunConfig: model, data and training configs
  flags.txt            the train flags actually used
  vocab/source/        source tokenizer (see data.tokenizers)
  vocab/target/        target tokenizer
  vocab/checksums.json each side's vocabulary sha256, checked on loading
  checkpoints/         latest checkpoints (model, optimizer, step, data
                       iterator), every N steps and at each epoch's end
  best/                the checkpoint with the best validation BLEU,
                       and best/metrics.json
  logs/                TensorBoard events
  train_log.tsv        step, epoch, loss, learning rate, tokens/s
  validation.tsv       epoch, step, perplexity, BLEU: each epoch's end and
                       the last step
  data_identity.json   what the training data is (corpus or file sha256),
                       checked when the run is resumed
  epoch.json           the epoch length in steps (pairs counted by the
                       pre-pass, batches of a sample), kept on resume
  train.lock           held by the process training into the directory
                       (see training.run_lock): one writer at a time
"""

import json
import pathlib

from seq2seq_attn.config.run import read_json, write_atomically
from seq2seq_attn.training.checkpoints import checkpoint_prefixes


class ModelDir:
    """Paths inside a model directory."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.config = self.path / "config.json"
        self.flags = self.path / "flags.txt"
        self.vocab = self.path / "vocab"
        self.vocab_checksums = self.vocab / "checksums.json"
        self.checkpoints = self.path / "checkpoints"
        self.best = self.path / "best"
        self.logs = self.path / "logs"
        self.train_log = self.path / "train_log.tsv"
        self.validation_log = self.path / "validation.tsv"
        self.data_identity = self.path / "data_identity.json"
        self.epoch = self.path / "epoch.json"

    def write_vocab_checksums(self, source_tokenizer, target_tokenizer):
        """Records each side's vocabulary sha256 (`vocab/checksums.json`),
        and under "options" each side's `tokenizer.json` options, which
        loading checks."""
        checksums = {
            "source": source_tokenizer.fingerprint(),
            "target": target_tokenizer.fingerprint(),
            # Plain dicts: a tf.Module wraps the ones it holds.
            "options": {
                "source": dict(source_tokenizer.options),
                "target": dict(target_tokenizer.options),
            },
        }
        write_atomically(
            self.vocab_checksums, json.dumps(checksums, indent=2) + "\n"
        )

    def check_vocab_checksums(self, tokenizers):
        """Refuses a tokenizer of `tokenizers` (`{side: tokenizer}`) whose
        files are not those the model was trained with (a model directory
        written before `vocab/checksums.json` has none, and is not
        checked), naming the file: source and target swapped, or a
        vocabulary rebuilt in place; and options of `tokenizer.json` that
        are not those recorded (where they are: a directory written before
        they were has none)."""
        if not self.vocab_checksums.is_file():
            return
        recorded = read_json(self.vocab_checksums)
        for side, tokenizer in tokenizers.items():
            options = recorded.get("options", {}).get(side)
            if options is not None and options != dict(tokenizer.options):
                raise ValueError(
                    f"{tokenizer.directory / 'tokenizer.json'}: options "
                    f"{json.dumps(dict(tokenizer.options))} are not those "
                    f"this model was trained with ({json.dumps(options)}, "
                    f"recorded in {self.vocab_checksums})"
                )
            found = tokenizer.fingerprint()
            if found == recorded.get(side):
                continue
            other = {"source": "target", "target": "source"}[side]
            swapped = found == recorded.get(other)
            raise ValueError(
                f"{tokenizer.files()[0]}: not the {side} vocabulary this "
                f"model was trained with (its sha256 is not the one in "
                f"{self.vocab_checksums}"
                + (
                    f"; it is the {other} vocabulary: swapped?)"
                    if swapped
                    else ")"
                )
            )

    def vocab_dir(self, side):
        """`vocab/source` or `vocab/target`."""
        return self.vocab / side

    def checkpoint_candidates(self, which="best"):
        """Checkpoint prefixes to try, the preferred first: "latest" is the
        training checkpoints, newest first; "best" is the best one, then
        those (so that a damaged or missing best falls back); any other
        value is a checkpoint path given as is."""
        if which not in ("best", "latest"):
            return [str(which)]
        found = checkpoint_prefixes(self.checkpoints)
        if which == "best":
            found = checkpoint_prefixes(self.best) + found
        if not found:
            raise FileNotFoundError(f"no checkpoint in {self.path}")
        return found

    def best_metrics(self):
        """The metrics of the best checkpoint, or None."""
        path = self.best / "metrics.json"
        return read_json(path) if path.is_file() else None

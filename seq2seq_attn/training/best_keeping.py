"""What each validation decides: the best checkpoint by BLEU kept apart in
`best/` (with its metrics), the validation log's row, and early stopping
after `early_stopping_patience` validations without a better BLEU. Its
counters live in the training checkpoint (`training_state`), so a resumed
run goes on counting."""

import json

from seq2seq_attn.config.run import write_atomically
from seq2seq_attn.training.resume import VALIDATION_LOG_HEADER, append_rows


class BestKeeping:
    """The best BLEU so far, the validations since it, and the step last
    validated, over a run's checkpoints.

    Args:
        state: `training_state(...)`: its `best_bleu`, `bad_validations`
            and `validated_step` variables.
        checkpoints: the run's `TrainingCheckpoints` (`save_best`).
        paths: the run's `ModelDir`.
        chief: whether this worker writes the run directory's files.
        patience: `early_stopping_patience` (0: never stop).
        log: where progress lines go.
    """

    def __init__(self, state, checkpoints, paths, chief, patience, log):
        self.best_bleu = state["best_bleu"]
        self.bad_validations = state["bad_validations"]
        self.validated_step = state["validated_step"]
        self.checkpoints = checkpoints
        self.paths = paths
        self.chief = chief
        self.patience = patience
        self.log = log

    def record(self, epoch, step, metrics):
        """Keeps the weights in use as `best/` if `metrics`' BLEU is the
        best yet, logs the validation's row and marks `step` validated
        (saved with the next checkpoint: a kill before it repeats the
        validation on resume, and the row is cut from the log)."""
        bleu, perplexity = metrics["bleu"], metrics["perplexity"]
        if bleu > float(self.best_bleu.numpy()):
            self.best_bleu.assign(bleu)
            self.bad_validations.assign(0)
            self.checkpoints.save_best(step)
            if self.chief:
                write_atomically(
                    self.paths.best / "metrics.json",
                    json.dumps(metrics, indent=2) + "\n",
                )
        else:
            self.bad_validations.assign_add(1)
        if self.chief:
            append_rows(
                self.paths.validation_log,
                VALIDATION_LOG_HEADER,
                [f"{epoch}\t{step}\t{perplexity:.4f}\t{bleu:.2f}\n"],
            )
        self.validated_step.assign(step)

    def stop_early(self):
        """Whether validation has not improved for `patience` validations
        (also true when a resumed run had already stopped), said once."""
        if self.patience and int(self.bad_validations.numpy()) >= self.patience:
            self.log(
                f"early stopping: no better BLEU in {self.patience} "
                f"validation(s); best {float(self.best_bleu.numpy()):.2f}"
            )
            return True
        return False

"""The training loop: a `tf.function` step under a `tf.distribute` strategy,
crash-safe checkpoints, validation BLEU, TensorBoard and a progress bar.

Checkpoints hold the model, the optimizer, the step and the `tf.data`
iterator, so running the same command on the same model directory resumes
exactly where the last checkpoint left off, also after `kill -9`. The loss is
the token-level cross-entropy, summed over every replica's target tokens and
divided by the global number of target tokens, so padding costs nothing and
the result does not depend on how a batch is split across replicas.
"""

import dataclasses

import keras
import tensorflow as tf

from seq2seq_attn.config.run import write_atomically
from seq2seq_attn.data.training_data import training_data
from seq2seq_attn.data.vocabularies import check_joint_vocabulary
from seq2seq_attn.models.builder import build_model
from seq2seq_attn.training.best_keeping import BestKeeping
from seq2seq_attn.training.checkpoints import (
    TrainingCheckpoints,
    training_state,
)
from seq2seq_attn.training.divergence import DivergenceGuard
from seq2seq_attn.training.interruption import StopAtStep, TrainingInterrupted
from seq2seq_attn.training.layout import ModelDir
from seq2seq_attn.training.losses import training_loss
from seq2seq_attn.training.optimizers import (
    inner_optimizer,
    learning_rate,
    make_optimizer,
)
from seq2seq_attn.training.progress import EpochProgress, write_summaries
from seq2seq_attn.training.resume import (
    TRAIN_LOG_HEADER,
    append_rows,
    changes_on_resume,
    check_data_identity,
    cut_logs_to_checkpoint,
    last_validation,
    tsv_rows,
)
from seq2seq_attn.training.run_lock import (
    LOCK_FILE,
    hold_run_directory,
    removed_if_setup_fails,
)
from seq2seq_attn.training.step import make_train_step
from seq2seq_attn.training.strategy import (
    is_chief,
    num_workers,
    shard_index,
    worker_index,
)
from seq2seq_attn.training.validation import Validation, validation_due
from seq2seq_attn.training.weight_average import averaged_in


class Trainer:
    """Trains the model of a `RunConfig` into a model directory.

    Args:
        run: a `RunConfig` whose model vocabulary sizes may be left to the
            tokenizers (they are set from them).
        model_dir: where everything is written (see `seq2seq_attn.model_dir`).
        strategy: a `tf.distribute.Strategy` (default: the default one).
        flags_text: the flags to record in `flags.txt`.
        log: where progress lines go.

    Raises:
        ValueError: `run` cannot be trained (`RunConfig.check_trainable`),
            said before anything is written.
        RunDirectoryLockedError: another process is training into
            `model_dir` (the chief holds its lock, `run_lock`, from here to
            the end of the process); nothing there is changed.
    """

    def __init__(
        self, run, model_dir, strategy=None, flags_text=None, log=print
    ):
        run.check_trainable()
        self.paths = ModelDir(model_dir)
        self.strategy = strategy or tf.distribute.get_strategy()
        self.log = log
        self.chief = is_chief()
        path = self.paths.path
        existed = path.exists()
        fresh = not existed or {p.name for p in path.iterdir()} <= {LOCK_FILE}
        if self.chief:
            # Before anything is written: a second trainer changes nothing.
            hold_run_directory(path)
        with removed_if_setup_fails(path, existed, fresh and self.chief):
            self._set_up(run, flags_text)

    def _set_up(self, run, flags_text):
        log, data = self.log, run.data
        self.changes = changes_on_resume(self.paths, run)
        self.paths.path.mkdir(parents=True, exist_ok=True)
        prepared = training_data(
            data,
            self.paths.vocab,
            self.paths.epoch,
            seed=run.train.seed,
            pad_to_bucket_boundary=run.train.jit_compile,
            num_workers=num_workers(),
            worker_index=shard_index(),
            log=log,
        )
        if self.chief:
            check_data_identity(self.paths.data_identity, prepared.identity)
        self.source_tokenizer = prepared.source_tokenizer
        self.target_tokenizer = prepared.target_tokenizer
        check_joint_vocabulary(
            run.model.tie_embeddings,
            self.source_tokenizer,
            self.target_tokenizer,
        )
        model_config = run.model.replace(
            source_vocab_size=self.source_tokenizer.vocab_size,
            target_vocab_size=self.target_tokenizer.vocab_size,
        )
        self.run = dataclasses.replace(run, model=model_config)
        if self.chief:
            self.run.save(self.paths.path)
            self.paths.write_vocab_checksums(
                self.source_tokenizer, self.target_tokenizer
            )
            if flags_text is not None:
                write_atomically(self.paths.flags, flags_text)
        # Updates per epoch: `accumulate_batches` batches make one.
        self.steps_per_epoch = max(
            prepared.steps_per_epoch // run.train.accumulate_batches, 1
        )
        self.dataset = prepared.train
        self._build(run.train)
        self.valid = Validation.of_run(self.model, prepared, self.run)

    def _build(self, train):
        keras.utils.set_random_seed(train.seed)
        if train.mixed_precision:
            keras.mixed_precision.set_global_policy(train.mixed_precision)
        with self.strategy.scope():
            self.model = build_model(self.run.model)
            self.optimizer = make_optimizer(train, self.steps_per_epoch)
            self.optimizer.build(self.model.trainable_variables)
            state = training_state(self.model, self.optimizer, train.ema_decay)
        self.weight_average = state.get("weight_average")
        self.step = state["step"]
        self.iterator = iter(self.dataset)
        directory, best_directory = self.paths.checkpoints, self.paths.best
        if not self.chief:
            worker = self.paths.path / "workers" / str(worker_index())
            directory, best_directory = worker / "ckpt", worker / "best"
        self.checkpoints = TrainingCheckpoints(
            state,
            self.iterator,
            directory,
            best_directory,
            train.keep_checkpoints,
            self.log,
        )
        self.best = BestKeeping(
            state,
            self.checkpoints,
            self.paths,
            self.chief,
            train.early_stopping_patience,
            self.log,
        )
        if self.chief:
            cut_logs_to_checkpoint(
                self.paths,
                int(self.step.numpy()),
                int(self.best.validated_step.numpy()),
                self.log,
            )
        if self.checkpoints.last:
            self._resume_from_checkpoint(train)
        # The summed token cross-entropy (label-smoothed if asked); the
        # validation's perplexity is the plain one.
        self.loss_fn = training_loss(train.label_smoothing)
        if train.label_smoothing:
            self.log(_SMOOTHING.format(train.label_smoothing))
        if train.ema_decay:
            self.log(_AVERAGE.format(train.ema_decay))
        self._train_step = make_train_step(
            self.model,
            self.optimizer,
            self.strategy,
            self.loss_fn,
            self.step,
            jit_compile=train.jit_compile,
            accumulate_batches=train.accumulate_batches,
            weight_average=self.weight_average,
        )

    def _resume_from_checkpoint(self, train):
        """Applies the flags that changed, and says so."""
        step = int(self.step.numpy())
        # The configured rate, also when the command changed it: a constant
        # rate is a variable of the optimizer, restored with it.
        if train.schedule == "constant":
            inner_optimizer(self.optimizer).learning_rate.assign(
                train.learning_rate
            )
        self.log(f"resuming from {self.checkpoints.last} (step {step})")
        for section, field, old, new in self.changes:
            self.log(f"resumed with {section} flag --{field}: {old} -> {new}")

    def _save(self):
        return self.checkpoints.save(int(self.step.numpy()))

    def fit(self):
        """Trains to the configured number of epochs (or steps), validating
        after each epoch and at the last step (and first the validation a
        kill cut short). Returns the last validation metrics (or {}).

        Raises:
            TrainingInterrupted: Ctrl-C; the run stopped after the step in
                progress and saved it (`StopAtStep`).
            TrainingDivergedError: the loss diverged (`DivergenceGuard`).
        """
        with StopAtStep() as self.interruption:
            return self._fit()

    def _fit(self):
        train = self.run.train
        total_steps = train.epochs * self.steps_per_epoch
        if train.max_steps:
            total_steps = min(total_steps, train.max_steps)
        writer = (
            tf.summary.create_file_writer(str(self.paths.logs / "train"))
            if self.chief
            else tf.summary.create_noop_writer()
        )
        self.log(
            _plan(self.run, self.model, self.steps_per_epoch, total_steps)
            + f", {self.strategy.num_replicas_in_sync} replica(s)"
        )
        self.guard = DivergenceGuard(
            train.divergence_factor,
            train.divergence_window,
            history=[float(row[2]) for row in tsv_rows(self.paths.train_log)],
        )
        metrics = {}
        if self._validation_due(total_steps):
            # A kill cut it short: the epoch the step ends (a partial one
            # counts).
            step = int(self.step.numpy())
            metrics = self.validate(-(-step // self.steps_per_epoch), writer)
        while (
            not self.best.stop_early() and int(self.step.numpy()) < total_steps
        ):
            epoch = int(self.step.numpy()) // self.steps_per_epoch
            self._train_epoch(epoch, total_steps, writer)
            if self._validation_due(total_steps):
                metrics = self.validate(epoch + 1, writer)
            if self.interruption.requested:  # during the validation
                step = int(self.step.numpy())
                raise TrainingInterrupted(step, self.checkpoints.last)
        writer.close()
        return metrics or last_validation(self.paths.validation_log)

    def _validation_due(self, total_steps):
        """`validation_due` at the current step (never without validation
        data)."""
        return self.valid is not None and validation_due(
            int(self.step.numpy()),
            self.steps_per_epoch,
            total_steps,
            int(self.best.validated_step.numpy()),
        )

    def _train_epoch(self, epoch, total_steps, writer):
        """Trains from the current step to the end of `epoch` (or
        `total_steps`), checkpointing every `checkpoint_every` steps and at
        the end."""
        train = self.run.train
        in_epoch = int(self.step.numpy()) % self.steps_per_epoch
        steps_this_epoch = min(
            self.steps_per_epoch, total_steps - epoch * self.steps_per_epoch
        )
        progress = EpochProgress(epoch, steps_this_epoch, in_epoch)
        resumed = f", resumed after step {in_epoch} of {steps_this_epoch}"
        self.log(f"epoch {epoch + 1}/{train.epochs}{resumed * bool(in_epoch)}")
        while in_epoch < steps_this_epoch:
            loss, tokens, norm = self._train_step(self.iterator)
            loss, tokens = float(loss.numpy()), float(tokens.numpy())
            step = int(self.step.numpy())
            in_epoch += 1
            self.guard.check(loss, step, epoch, self.checkpoints.last)
            rate = learning_rate(self.optimizer)
            speed = progress.add(in_epoch, step, loss, tokens, rate)
            if step % train.log_every == 0 or in_epoch == steps_this_epoch:
                write_summaries(writer, step, loss, norm, speed, rate)
                progress.restart_window()
            if self.interruption.requested:
                self._flush_log(progress.rows)
                raise TrainingInterrupted(step, self._save())
            if step % train.checkpoint_every == 0 or (
                in_epoch == steps_this_epoch
            ):
                self._flush_log(progress.rows)
                self._save()
        self.log(progress.summary())

    def _flush_log(self, lines):
        if self.chief and lines:
            append_rows(self.paths.train_log, TRAIN_LOG_HEADER, lines)
        lines.clear()

    def validate(self, epoch, writer=None):
        """Perplexity and greedy BLEU on the validation text, recorded
        (`BestKeeping`: best/, the log, early stopping); with `ema_decay`,
        those of the weight average (`best/` holds the average)."""
        step = int(self.step.numpy())
        with averaged_in(self.weight_average, self.model.trainable_variables):
            metrics = self.valid.measure(epoch, step, self.log)
            self.best.record(epoch, step, metrics)
        self._save()
        if writer is not None:
            self.valid.write_summaries(writer, metrics)
        return metrics


_AVERAGE = (
    "weights averaged, decay {:g}: validation, best/ and the export use "
    "the average"
)
_SMOOTHING = (
    "label smoothing {:g} in the training loss (the bar's loss and ppl); "
    "validation perplexity without it"
)


def _plan(run, model, steps_per_epoch, total_steps):
    """The line that says what is trained, and for how long."""
    line = (
        f"training {run.model.architecture}: {model.count_params():,} "
        f"parameters, {steps_per_epoch} steps per epoch, {total_steps} steps "
        "in all"
    )
    if run.train.accumulate_batches > 1:
        return line + f", {run.train.accumulate_batches} batches per step"
    return line

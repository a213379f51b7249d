"""The training loop: a `tf.function` step under a `tf.distribute` strategy,
crash-safe checkpoints, validation BLEU, TensorBoard and a progress bar.

Checkpoints hold the model, the optimizer, the step and the `tf.data`
iterator, so running the same command on the same model directory resumes
exactly where the last checkpoint left off, also after `kill -9`. The loss is
the token-level cross-entropy, summed over every replica's target tokens and
divided by the global number of target tokens, so padding costs nothing and
the result does not depend on how a batch is split across replicas.
"""

import contextlib
import dataclasses
import json
import shutil
import sys
import time

import keras
import tensorflow as tf

from seq2seq_attn.data.training_data import training_data
from seq2seq_attn.models.builder import build_model, packed_model
from seq2seq_attn.models.shared_layers import real_target_positions
from seq2seq_attn.special_tokens import PAD_ID
from seq2seq_attn.training.checkpoints import (
    DamagedCheckpointError,
    checkpoint_prefixes,
    remove_partial_writes,
    restore_newest_intact,
)
from seq2seq_attn.training.config import RunConfig, write_atomically
from seq2seq_attn.training.divergence import (
    DivergenceGuard,
    TrainingDivergedError,
)
from seq2seq_attn.training.layout import ModelDir
from seq2seq_attn.training.optimizers import make_optimizer
from seq2seq_attn.training.progress import EpochMeter, perplexity
from seq2seq_attn.training.resume import (
    check_data_identity,
    resumable_changes,
    truncate_log,
    tsv_rows,
)
from seq2seq_attn.training.run_lock import (
    LOCK_FILE,
    hold_run_directory,
    release_run_directory,
)
from seq2seq_attn.training.strategy import (
    is_chief,
    num_workers,
    replica_shard,
    shard_index,
    worker_index,
)
from seq2seq_attn.training.validation import Validation

TRAIN_LOG_HEADER = "step\tepoch\tloss\tlearning_rate\ttokens_per_s\n"
VALIDATION_LOG_HEADER = "epoch\tstep\tperplexity\tbleu\n"


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
        RunDirectoryLockedError: another process is training into
            `model_dir` (the chief holds its lock, `run_lock`, from here to
            the end of the process); nothing there is changed.
    """

    def __init__(
        self, run, model_dir, strategy=None, flags_text=None, log=print
    ):
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
        with self._removed_if_setup_fails(existed, fresh):
            self._set_up(run, flags_text)

    @contextlib.contextmanager
    def _removed_if_setup_fails(self, existed, fresh):
        """Bad data or flags leave nothing behind in a new model directory
        (no vocabulary of an empty corpus, no empty run folder)."""
        path = self.paths.path
        try:
            yield
        except BaseException:
            if fresh and self.chief and path.exists():
                if existed:
                    for child in path.iterdir():
                        if child.is_dir():
                            shutil.rmtree(child)
                        else:
                            child.unlink()
                else:
                    shutil.rmtree(path)
                release_run_directory(path)
            raise

    def _set_up(self, run, flags_text):
        log, data = self.log, run.data
        self.changes = self._check_resumable(run)
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
        if data.tokenizer == "word" and data.corpus and data.variant == "raw":
            log(
                "note: the word tokenizer splits raw text at whitespace only, "
                'so "bicycle." and "bicycle" are different words and the '
                "output stays split the same way; --tokenizer=sentencepiece "
                "reads and writes raw text"
            )
        self.source_tokenizer = prepared.source_tokenizer
        self.target_tokenizer = prepared.target_tokenizer
        model_config = run.model.replace(
            source_vocab_size=self.source_tokenizer.vocab_size,
            target_vocab_size=self.target_tokenizer.vocab_size,
        )
        self.run = dataclasses.replace(run, model=model_config)
        if self.chief:
            self.run.save(self.paths.path)
            checksums = {
                "source": self.source_tokenizer.fingerprint(),
                "target": self.target_tokenizer.fingerprint(),
            }
            write_atomically(
                self.paths.vocab_checksums,
                json.dumps(checksums, indent=2) + "\n",
            )
            if flags_text is not None:
                write_atomically(self.paths.flags, flags_text)
        self.steps_per_epoch = prepared.steps_per_epoch
        self.dataset = prepared.train
        self._build(run.train)
        self.valid = None
        if prepared.validation is not None:
            model = self.run.model
            self.valid = Validation(
                self.model,
                self.source_tokenizer,
                self.target_tokenizer,
                prepared.validation,
                prepared.validation_batches,
                self.loss_fn,
                self.run.data.bleu_tokenize,
                attention=model.architecture != "rnnencdec"
                and not (
                    model.architecture == "luong" and model.score == "none"
                ),
            )

    def _check_resumable(self, run):
        """The changes of a resumed run's flags that may change (see
        `config.RESUMABLE`); refuses the others, naming them."""
        if not self.paths.config.is_file():
            return []
        recorded = RunConfig.load(self.paths.path)
        return resumable_changes(recorded, run, self.paths.path)

    def _build(self, train):
        keras.utils.set_random_seed(train.seed)
        if train.mixed_precision:
            keras.mixed_precision.set_global_policy(train.mixed_precision)
        with self.strategy.scope():
            self.model = build_model(self.run.model)
            self.optimizer = make_optimizer(train, self.steps_per_epoch)
            self.optimizer.build(self.model.trainable_variables)
            self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
            self.best_bleu = tf.Variable(
                -1.0, dtype=tf.float64, trainable=False
            )
            self.bad_validations = tf.Variable(
                0, dtype=tf.int64, trainable=False
            )
            # The step of the last validation whose results were recorded:
            # one cut short by a kill is run again on resume.
            self.validated_step = tf.Variable(
                0, dtype=tf.int64, trainable=False
            )
        self.iterator = iter(self.dataset)
        state = dict(
            model=self.model,
            optimizer=self.optimizer,
            step=self.step,
            best_bleu=self.best_bleu,
            bad_validations=self.bad_validations,
            validated_step=self.validated_step,
            # Dropout's random state: Keras keeps it out of the model's
            # checkpoint, but a resumed run must draw the same masks.
            seed_states={
                str(i): v
                for i, v in enumerate(self.model.non_trainable_variables)
                if "seed_generator" in v.path
            },
        )
        checkpoint = tf.train.Checkpoint(iterator=self.iterator, **state)
        directory, best_directory = self.paths.checkpoints, self.paths.best
        if not self.chief:
            worker = self.paths.path / "workers" / str(worker_index())
            directory, best_directory = worker / "ckpt", worker / "best"
        for folder in (directory, best_directory):
            for name in remove_partial_writes(folder):
                self.log(f"removed {folder / name}, a write cut short")
        self.manager = tf.train.CheckpointManager(
            checkpoint,
            str(directory),
            max_to_keep=train.keep_checkpoints,
            checkpoint_name="ckpt",
        )
        self.best_manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(model=self.model, step=self.step),
            str(best_directory),
            max_to_keep=1,
            checkpoint_name="ckpt",
        )
        self.last_checkpoint = self._restore(checkpoint, state, directory)
        self._cut_logs_to_checkpoint()
        if self.last_checkpoint:
            self._resume_from_checkpoint(train)
        # The summed token cross-entropy, of training and validation alike.
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD_ID, reduction="sum"
        )
        self._train_step = self._make_train_step(train)

    def _restore(self, checkpoint, state, directory):
        """Restores the newest intact checkpoint of `directory`; returns its
        prefix (None for a new run). A checkpoint whose data iterator does
        not read (one written before the streaming pipeline) restores the
        rest of its `state` and says that the data start over."""
        prefixes, lines = checkpoint_prefixes(directory), []
        try:
            prefix = restore_newest_intact(checkpoint, prefixes, lines.append)
            for line in lines:
                self.log(line)
            return prefix
        except DamagedCheckpointError as error:
            try:
                prefix = restore_newest_intact(
                    tf.train.Checkpoint(**state),
                    prefixes,
                    log=lambda line: None,
                    partial=True,
                )
            except (DamagedCheckpointError, AssertionError):
                for line in lines:
                    self.log(line)
                raise error from None
            self.log(
                f"warning: {prefix} holds a data iterator this version cannot "
                "read (written before training data were streamed); resuming "
                "its model and optimizer with the training pairs in a new order"
            )
            return prefix
        except AssertionError as error:
            raise ValueError(
                f"the checkpoints in {directory} do not match this model: "
                f"{str(error).splitlines()[0]}"
            ) from error

    def _cut_logs_to_checkpoint(self):
        """Cuts the logs back to the restored step (to their header where
        no checkpoint was restored), so that the rows of steps a kill lost
        are not logged twice; a log that a kill or a full disk left empty
        or cut short is repaired."""
        if not self.chief:
            return
        for path, header, column, step in (
            (self.paths.train_log, TRAIN_LOG_HEADER, 0, self.step),
            (
                self.paths.validation_log,
                VALIDATION_LOG_HEADER,
                1,
                self.validated_step,
            ),
        ):
            dropped = truncate_log(path, header, column, int(step.numpy()))
            if dropped:
                self.log(
                    f"removed {dropped} row(s) of {path.name} past the "
                    f"checkpoint (step {int(step.numpy())})"
                )

    def _resume_from_checkpoint(self, train):
        """Applies the flags that changed, and says so."""
        step = int(self.step.numpy())
        # The configured rate, also when the command changed it: a constant
        # rate is a variable of the optimizer, restored with it.
        if train.schedule == "constant":
            self._inner_optimizer().learning_rate.assign(train.learning_rate)
        self.log(f"resuming from {self.last_checkpoint} (step {step})")
        for section, field, old, new in self.changes:
            self.log(f"resumed with {section} flag --{field}: {old} -> {new}")

    def _make_train_step(self, train):
        loss_fn = self.loss_fn
        model, optimizer, strategy = self.model, self.optimizer, self.strategy
        scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)

        variables = model.trainable_variables
        # The output layer and the loss on the real target positions only;
        # XLA needs static shapes, so it gets the padded logits.
        packed = None if train.jit_compile else packed_model(model)

        def loss_and_gradients(
            source, target_input, target_output, total_tokens
        ):
            with tf.GradientTape() as tape:
                if packed is None:
                    logits = model([source, target_input], training=True)
                    labels = target_output
                else:
                    logits = packed([source, target_input], training=True)
                    (labels,) = real_target_positions(
                        target_input, target_output
                    )
                loss_sum = loss_fn(labels, logits)
                loss = loss_sum / tf.maximum(total_tokens, 1.0)
                objective = optimizer.scale_loss(loss) if scaled else loss
            return loss_sum, tape.gradient(objective, variables)

        if train.jit_compile:
            # The forward and backward passes through XLA, compiled once per
            # batch shape; the optimizer update stays outside.
            loss_and_gradients = tf.function(
                loss_and_gradients, jit_compile=True
            )

        def replica_step(batch):
            (source, target_input), target_output = replica_shard(batch)
            tokens = tf.reduce_sum(tf.cast(target_output != PAD_ID, tf.float32))
            context = tf.distribute.get_replica_context()
            total_tokens = context.all_reduce("sum", tokens)
            loss_sum, gradients = loss_and_gradients(
                source, target_input, target_output, total_tokens
            )
            norm = tf.linalg.global_norm(gradients)
            if scaled:
                norm /= tf.cast(optimizer.dynamic_scale, norm.dtype)
            optimizer.apply_gradients(zip(gradients, variables, strict=True))
            return loss_sum, tokens, norm

        def train_step(iterator):
            batch = next(iterator)
            loss_sum, tokens, norm = strategy.run(replica_step, args=(batch,))
            loss_sum = strategy.reduce("sum", loss_sum, axis=None)
            tokens = strategy.reduce("sum", tokens, axis=None)
            # Before clipping; with several replicas, the mean of the norms of
            # each replica's share of the gradient.
            norm = strategy.reduce("mean", norm, axis=None)
            self.step.assign_add(1)
            return loss_sum / tf.maximum(tokens, 1.0), tokens, norm

        return tf.function(train_step)

    def _inner_optimizer(self):
        """The optimizer inside a `LossScaleOptimizer` (or the optimizer)."""
        return getattr(self.optimizer, "inner_optimizer", self.optimizer)

    def learning_rate(self):
        """The optimizer's current learning rate."""
        rate = self._inner_optimizer().learning_rate
        return float(keras.ops.convert_to_numpy(rate))

    def _save(self):
        step = int(self.step.numpy())
        self.last_checkpoint = self.manager.save(checkpoint_number=step)
        return self.last_checkpoint

    def fit(self):
        """Trains to the configured number of epochs (or steps), validating
        after each epoch (and first the validation a kill cut short).
        Returns the last validation metrics (or {})."""
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
            f"training {self.run.model.architecture}: "
            f"{self.model.count_params():,} parameters, {self.steps_per_epoch} "
            f"steps per epoch, {total_steps} steps in all, "
            f"{self.strategy.num_replicas_in_sync} replica(s)"
        )
        self.guard = DivergenceGuard(
            train.divergence_factor,
            train.divergence_window,
            history=[float(row[2]) for row in tsv_rows(self.paths.train_log)],
        )
        metrics = {}
        if self._validation_missed():
            metrics = self.validate(
                int(self.step.numpy()) // self.steps_per_epoch, writer
            )
        while not self._stop_early() and int(self.step.numpy()) < total_steps:
            epoch = int(self.step.numpy()) // self.steps_per_epoch
            self._train_epoch(epoch, total_steps, writer)
            if self._validation_missed():
                metrics = self.validate(epoch + 1, writer)
        writer.close()
        return metrics or self._last_validation()

    def _validation_missed(self):
        """Whether the run stands at an epoch's end that has no recorded
        validation (a kill cut it short)."""
        step = int(self.step.numpy())
        return (
            self.valid is not None
            and step > 0
            and step % self.steps_per_epoch == 0
            and int(self.validated_step.numpy()) < step
        )

    def _last_validation(self):
        rows = tsv_rows(self.paths.validation_log)
        if not rows:
            return {}
        epoch, step, logged_perplexity, bleu = rows[-1][:4]
        return dict(
            epoch=int(epoch),
            step=int(step),
            perplexity=float(logged_perplexity),
            bleu=float(bleu),
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
        bar = keras.utils.Progbar(
            steps_this_epoch,
            stateful_metrics=["loss", "ppl", "tok/s"],
            verbose=1 if sys.stdout.isatty() else 2,
        )
        if in_epoch:
            bar.update(in_epoch)
        self.log(f"epoch {epoch + 1}/{train.epochs}")
        log_lines = []
        window = [0.0, time.perf_counter()]  # tokens, start
        meter = EpochMeter()
        while in_epoch < steps_this_epoch:
            loss, tokens, norm = self._train_step(self.iterator)
            loss, tokens = float(loss.numpy()), float(tokens.numpy())
            step = int(self.step.numpy())
            in_epoch += 1
            try:
                self.guard.check(loss, step)
            except TrainingDivergedError as error:
                kept = (
                    f"the last checkpoint is {self.last_checkpoint}"
                    if self.last_checkpoint
                    else "no checkpoint was saved before it"
                )
                raise type(error)(
                    f"{error} (epoch {epoch + 1}); nothing was saved after "
                    f"it, {kept}"
                ) from None
            window[0] += tokens
            meter.add(loss, tokens)
            speed = window[0] / max(time.perf_counter() - window[1], 1e-9)
            log_lines.append(
                f"{step}\t{epoch + 1}\t{loss:.6f}\t"
                f"{self.learning_rate():.6g}\t{speed:.1f}\n"
            )
            bar.update(
                in_epoch,
                [
                    ("loss", meter.loss),
                    ("ppl", meter.perplexity),
                    ("tok/s", meter.tokens_per_second),
                ],
            )
            if step % train.log_every == 0 or in_epoch == steps_this_epoch:
                self._summaries(writer, step, loss, norm, speed)
                window = [0.0, time.perf_counter()]
            if step % train.checkpoint_every == 0 or (
                in_epoch == steps_this_epoch
            ):
                self._flush_log(log_lines)
                self._save()
        self.log(
            f"epoch {epoch + 1}: {meter.tokens:,.0f} target tokens in "
            f"{meter.seconds:.1f} s of training "
            f"({meter.tokens_per_second:,.1f} tokens/s, mean loss "
            f"{meter.loss:.4f})"
        )

    def _summaries(self, writer, step, loss, norm, speed):
        with writer.as_default(step=step):
            tf.summary.scalar("loss", loss)
            tf.summary.scalar("perplexity", perplexity(loss))
            tf.summary.scalar("learning_rate", self.learning_rate())
            tf.summary.scalar("gradient_norm", float(norm.numpy()))
            tf.summary.scalar("target_tokens_per_second", speed)

    def _flush_log(self, lines):
        if self.chief and lines:
            _append(self.paths.train_log, TRAIN_LOG_HEADER, lines)
        lines.clear()

    def validate(self, epoch, writer=None):
        """Perplexity and greedy BLEU on the validation text; keeps the best
        checkpoint by BLEU apart."""
        started = time.perf_counter()
        mean_perplexity = self.valid.perplexity()
        bleu, hypotheses = self.valid.bleu()
        step = int(self.step.numpy())
        metrics = dict(
            epoch=epoch,
            step=step,
            perplexity=mean_perplexity,
            bleu=bleu.value,
            bleu_signature=bleu.signature,
            example=hypotheses[0] if hypotheses else "",
        )
        self.log(
            f"validation after epoch {epoch}: perplexity "
            f"{mean_perplexity:.2f}, "
            f"greedy {bleu} [{time.perf_counter() - started:.0f} s]"
        )
        if bleu.value > float(self.best_bleu.numpy()):
            self.best_bleu.assign(bleu.value)
            self.bad_validations.assign(0)
            self.best_manager.save(checkpoint_number=step)
            if self.chief:
                write_atomically(
                    self.paths.best / "metrics.json",
                    json.dumps(metrics, indent=2) + "\n",
                )
        else:
            self.bad_validations.assign_add(1)
        if self.chief:
            _append(
                self.paths.validation_log,
                VALIDATION_LOG_HEADER,
                [f"{epoch}\t{step}\t{mean_perplexity:.4f}\t{bleu.value:.2f}\n"],
            )
        # Recorded with the checkpoint: a kill before this line repeats the
        # validation on resume, and the row above is cut from the log.
        self.validated_step.assign(step)
        self._save()
        if writer is not None:
            with writer.as_default(step=step):
                tf.summary.scalar("validation/perplexity", mean_perplexity)
                tf.summary.scalar("validation/bleu", bleu.value)
                self.valid.attention_images()
        return metrics

    def _stop_early(self):
        """Whether validation has not improved for `early_stopping_patience`
        validations (also true when a resumed run had already stopped)."""
        patience = self.run.train.early_stopping_patience
        if patience and int(self.bad_validations.numpy()) >= patience:
            self.log(
                f"early stopping: no better BLEU in {patience} validation(s); "
                f"best {float(self.best_bleu.numpy()):.2f}"
            )
            return True
        return False


def _append(path, header, lines):
    """Appends `lines` to a TSV log, writing `header` first if it is new."""
    new = not path.exists()
    with open(path, "a") as stream:
        if new:
            stream.write(header)
        stream.writelines(lines)

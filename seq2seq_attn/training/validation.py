"""The trainer's validation: perplexity by teacher forcing and greedy BLEU
by the translation task (`Translator`, built once per run), with the
attention of a few sentences as TensorBoard images."""

import time

import numpy as np
import tensorflow as tf

from seq2seq_attn.decoding.translator import Translator
from seq2seq_attn.evaluation.bleu import corpus_bleu
from seq2seq_attn.special_tokens import PAD_ID
from seq2seq_attn.training.losses import token_cross_entropy
from seq2seq_attn.training.progress import perplexity


class Validation:
    """Measures a model on validation text.

    Args:
        model: the model being trained.
        source_tokenizer, target_tokenizer: its tokenizers.
        corpus: the validation text (`sources`, `targets`).
        batches: the validation pairs as teacher-forcing batches.
        loss_fn: the summed token cross-entropy (without label smoothing).
        bleu_tokenize: sacreBLEU's tokenizer for the BLEU score.
        attention: whether the model attends (attention images).
    """

    def __init__(
        self,
        model,
        source_tokenizer,
        target_tokenizer,
        corpus,
        batches,
        loss_fn,
        bleu_tokenize,
        attention=True,
    ):
        self.model = model
        self.corpus = corpus
        self.batches = batches
        self.loss_fn = loss_fn
        self.bleu_tokenize = bleu_tokenize
        self.attention = attention
        self.translator = Translator(
            model, source_tokenizer, target_tokenizer, beam_size=1
        )

    @classmethod
    def of_run(cls, model, prepared, run):
        """The validation of a run (`RunConfig`) on its prepared data
        (`training_data`), or None without validation text."""
        if prepared.validation is None:
            return None
        return cls(
            model,
            prepared.source_tokenizer,
            prepared.target_tokenizer,
            prepared.validation,
            prepared.validation_batches,
            token_cross_entropy(),
            run.data.bleu_tokenize,
            attention=attends(run.model),
        )

    def measure(self, epoch, step, log=print):
        """The metrics after `epoch` (at `step`): perplexity, greedy BLEU
        (its value and sacreBLEU signature) and the first hypothesis, said
        in one line to `log`."""
        started = time.perf_counter()
        mean_perplexity = self.perplexity()
        bleu, hypotheses = self.bleu()
        log(
            f"validation after epoch {epoch}: perplexity "
            f"{mean_perplexity:.2f}, "
            f"greedy {bleu} [{time.perf_counter() - started:.0f} s]"
        )
        return dict(
            epoch=epoch,
            step=step,
            perplexity=mean_perplexity,
            bleu=bleu.value,
            bleu_signature=bleu.signature,
            example=hypotheses[0] if hypotheses else "",
        )

    def perplexity(self):
        """Perplexity of the validation targets under teacher forcing (the
        sources cut to what the model reads, as translation cuts them)."""
        loss_sum = tokens = 0.0
        limit = self.translator.form.max_source_tokens
        for (source, target_input), target_output in self.batches:
            if limit:
                source = source[:, :limit]
            logits = self.model([source, target_input], training=False)
            loss_sum += float(self.loss_fn(target_output, logits))
            tokens += float(
                tf.reduce_sum(tf.cast(target_output != PAD_ID, tf.float32))
            )
        return perplexity(loss_sum / max(tokens, 1.0))

    def bleu(self):
        """`(BLEU, hypotheses)` of greedy search on the validation sources."""
        hypotheses = self.translator.translate(self.corpus.sources)
        score = corpus_bleu(hypotheses, self.corpus.targets, self.bleu_tokenize)
        return score, hypotheses

    def write_summaries(self, writer, metrics):
        """The metrics of `measure` and the attention images, as TensorBoard
        summaries of its step."""
        with writer.as_default(step=metrics["step"]):
            tf.summary.scalar("validation/perplexity", metrics["perplexity"])
            tf.summary.scalar("validation/bleu", metrics["bleu"])
            self.attention_images()

    def attention_images(self, count=3):
        """Writes the attention of the first `count` validation sentences
        as images to the default summary writer."""
        if not self.attention:
            return
        sources = self.corpus.sources[:count]
        for index, result in enumerate(self.translator.translations(sources)):
            if result.alignment is None:
                continue
            image = result.alignment[None, :, :, None].astype(np.float32)
            tf.summary.image(
                f"attention/{index}", image / max(image.max(), 1e-9)
            )


def validation_due(step, steps_per_epoch, total_steps, validated_step):
    """Whether a run at `step` stands at an epoch's end, or at its last step
    (`max_steps` in the middle of an epoch), that has no recorded
    validation (not yet, or a kill cut it short)."""
    at_an_end = step % steps_per_epoch == 0 or step >= total_steps
    return step > 0 and at_an_end and validated_step < step


def attends(model_config):
    """Whether a model of `model_config` has attention to draw."""
    return model_config.architecture != "rnnencdec" and not (
        model_config.architecture == "luong" and model_config.score == "none"
    )

"""Corpus BLEU and chrF through sacreBLEU, with their signatures."""

import dataclasses

import sacrebleu


@dataclasses.dataclass
class Score:
    """A metric's value and the sacreBLEU signature that pins it down."""

    name: str
    value: float
    signature: str

    def __str__(self):
        text = f"{self.name} = {self.value:.2f} ({self.signature})"
        if "tok:none" in self.signature:
            text += " [on tokenised text: not comparable to 13a scores]"
        return text


def corpus_bleu(hypotheses, references, tokenize="13a"):
    """sacreBLEU corpus BLEU of `hypotheses` against one reference each.

    Args:
        hypotheses, references: lists of strings of one length.
        tokenize: sacreBLEU's tokenizer: "13a" for detokenised text, "none"
            for text that is already tokenised (the Multi30k convention).
    """
    _check_lengths(hypotheses, references)
    # force: tokenised references are the point of tokenize="none".
    metric = sacrebleu.metrics.BLEU(tokenize=tokenize, force=tokenize == "none")
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return Score("BLEU", result.score, str(metric.get_signature()))


def corpus_chrf(hypotheses, references):
    """sacreBLEU corpus chrF."""
    _check_lengths(hypotheses, references)
    metric = sacrebleu.metrics.CHRF()
    result = metric.corpus_score(list(hypotheses), [list(references)])
    return Score("chrF", result.score, str(metric.get_signature()))


def _check_lengths(hypotheses, references):
    if len(hypotheses) != len(references):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(references)} references"
        )

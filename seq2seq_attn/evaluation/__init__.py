"""Evaluation: sacreBLEU BLEU and chrF."""

from seq2seq_attn.evaluation.bleu import Score, corpus_bleu, corpus_chrf

__all__ = ["Score", "corpus_bleu", "corpus_chrf"]

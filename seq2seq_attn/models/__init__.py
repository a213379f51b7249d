"""Functional models of both papers, built from one frozen `ModelConfig`."""

from seq2seq_attn.models.builder import alignment_model, build_model
from seq2seq_attn.models.config import ModelConfig
from seq2seq_attn.models.inference import InferenceForm

__all__ = ["InferenceForm", "ModelConfig", "alignment_model", "build_model"]

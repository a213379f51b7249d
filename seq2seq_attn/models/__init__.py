"""Functional models of both papers, built from one frozen `ModelConfig`."""

from seq2seq_attn.config.model import ModelConfig
from seq2seq_attn.models.builder import (
    alignment_model,
    build_model,
    packed_model,
)
from seq2seq_attn.models.encoded import Encoded
from seq2seq_attn.models.inference import InferenceForm

__all__ = [
    "Encoded",
    "InferenceForm",
    "ModelConfig",
    "alignment_model",
    "build_model",
    "packed_model",
]

"""Functional models of both papers, built from one frozen `ModelConfig`."""

from seq2seq_attn._lazy import lazy_exports

_EXPORTS = {
    "Encoded": "seq2seq_attn.models.encoded",
    "InferenceForm": "seq2seq_attn.models.inference",
    "ModelConfig": "seq2seq_attn.models.config",
    "alignment_model": "seq2seq_attn.models.builder",
    "build_model": "seq2seq_attn.models.builder",
    "packed_model": "seq2seq_attn.models.builder",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

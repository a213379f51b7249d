"""SavedModel export with raw-text signatures for TF Serving."""

from seq2seq_attn._lazy import lazy_exports

_EXPORTS = {
    "signatures": "seq2seq_attn.export.exporter",
    "export": "seq2seq_attn.export.exporter",
    "next_version": "seq2seq_attn.export.exporter",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

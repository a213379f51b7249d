"""SavedModel export with raw-text signatures for TF Serving."""

from seq2seq_attn.export.exporter import export, next_version, signatures

__all__ = ["export", "next_version", "signatures"]

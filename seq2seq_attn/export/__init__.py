"""SavedModel export with raw-text signatures for TF Serving."""

from seq2seq_attn.export.exporter import TranslationModule, export, next_version

__all__ = ["TranslationModule", "export", "next_version"]

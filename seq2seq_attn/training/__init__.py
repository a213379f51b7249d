"""Training under `tf.distribute`, with crash-safe checkpoints."""

from seq2seq_attn._lazy import lazy_exports

_EXPORTS = {
    "DataConfig": "seq2seq_attn.training.config",
    "HalvingSchedule": "seq2seq_attn.training.optimizers",
    "DamagedCheckpointError": "seq2seq_attn.training.checkpoints",
    "DivergenceGuard": "seq2seq_attn.training.divergence",
    "NonFiniteLossError": "seq2seq_attn.training.divergence",
    "RunConfig": "seq2seq_attn.training.config",
    "TrainConfig": "seq2seq_attn.training.config",
    "Trainer": "seq2seq_attn.training.trainer",
    "TrainingDivergedError": "seq2seq_attn.training.divergence",
    "make_optimizer": "seq2seq_attn.training.optimizers",
    "make_strategy": "seq2seq_attn.training.strategy",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

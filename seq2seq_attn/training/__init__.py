"""Training under `tf.distribute`, with crash-safe checkpoints."""

from seq2seq_attn.config.run import DataConfig, RunConfig, TrainConfig
from seq2seq_attn.training.checkpoints import DamagedCheckpointError
from seq2seq_attn.training.divergence import (
    DivergenceGuard,
    NonFiniteLossError,
    TrainingDivergedError,
)
from seq2seq_attn.training.optimizers import HalvingSchedule, make_optimizer
from seq2seq_attn.training.strategy import make_strategy
from seq2seq_attn.training.trainer import Trainer

__all__ = [
    "DamagedCheckpointError",
    "DataConfig",
    "DivergenceGuard",
    "HalvingSchedule",
    "NonFiniteLossError",
    "RunConfig",
    "TrainConfig",
    "Trainer",
    "TrainingDivergedError",
    "make_optimizer",
    "make_strategy",
]

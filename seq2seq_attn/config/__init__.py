"""Every configuration of the package, in one place: frozen dataclasses that
validate their own fields, read from and written to JSON one way
(`fields.from_dict`), and whose resumable fields say so on the field.

- `ModelConfig` (`model.py`): the architecture and sizes of a model;
- `DataConfig`, `TrainConfig`, `RunConfig` (`run.py`): a training run;
- `SearchConfig`, `Scoring` (`search.py`, `scoring.py`): how to search.

Not to be confused with the recipes (the flagfiles of `configs/`, copied
into the wheel as `seq2seq_attn/configs/`). These modules import no
TensorFlow (`Scoring`'s formulas import it when they run).
"""

from seq2seq_attn.config.model import ModelConfig
from seq2seq_attn.config.run import DataConfig, RunConfig, TrainConfig
from seq2seq_attn.config.scoring import Scoring
from seq2seq_attn.config.search import SearchConfig

__all__ = [
    "DataConfig",
    "ModelConfig",
    "RunConfig",
    "Scoring",
    "SearchConfig",
    "TrainConfig",
]

"""Keras 3 layers of the papers' models, written with `keras.ops`."""

from seq2seq_attn.layers.bahdanau_attention import BahdanauAttention
from seq2seq_attn.layers.gru import GRU, BidirectionalGRU
from seq2seq_attn.layers.gru_decoder import GRUDecoder
from seq2seq_attn.layers.lstm import StackedLSTM
from seq2seq_attn.layers.luong_attention import LuongAttention
from seq2seq_attn.layers.luong_decoder import LuongDecoder
from seq2seq_attn.layers.masking import (
    PaddingMask,
    RealPositions,
    ReverseSequence,
    masked_softmax,
)
from seq2seq_attn.layers.maxout_deep_output import MaxoutDeepOutput
from seq2seq_attn.layers.tied_embedding import TiedEmbedding
from seq2seq_attn.layers.vocabulary_projection import VocabularyProjection

__all__ = [
    "BahdanauAttention",
    "BidirectionalGRU",
    "GRU",
    "GRUDecoder",
    "LuongAttention",
    "LuongDecoder",
    "MaxoutDeepOutput",
    "PaddingMask",
    "RealPositions",
    "ReverseSequence",
    "StackedLSTM",
    "TiedEmbedding",
    "VocabularyProjection",
    "masked_softmax",
]

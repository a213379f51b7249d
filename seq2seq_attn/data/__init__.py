"""Parallel corpora, TF Text tokenizers, text to ids and `tf.data` batching,
and the reserved ids (`PAD_ID`, `BOS_ID`, ...)."""

from seq2seq_attn.data.batching import (
    EncodedCorpus,
    FilterReport,
    batch_pairs,
    encode_corpus,
    make_dataset,
    padding_fraction,
)
from seq2seq_attn.data.corpora import (
    anki_split,
    load_corpus,
    read_parallel_files,
    read_tsv_pairs,
)
from seq2seq_attn.data.download import DownloadError, cache_dir, fetch
from seq2seq_attn.data.parallel_corpus import ParallelCorpus, ReadReport
from seq2seq_attn.data.sources import parallel_text
from seq2seq_attn.data.text_stream import ParallelText
from seq2seq_attn.data.text_to_ids import (
    padded_ids,
    sentence_ids,
    teacher_forcing,
)
from seq2seq_attn.data.tokenizers import (
    SentencePieceTokenizer,
    WordPieceTokenizer,
    WordTokenizer,
    build_tokenizer,
    load_tokenizer,
)
from seq2seq_attn.data.training_data import TrainingData, training_data
from seq2seq_attn.data.vocabularies import build_vocabularies
from seq2seq_attn.special_tokens import (
    BOS,
    BOS_ID,
    EOS,
    EOS_ID,
    PAD,
    PAD_ID,
    UNK,
    UNK_ID,
)

__all__ = [
    "BOS",
    "BOS_ID",
    "DownloadError",
    "EOS",
    "EOS_ID",
    "EncodedCorpus",
    "FilterReport",
    "PAD",
    "PAD_ID",
    "ParallelCorpus",
    "ParallelText",
    "ReadReport",
    "SentencePieceTokenizer",
    "TrainingData",
    "UNK",
    "UNK_ID",
    "WordPieceTokenizer",
    "WordTokenizer",
    "anki_split",
    "batch_pairs",
    "build_tokenizer",
    "build_vocabularies",
    "cache_dir",
    "encode_corpus",
    "fetch",
    "load_corpus",
    "load_tokenizer",
    "make_dataset",
    "padded_ids",
    "padding_fraction",
    "parallel_text",
    "read_parallel_files",
    "read_tsv_pairs",
    "sentence_ids",
    "teacher_forcing",
    "training_data",
]

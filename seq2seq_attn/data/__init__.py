"""Parallel corpora, TF Text tokenizers and `tf.data` batching."""

from seq2seq_attn.data.batching import (
    EncodedCorpus,
    FilterReport,
    encode_corpus,
    make_dataset,
    padding_fraction,
)
from seq2seq_attn.data.corpora import (
    ParallelCorpus,
    ReadReport,
    anki_split,
    load_corpus,
    read_parallel_files,
    read_tsv_pairs,
)
from seq2seq_attn.data.download import DownloadError, cache_dir, fetch
from seq2seq_attn.data.special_tokens import (
    BOS,
    BOS_ID,
    EOS,
    EOS_ID,
    PAD,
    PAD_ID,
    UNK,
    UNK_ID,
)
from seq2seq_attn.data.tokenizers import (
    SentencePieceTokenizer,
    WordPieceTokenizer,
    WordTokenizer,
    build_tokenizer,
    load_tokenizer,
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
    "ReadReport",
    "SentencePieceTokenizer",
    "UNK",
    "UNK_ID",
    "WordPieceTokenizer",
    "WordTokenizer",
    "anki_split",
    "build_tokenizer",
    "cache_dir",
    "encode_corpus",
    "fetch",
    "load_corpus",
    "load_tokenizer",
    "make_dataset",
    "padding_fraction",
    "read_parallel_files",
    "read_tsv_pairs",
]

"""Parallel corpora, TF Text tokenizers, text to ids and `tf.data` batching.

The reserved ids (`PAD_ID`, `BOS_ID`, ...) import without TensorFlow; the
rest loads its module (and TensorFlow) on first use.
"""

from seq2seq_attn._lazy import lazy_exports
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

_EXPORTS = {
    "DownloadError": "seq2seq_attn.data.download",
    "EncodedCorpus": "seq2seq_attn.data.batching",
    "FilterReport": "seq2seq_attn.data.batching",
    "ParallelCorpus": "seq2seq_attn.data.corpora",
    "ParallelText": "seq2seq_attn.data.text_stream",
    "ReadReport": "seq2seq_attn.data.corpora",
    "SentencePieceTokenizer": "seq2seq_attn.data.tokenizers",
    "TrainingData": "seq2seq_attn.data.training_data",
    "WordPieceTokenizer": "seq2seq_attn.data.tokenizers",
    "WordTokenizer": "seq2seq_attn.data.tokenizers",
    "anki_split": "seq2seq_attn.data.corpora",
    "batch_pairs": "seq2seq_attn.data.batching",
    "build_tokenizer": "seq2seq_attn.data.tokenizers",
    "build_vocabularies": "seq2seq_attn.data.training_data",
    "cache_dir": "seq2seq_attn.data.download",
    "encode_corpus": "seq2seq_attn.data.batching",
    "fetch": "seq2seq_attn.data.download",
    "load_corpus": "seq2seq_attn.data.corpora",
    "load_tokenizer": "seq2seq_attn.data.tokenizers",
    "make_dataset": "seq2seq_attn.data.batching",
    "padded_ids": "seq2seq_attn.data.text_to_ids",
    "padding_fraction": "seq2seq_attn.data.batching",
    "parallel_text": "seq2seq_attn.data.training_data",
    "read_parallel_files": "seq2seq_attn.data.corpora",
    "read_tsv_pairs": "seq2seq_attn.data.corpora",
    "sentence_ids": "seq2seq_attn.data.text_to_ids",
    "teacher_forcing": "seq2seq_attn.data.text_to_ids",
    "training_data": "seq2seq_attn.data.training_data",
}
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
__getattr__, _ = lazy_exports(__name__, _EXPORTS)


def __dir__():
    return __all__

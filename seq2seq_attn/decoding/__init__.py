"""Search over an inference form: greedy and beam search, scoring, and
`Translator` (strings in, strings out, over a model and its tokenizers)."""

from seq2seq_attn.config.scoring import Scoring
from seq2seq_attn.decoding.beam_search import beam_search
from seq2seq_attn.decoding.greedy_search import greedy_search
from seq2seq_attn.decoding.search import search
from seq2seq_attn.decoding.search_step import SearchableForm, SearchResult
from seq2seq_attn.decoding.translator import Translation, Translator

__all__ = [
    "Scoring",
    "SearchResult",
    "SearchableForm",
    "Translation",
    "Translator",
    "beam_search",
    "greedy_search",
    "search",
]

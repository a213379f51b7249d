"""Search over an inference form: greedy and beam search, and scoring."""

from seq2seq_attn.decoding.beam_search import beam_search
from seq2seq_attn.decoding.greedy_search import greedy_search
from seq2seq_attn.decoding.scoring import Scoring
from seq2seq_attn.decoding.search import search
from seq2seq_attn.decoding.search_step import SearchableForm, SearchResult

__all__ = [
    "Scoring",
    "SearchResult",
    "SearchableForm",
    "beam_search",
    "greedy_search",
    "search",
]

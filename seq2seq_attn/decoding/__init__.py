"""Search over an inference form: greedy and beam search, and scoring."""

from seq2seq_attn.decoding.beam_search import SearchResult, beam_search
from seq2seq_attn.decoding.greedy_search import greedy_search
from seq2seq_attn.decoding.scoring import Scoring
from seq2seq_attn.decoding.search import search

__all__ = ["Scoring", "SearchResult", "beam_search", "greedy_search", "search"]

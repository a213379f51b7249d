"""Search over an inference form: greedy and beam search, scoring, and
`Translator` (strings in, strings out, over a model and its tokenizers)."""

from seq2seq_attn._lazy import lazy_exports

_EXPORTS = {
    "Scoring": "seq2seq_attn.decoding.scoring",
    "SearchResult": "seq2seq_attn.decoding.search_step",
    "SearchableForm": "seq2seq_attn.decoding.search_step",
    "Translation": "seq2seq_attn.decoding.translator",
    "Translator": "seq2seq_attn.decoding.translator",
    "beam_search": "seq2seq_attn.decoding.beam_search",
    "greedy_search": "seq2seq_attn.decoding.greedy_search",
    "search": "seq2seq_attn.decoding.search",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

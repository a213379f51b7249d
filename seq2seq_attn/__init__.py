"""seq2seq_attn: attention-based neural machine translation in Keras 3.

Bahdanau, Cho and Bengio (2015, RNNsearch) and Luong, Pham and Manning (2015,
global and local attention), with TensorFlow for data, decoding and export.
"""

__version__ = "0.1.0"

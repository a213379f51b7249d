"""The papers' model sizes can be built, and their parameter counts match a
count derived by hand from the equations."""

import pytest

from seq2seq_attn.models import ModelConfig, build_model


def rnnsearch_parameters(Kx, Ky, m, n, n_prime, l, e=None):
    """RNNsearch parameters from Bahdanau et al. (2015), A.2, with the bias
    terms that the paper omits from its equations ("we omit all the bias
    terms", A.2.1) counted in. The encoder has e units per direction (the
    paper: e = n).

    Encoder (A.2.1):
      E (source embedding)                          Kx * m
      forward GRU: W, W_z, W_r (e x m); U, U_z, U_r (e x e); 3 biases
                                                    3e * (m + e + 1)
      backward GRU: the same                        3e * (m + e + 1)
    Decoder (A.2.2):
      E (target embedding)                          Ky * m
      W_s (n x e) and its bias, for s_0             e * n + n
      W, W_z, W_r (n x m); U, U_z, U_r (n x n); C, C_z, C_r (n x 2e); biases
                                                    3n * (m + n + 2e + 1)
      alignment model: W_a (n' x n), U_a (n' x 2e), bias, v_a (n')
                                                    n' * (n + 2e + 1 + 1)
      deep output: U_o (2l x n), V_o (2l x m), C_o (2l x 2e), bias (2l)
                                                    2l * (n + m + 2e + 1)
      W_o (Ky x l) and its bias                     Ky * (l + 1)
    """
    e = e or n
    encoder = Kx * m + 2 * 3 * e * (m + e + 1)
    decoder = (
        Ky * m
        + e * n
        + n
        + 3 * n * (m + n + 2 * e + 1)
        + n_prime * (n + 2 * e + 2)
        + 2 * l * (n + m + 2 * e + 1)
        + Ky * (l + 1)
    )
    return encoder + decoder


def luong_parameters(Kx, Ky, m, n, L, feeding=True):
    """Luong et al. (2015), Sec. 3 and 4.1, with `general` global attention.

    embeddings                                     (Kx + Ky) * m
    encoder LSTM, layer 1: 4 gates over [x; h]     4n * (m + n + 1)
    encoder LSTM, layers 2..L                      4n * (n + n + 1) each
    decoder LSTM, layer 1 (input [y; h~_{t-1}] with feeding, footnote 11)
                                                   4n * (m + n + n + 1)
    decoder LSTM, layers 2..L                      4n * (2n + 1) each
    general score W_a (n x n)                      n * n
    W_c (n x 2n), Eq. 5                            2n * n
    W_s (Ky x n) and its bias, Eq. 6               Ky * (n + 1)
    """
    feed = n if feeding else 0
    layers_above = (L - 1) * 4 * n * (2 * n + 1)
    return (
        (Kx + Ky) * m
        + 4 * n * (m + n + 1)
        + layers_above
        + 4 * n * (m + feed + n + 1)
        + layers_above
        + n * n
        + 2 * n * n
        + Ky * (n + 1)
    )


@pytest.mark.slow
def test_rnnsearch50_parameter_count():
    config = ModelConfig(
        architecture="rnnsearch",
        source_vocab_size=30000,
        target_vocab_size=30000,
        embedding_dim=620,
        hidden_units=1000,
        attention_units=1000,
        maxout_units=500,
    )
    counted = build_model(config).count_params()
    derived = rnnsearch_parameters(30000, 30000, 620, 1000, 1000, 500)
    print(f"RNNsearch-50, 30,000-word vocabularies: {counted:,} parameters")
    assert counted == derived


@pytest.mark.slow
def test_luong_paper_size_parameter_count():
    config = ModelConfig(
        architecture="luong",
        source_vocab_size=50000,
        target_vocab_size=50000,
        embedding_dim=1000,
        hidden_units=1000,
        num_layers=4,
        score="general",
        input_feeding=True,
        reverse_source=True,
        dropout=0.2,
        initializer="luong",
    )
    counted = build_model(config).count_params()
    derived = luong_parameters(50000, 50000, 1000, 1000, 4)
    print(f"Luong 4 x 1000, 50,000-word vocabularies: {counted:,} parameters")
    assert counted == derived


def test_joey_match_parameter_count():
    """configs/multi30k/joey_match.flags: JoeyNMT's shape (anchor file)."""
    config = ModelConfig(
        architecture="rnnsearch",
        source_vocab_size=5921,
        target_vocab_size=7859,
        embedding_dim=256,
        encoder_units=256,
        hidden_units=512,
        attention_units=512,
        maxout_units=512,
        dropout=0.3,
    )
    derived = rnnsearch_parameters(5921, 7859, 256, 512, 512, 512, e=256)
    assert build_model(config).count_params() == derived == 12_283_571


def test_small_counts_match_the_same_derivation():
    config = ModelConfig(
        architecture="rnnsearch",
        source_vocab_size=50,
        target_vocab_size=60,
        embedding_dim=7,
        hidden_units=9,
        attention_units=5,
        maxout_units=4,
    )
    assert build_model(config).count_params() == rnnsearch_parameters(
        50, 60, 7, 9, 5, 4
    )
    luong = ModelConfig(
        architecture="luong",
        source_vocab_size=50,
        target_vocab_size=60,
        embedding_dim=7,
        hidden_units=9,
        num_layers=3,
        input_feeding=False,
    )
    assert build_model(luong).count_params() == luong_parameters(
        50, 60, 7, 9, 3, feeding=False
    )

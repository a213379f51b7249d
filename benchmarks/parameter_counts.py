"""Prints the parameter counts of the papers' model sizes.

    python benchmarks/parameter_counts.py

Sizes from Bahdanau et al. (2015), A.2.3 (n = 1000, m = 620, l = 500,
n' = 1000, 30,000-word shortlists) and Luong et al. (2015), Sec. 4.1
(4 x 1000 LSTM, 1000-dim embeddings, 50,000-word vocabularies).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from seq2seq_attn.models import ModelConfig, build_model  # noqa: E402

BAHDANAU = dict(
    source_vocab_size=30000,
    target_vocab_size=30000,
    embedding_dim=620,
    hidden_units=1000,
    attention_units=1000,
    maxout_units=500,
)
LUONG = dict(
    architecture="luong",
    source_vocab_size=50000,
    target_vocab_size=50000,
    embedding_dim=1000,
    hidden_units=1000,
    num_layers=4,
    reverse_source=True,
    dropout=0.2,
    initializer="luong",
)
MODELS = {
    "RNNencdec (Bahdanau A.2.3 sizes)": ModelConfig(
        architecture="rnnencdec", **BAHDANAU
    ),
    "RNNsearch (Bahdanau A.2.3 sizes)": ModelConfig(
        architecture="rnnsearch", **BAHDANAU
    ),
    "Luong base, no attention": ModelConfig(
        score="none", input_feeding=False, **LUONG
    ),
    "Luong global (location) + feed": ModelConfig(score="location", **LUONG),
    "Luong global (general) + feed": ModelConfig(score="general", **LUONG),
    "Luong local-p (general) + feed": ModelConfig(
        score="general", attention_mode="local-p", **LUONG
    ),
    "Luong global (concat) + feed": ModelConfig(score="concat", **LUONG),
}


def main():
    print("| model | parameters |\n|---|---:|")
    for name, config in MODELS.items():
        print(f"| {name} | {build_model(config).count_params():,} |")


if __name__ == "__main__":
    main()

"""The layers every model family starts with, and the tied output."""

import keras

from seq2seq_attn.layers.masking import PaddingMask, RealPositions
from seq2seq_attn.layers.tied_embedding import TiedEmbedding


def input_layers(config, embedding_initializer):
    """The source padding mask and the source and target embeddings E.

    With `config.tie_embeddings` "target" the target embedding is a
    `TiedEmbedding` that is the output projection too; with "all" the
    source embedding is that same layer (one joint vocabulary).
    """

    def embedding(kind, vocab_size, name):
        return kind(
            vocab_size,
            config.embedding_dim,
            embeddings_initializer=embedding_initializer,
            name=name,
        )

    tied = config.tie_embeddings != "none"
    target = embedding(
        TiedEmbedding if tied else keras.layers.Embedding,
        config.target_vocab_size,
        "target_embedding",
    )
    if config.tie_embeddings == "all":
        source = target
    else:
        source = embedding(
            keras.layers.Embedding, config.source_vocab_size, "source_embedding"
        )
    return {
        "source_mask": PaddingMask(name="source_mask"),
        "source_embedding": source,
        "target_embedding": target,
    }


def tied_logits(layers, hidden):
    """float32 logits E h + b through the target embedding of a tied
    model (`TiedEmbedding`)."""
    return layers["target_embedding"](hidden, reverse=True)


def is_tied(layers):
    """Whether the target embedding is the output projection too."""
    return isinstance(layers["target_embedding"], TiedEmbedding)


def real_target_positions(target_input_ids, *tensors):
    """`tensors` [B, Ty, ...] packed to the real target positions, [N, ...]
    each: the N non-zero `target_input_ids`, in row-major order."""
    mask = PaddingMask()(target_input_ids)
    return tuple(RealPositions()(tensor, mask) for tensor in tensors)

"""The layers every model family starts with."""

import keras

from seq2seq_attn.layers.masking import PaddingMask, RealPositions


def input_layers(config, embedding_initializer):
    """The source padding mask and the source and target embeddings E."""
    return {
        "source_mask": PaddingMask(name="source_mask"),
        **{
            f"{side}_embedding": keras.layers.Embedding(
                vocab_size,
                config.embedding_dim,
                embeddings_initializer=embedding_initializer,
                name=f"{side}_embedding",
            )
            for side, vocab_size in (
                ("source", config.source_vocab_size),
                ("target", config.target_vocab_size),
            )
        },
    }


def real_target_positions(target_input_ids, *tensors):
    """`tensors` [B, Ty, ...] packed to the real target positions, [N, ...]
    each: the N non-zero `target_input_ids`, in row-major order."""
    mask = PaddingMask()(target_input_ids)
    return tuple(RealPositions()(tensor, mask) for tensor in tensors)

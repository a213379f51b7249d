"""The layers every model family starts with."""

import keras
from keras import ops

from seq2seq_attn.layers.masking import PaddingMask


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


def target_padding_mask(layers, target_input_ids):
    """Boolean [B, Ty], True on real target positions, for the position-wise
    output layers to skip padding. It reuses the `source_mask` layer (a
    `PaddingMask`), so that a model's list of layers, and with it what its
    checkpoints and saved files hold, stays as it was before the output
    layers took the mask."""
    return layers["source_mask"](target_input_ids)


def select_rows(rows, *tensors):
    """`tensors` restricted to the batch rows `rows` (int32 [n]); all of them
    when `rows` is None. Searches use it to project only live hypotheses
    onto the vocabulary."""
    if rows is None:
        return tensors
    return tuple(ops.take(tensor, rows, axis=0) for tensor in tensors)

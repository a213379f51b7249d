"""`build_model(config)`: the teacher-forced Keras model of any family."""

import keras

from seq2seq_attn.layers.gru_decoder import GRUDecoder
from seq2seq_attn.layers.luong_decoder import LuongDecoder
from seq2seq_attn.models import luong, rnnsearch

FAMILIES = {"rnnsearch": rnnsearch, "rnnencdec": rnnsearch, "luong": luong}


def _inputs():
    return (
        keras.Input(shape=(None,), dtype="int32", name="source_ids"),
        keras.Input(shape=(None,), dtype="int32", name="target_input_ids"),
    )


def build_model(config):
    """The teacher-forced training form of the model `config` describes.

    Args:
        config: a `ModelConfig`.

    Returns:
        A functional `keras.Model` named after the architecture, with inputs
        `[source_ids [B, Tx], target_input_ids [B, Ty]]` (int32, 0 pads) and
        output float32 logits [B, Ty, target_vocab_size]. Its layers are named
        (`source_embedding`, `encoder`, `decoder`, ...) so that
        `InferenceForm` and `alignment_model` can share them.
    """
    family = FAMILIES[config.architecture]
    layers = family.create_layers(config)
    source_ids, target_input_ids = _inputs()
    logits, _ = family.connect(layers, source_ids, target_input_ids)
    return keras.Model(
        [source_ids, target_input_ids], logits, name=config.architecture
    )


def packed_model(model):
    """A model sharing `model`'s weights whose logits skip target padding.

    Its output is [N, V]: the logits of the N non-zero `target_input_ids`, in
    row-major order, to be scored against the labels packed the same way,
    `real_target_positions(target_input_ids, target_output_ids)`. Training
    uses it: the output layer and the loss are a third to a half of a
    training step, and a quarter of Multi30k's target positions are padding.
    The recurrences skip the padding too (`skip_padding`: each step computes
    only the sentences not yet ended, `scan_over_time`'s live rows).
    N depends on the values of the input, so the model does not compile
    with XLA.
    """
    source_ids, target_input_ids = _inputs()
    logits, _ = family_of(model).connect(
        named_layers(model), source_ids, target_input_ids, packed=True
    )
    return keras.Model(
        [source_ids, target_input_ids], logits, name=f"{model.name}_packed"
    )


def family_of(model):
    """The module (`rnnsearch` or `luong`) that wires `model`'s layers."""
    decoder = model.get_layer("decoder")
    if isinstance(decoder, GRUDecoder):
        return rnnsearch
    if isinstance(decoder, LuongDecoder):
        return luong
    raise ValueError(f"model {model.name!r} has no known decoder layer")


def max_source_tokens(model):
    """The most source tokens `model` can read, or None for any number: a
    model with Luong's location score (a_t = softmax(W_a h_t)) has a column
    of W_a for each of `max_source_positions` positions only."""
    decoder = model.get_layer("decoder")
    if isinstance(decoder, LuongDecoder) and decoder.score == "location":
        return decoder.max_source_length
    return None


def named_layers(model):
    """The model's top-level layers by name (a model whose embeddings are
    all tied has one, `target_embedding`, that is `source_embedding` too)."""
    layers = {layer.name: layer for layer in model.layers}
    layers.setdefault("source_embedding", layers["target_embedding"])
    return layers


def alignment_model(model):
    """A model sharing `model`'s weights that returns `(logits, alignments)`.

    Alignments are the teacher-forced attention weights [B, Ty, Tx] (zeros
    for models without attention), for heatmaps and AER.
    """
    source_ids, target_input_ids = _inputs()
    logits, alignments = family_of(model).connect(
        named_layers(model), source_ids, target_input_ids
    )
    if alignments is None:
        raise ValueError(f"model {model.name!r} has no attention")
    return keras.Model([source_ids, target_input_ids], [logits, alignments])

"""The stacked-LSTM attentional model of Luong et al. (2015), Sec. 2-3.

An L-layer LSTM encoder (optionally reading the source reversed, Table 1)
hands its final states to an L-layer LSTM decoder (`LuongDecoder`) whose top
layer attends over the encoder's top-layer states. The encoder states are put
back in source order after a reversed read, so that alignment position s is
source word s (for local attention, unk replacement and AER).
"""

import keras

from seq2seq_attn.initializers import initializers_for
from seq2seq_attn.layers.lstm import StackedLSTM
from seq2seq_attn.layers.luong_decoder import LuongDecoder
from seq2seq_attn.layers.masking import PaddingMask, ReverseSequence
from seq2seq_attn.layers.vocabulary_projection import VocabularyProjection
from seq2seq_attn.models.encoded import Encoded
from seq2seq_attn.models.shared_layers import (
    input_layers,
    is_tied,
    real_target_positions,
    tied_logits,
)


def create_layers(config):
    """The named layers of a "luong" model."""
    if config.architecture != "luong":
        raise ValueError(f"not a luong config: {config.architecture!r}")
    init = (
        initializers_for("luong", scale=config.init_scale)
        if config.initializer == "luong"
        else initializers_for(config.initializer)
    )
    recurrent = dict(
        kernel_initializer=init["kernel"],
        recurrent_initializer=init["recurrent"],
        bias_initializer=init["bias"],
    )
    n = config.hidden_units
    layers = {
        **input_layers(config, init["embedding"]),
        "encoder": StackedLSTM(
            n,
            config.num_layers,
            dropout=config.dropout,
            name="encoder",
            **recurrent,
        ),
        "decoder": LuongDecoder(
            n,
            config.num_layers,
            score=None if config.score == "none" else config.score,
            mode=config.attention_mode,
            window=config.window,
            input_feeding=config.input_feeding,
            dropout=config.dropout,
            attention_units=config.attention_units,
            max_source_length=config.max_source_positions,
            name="decoder",
            **recurrent,
        ),
    }
    if config.tie_embeddings == "none":
        layers["output_projection"] = VocabularyProjection(
            config.target_vocab_size,
            kernel_initializer=init["kernel"],
            bias_initializer=init["bias"],
            name="output_projection",
        )
    if config.reverse_source:
        layers["source_reversal"] = ReverseSequence(name="source_reversal")
        layers["memory_reversal"] = ReverseSequence(name="memory_reversal")
    return layers


def _logits(layers, attentional):
    """softmax(W_s h~_t)'s logits (Eq. 6); W_s = E where tied."""
    if is_tied(layers):
        return tied_logits(layers, attentional)
    return layers["output_projection"](attentional)


def _encode(layers, source_ids, training=None, skip_padding=False):
    source_mask = layers["source_mask"](source_ids)
    encoder_ids = source_ids
    if "source_reversal" in layers:
        encoder_ids = layers["source_reversal"](source_ids, source_mask)
    memory, final_state = layers["encoder"](
        layers["source_embedding"](encoder_ids),
        sequence_mask=source_mask,
        training=training,
        skip_padding=skip_padding,
    )
    if "memory_reversal" in layers:
        memory = layers["memory_reversal"](memory, source_mask)
    return memory, source_mask, final_state


def connect(layers, source_ids, target_input_ids, packed=False):
    """Teacher-forced graph: `(logits, alignments)`; alignments is None
    without attention. Logits are [B, Ty, V], or with `packed` [N, V], those
    of the real target positions only (`real_target_positions`); `packed`
    also skips the padding in the recurrences (`skip_padding`), as both need
    TensorFlow without XLA."""
    memory, source_mask, final_state = _encode(
        layers, source_ids, skip_padding=packed
    )
    outputs = layers["decoder"](
        layers["target_embedding"](target_input_ids),
        memory,
        source_mask,
        final_state,
        target_mask=PaddingMask()(target_input_ids) if packed else None,
        skip_padding=packed,
    )
    if isinstance(outputs, (tuple, list)):
        attentional, alignments = outputs
    else:
        attentional, alignments = outputs, None
    if packed:
        (attentional,) = real_target_positions(target_input_ids, attentional)
    logits = _logits(layers, attentional)
    return logits, alignments


def encode(layers, source_ids):
    """The inference encoder: memory, keys, mask and the state before step 0."""
    memory, source_mask, final_state = _encode(
        layers, source_ids, training=False
    )
    decoder = layers["decoder"]
    rows = {"memory": memory, "memory_mask": source_mask}
    if decoder.attention is not None:
        rows["keys"] = decoder.project_keys(memory)
    return Encoded(rows, {}), decoder.initial_state(final_state)


def step(layers, token_ids, position, state, encoded):
    """One decoder step: `(logits [B, V], alignment [B, Tx], state)`."""
    attentional, alignment, state = layers["decoder"].step(
        layers["target_embedding"](token_ids),
        position,
        state,
        encoded.rows["memory"],
        encoded.rows.get("keys"),
        encoded.rows["memory_mask"],
    )
    logits = _logits(layers, attentional)
    if alignment is None:
        alignment = keras.ops.zeros(
            keras.ops.shape(encoded.rows["memory_mask"]), dtype=logits.dtype
        )
    return logits, alignment, state

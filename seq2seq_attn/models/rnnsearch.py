"""RNNsearch and RNNencdec (Bahdanau et al. 2015, Sec. 3, 4 and App. A).

Both models share the decoder (a conditional GRU) and the maxout deep
output; RNNsearch reads a bidirectional encoder's annotations through the
alignment model, RNNencdec fixes the context to the last state of a forward
encoder (A.2.2).

The papers train without dropout. With `config.dropout` > 0 the embeddings
(both sides) and the deep output's inputs s_{i-1} and c_i are dropped during
training, as JoeyNMT's recurrent models do; nothing recurrent is dropped.
"""

import keras
from keras import ops

from seq2seq_attn.initializers import initializers_for
from seq2seq_attn.layers.gru import GRU, BidirectionalGRU
from seq2seq_attn.layers.gru_decoder import GRUDecoder
from seq2seq_attn.layers.masking import PaddingMask
from seq2seq_attn.layers.maxout_deep_output import MaxoutDeepOutput
from seq2seq_attn.models.encoded import Encoded
from seq2seq_attn.models.shared_layers import (
    input_layers,
    is_tied,
    real_target_positions,
    tied_logits,
)


def create_layers(config):
    """The named layers of `config.architecture` ("rnnsearch"/"rnnencdec")."""
    init = initializers_for(config.initializer)
    recurrent = dict(
        kernel_initializer=init["kernel"],
        recurrent_initializer=init["recurrent"],
        bias_initializer=init["bias"],
    )
    attentive = config.architecture == "rnnsearch"
    encoder_class = BidirectionalGRU if attentive else GRU
    layers = {
        **input_layers(config, init["embedding"]),
        "encoder": encoder_class(
            config.encoder_size, name="encoder", **recurrent
        ),
        "decoder": GRUDecoder(
            config.hidden_units,
            attention_units=config.attention_size if attentive else None,
            attention_initializer=init["attention"],
            score_initializer=init["score"],
            name="decoder",
            **recurrent,
        ),
        "deep_output": MaxoutDeepOutput(
            config.maxout_units,
            # W_o is the target embedding where tied.
            (
                config.target_vocab_size
                if config.tie_embeddings == "none"
                else None
            ),
            pool_size=config.maxout_pool_size,
            kernel_initializer=init["kernel"],
            bias_initializer=init["bias"],
            name="deep_output",
        ),
    }
    if config.dropout:
        layers["dropout"] = keras.layers.Dropout(config.dropout, name="dropout")
    return layers


def _dropped(layers, tensor):
    """`tensor` through the training-time dropout, if the model has one."""
    return layers["dropout"](tensor) if "dropout" in layers else tensor


def _logits(layers, deep_output):
    """W_o t_i (A.2.2): the deep output's own, or E t_i where tied."""
    return tied_logits(layers, deep_output) if is_tied(layers) else deep_output


def _memory_and_summary(
    layers, source_embedding, source_mask, skip_padding=False
):
    encoder = layers["encoder"]
    encoded = encoder(
        source_embedding, sequence_mask=source_mask, skip_padding=skip_padding
    )
    if isinstance(encoder, BidirectionalGRU):
        return encoded
    _, last_state = encoded
    return last_state, last_state


def connect(layers, source_ids, target_input_ids, packed=False):
    """Teacher-forced graph: `(logits, alignments)`; alignments is None for
    RNNencdec. Logits are [B, Ty, V], or with `packed` [N, V], those of the
    real target positions only (`real_target_positions`); `packed` also
    skips the padding in the recurrences (`skip_padding`), as both need
    TensorFlow without XLA."""
    source_mask = layers["source_mask"](source_ids)
    source_embedding = _dropped(layers, layers["source_embedding"](source_ids))
    memory, summary = _memory_and_summary(
        layers, source_embedding, source_mask, skip_padding=packed
    )
    target_embedding = _dropped(
        layers, layers["target_embedding"](target_input_ids)
    )
    outputs = layers["decoder"](
        target_embedding,
        memory,
        summary,
        memory_mask=source_mask,
        target_mask=PaddingMask()(target_input_ids) if packed else None,
        skip_padding=packed,
    )
    previous_states, contexts = outputs[0], outputs[1]
    deep_output_inputs = (
        _dropped(layers, previous_states),
        target_embedding,
        _dropped(layers, contexts),
    )
    if packed:
        deep_output_inputs = real_target_positions(
            target_input_ids, *deep_output_inputs
        )
    logits = _logits(layers, layers["deep_output"](*deep_output_inputs))
    alignments = outputs[2] if len(outputs) == 3 else None
    return logits, alignments


def encode(layers, source_ids):
    """The inference encoder: what the steps read (`Encoded`), and s_0.

    The context enters a step only through C c_i (GRU) and C_o c_i (deep
    output), so the annotations are projected by both here, once, side by
    side (`GRUDecoder.inference_step`): for RNNsearch per sentence, weighed
    at every step by the hypotheses' alignments; for RNNencdec, whose
    context is fixed, per row, read as is.
    """
    source_mask = layers["source_mask"](source_ids)
    memory, summary = _memory_and_summary(
        layers, layers["source_embedding"](source_ids), source_mask
    )
    decoder = layers["decoder"]
    context_products = ops.concatenate(
        [
            decoder.project_context(memory),
            layers["deep_output"].project_context(memory),
        ],
        axis=-1,
    )
    initial = (decoder.initial_state(summary),)
    rows = {"memory_mask": source_mask}
    if decoder.attention is None:
        rows["context_products"] = context_products
        return Encoded(rows, {}), initial
    rows["keys"] = decoder.project_keys(memory)
    rows["sentence"] = ops.arange(ops.shape(source_ids)[0])
    return Encoded(rows, {"context_products": context_products}), initial


def step(layers, token_ids, position, state, encoded):
    """One decoder step (Bahdanau A.2.2): `(logits [B, V], alignment
    [B, Tx], state)`."""
    decoder = layers["decoder"]
    previous_state = state[0]
    embedding = layers["target_embedding"](token_ids)
    products = (
        encoded.rows if decoder.attention is None else encoded.sentences
    )["context_products"]
    new_state, alignment, context_product = decoder.inference_step(
        decoder.project_embedding(embedding),
        previous_state,
        products,
        encoded.rows["memory_mask"],
        keys=encoded.rows.get("keys"),
        sentence=encoded.rows.get("sentence"),
    )
    logits = _logits(
        layers,
        layers["deep_output"].logits(
            previous_state, embedding, context_product
        ),
    )
    return logits, alignment, (new_state,)

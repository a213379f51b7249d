"""The one generate function: raw text in, translations out, in the graph.

    text [B]  --cut to max_input_tokens (bytes, then tokens)-->  ids
              --sorted by length, searched batch_size rows at a time-->
              --detokenized, put back in input order-->  texts [B, N]

`Translator.generate` and the SavedModel's signatures (TF Serving) trace
this same function; `Translator.translations` (Python, evaluate, the
trainer's validation) tokenizes a whole list once with `source_ids` and
traces its search part, `generate_from_ids`. Core TensorFlow and TF Text
ops only. A row with no token (empty or whitespace only) gets "" and score
0; invalid UTF-8 becomes U+FFFD.
"""

import dataclasses

import tensorflow as tf

from seq2seq_attn.data.text_to_ids import (
    bounded_text,
    input_bytes,
    padded_ids,
    sentence_ids,
)
from seq2seq_attn.decoding.forced_alignment import forced_alignment
from seq2seq_attn.decoding.search import detokenize_hypotheses, search
from seq2seq_attn.special_tokens import PAD_ID

TEXT = tf.TensorSpec([None], tf.string, name="text")
TARGET = tf.TensorSpec([None], tf.string, name="target")


def checked_vector(strings, name):
    """`strings` if it is a vector, else an `InvalidArgumentError` naming
    `name`. `EnsureShape` runs in the graph, whatever the signature's static
    shape says (a rank assertion would be resolved at trace time), and
    before any TF Text op: those may crash the process on a scalar."""
    return tf.ensure_shape(strings, [None], name=f"{name}_must_be_a_vector")


def checked_pair(text, target):
    """`text` and `target`, checked to be vectors of the same length."""
    text = checked_vector(text, "text")
    target = checked_vector(target, "target")
    same_rows = tf.debugging.assert_equal(
        tf.shape(text)[0],
        tf.shape(target)[0],
        message="align: text and target must have the same number of rows",
    )
    with tf.control_dependencies([same_rows]):
        return tf.identity(text), tf.identity(target)


def source_ids(tokenizer, text, max_tokens):
    """`(ids, input_tokens, cut)` of text [B]: the ids the model reads,
    ragged int32 [B, (T)] cut to `max_tokens`; the tokens of each input
    before the cut (of a very long input, those of the bytes read,
    `text_to_ids.input_bytes`); and whether the cut dropped any part."""
    if not max_tokens:
        full = sentence_ids(tokenizer, text)
        input_tokens = tf.cast(full.row_lengths(), tf.int32)
        return full, input_tokens, tf.zeros_like(input_tokens, tf.bool)
    text, bytes_cut = bounded_text(text, input_bytes(max_tokens))
    full = sentence_ids(tokenizer, text)
    input_tokens = tf.cast(full.row_lengths(), tf.int32)
    cut = (input_tokens > max_tokens) | bytes_cut
    return full[:, :max_tokens], input_tokens, cut


def generate(
    form, source_tokenizer, target_tokenizer, config, text, nbest, details=True
):
    """Translations of text [B], best first: its `source_ids`, searched by
    `generate_from_ids`.

    Args:
        form: a `SearchableForm` (`InferenceForm`, `EnsembleForm`).
        source_tokenizer, target_tokenizer: the model's tokenizers.
        config: a `SearchConfig` (its `nbest` is replaced by `nbest`).
        text: string [B].
        nbest: hypotheses per sentence (a Python int).
        details: whether to return the tokens and alignments too (TF
            Serving's translation signatures need only texts and scores).

    Returns:
        `generate_from_ids`'s dict, with `input_tokens` [B] and `cut` bool
        [B] (see `source_ids`).
    """
    text = checked_vector(text, "text")
    ids, input_tokens, cut = source_ids(
        source_tokenizer, text, config.max_input_tokens
    )
    results = generate_from_ids(
        form, target_tokenizer, config, ids, nbest, details
    )
    results.update(input_tokens=input_tokens, cut=cut)
    return results


def generate_from_ids(form, target_tokenizer, config, ids, nbest, details):
    """Translations of source ids, best first: the rows sorted by length and
    searched `config.batch_size` at a time, then put back in their order.

    Args:
        ids: int32 ragged [B, (T)], cut as `source_ids` cuts.
        Others: as in `generate`.

    Returns:
        A dict of tensors: `texts` string [B, N] and `scores` float32
        [B, N]; `tokens` int32 [B, N, T] (</s> included, 0 after) and
        `lengths` [B, N]; `alignments` float32 [B, T, Tx] of the best
        hypothesis, with `details`; `source_ids` int32 [B, Tx] (0 pads).
    """
    config = dataclasses.replace(config, nbest=nbest)
    source = padded_ids(ids)
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    order = tf.argsort(lengths, stable=True)
    size = config.batch_size
    chunks = (tf.shape(source)[0] + size - 1) // size
    # Each output's dtype and chunk shape: rows, then inner dimensions,
    # None where they differ between chunks.
    outputs = {
        "texts": (tf.string, [None, nbest]),
        "scores": (tf.float32, [None, nbest]),
    }
    if details:
        outputs.update(
            tokens=(tf.int32, [None, nbest, None]),
            lengths=(tf.int32, [None, nbest]),
            alignments=(tf.float32, [None, None, None]),
        )

    def search_chunk(index, arrays):
        rows = order[index * size : (index + 1) * size]
        width = tf.maximum(tf.reduce_max(tf.gather(lengths, rows)), 1)
        found = _search_rows(
            form, target_tokenizer, config, tf.gather(source, rows)[:, :width]
        )
        return index + 1, {
            name: array.write(index, found[name])
            for name, array in arrays.items()
        }

    arrays = {
        name: tf.TensorArray(
            dtype, size=chunks, infer_shape=False, element_shape=shape
        )
        for name, (dtype, shape) in outputs.items()
    }
    _, arrays = tf.while_loop(
        lambda index, _: index < chunks, search_chunk, (tf.constant(0), arrays)
    )
    back = tf.math.invert_permutation(order)
    results = {
        name: tf.gather(_concat(array, chunks, outputs[name][1]), back)
        for name, array in arrays.items()
    }
    results.update(source_ids=source)
    return results


def _search_rows(form, target_tokenizer, config, source):
    """The search of source ids [B, Tx] as a dict of `generate`'s outputs;
    a row with no token gets "" and score 0."""
    result = search(form, source, config)
    texts = detokenize_hypotheses(target_tokenizer, result.tokens)
    empty = tf.reduce_all(tf.equal(source, PAD_ID), axis=1)[:, None]
    return dict(
        texts=tf.where(empty, "", texts),
        scores=tf.where(empty, 0.0, result.scores),
        tokens=result.tokens,
        lengths=result.lengths,
        alignments=tf.cast(result.alignments[:, 0], tf.float32),
    )


def _concat(array, size, shape):
    """The `size` elements of a `TensorArray` of chunks of `shape` (None
    where chunks differ), concatenated along the rows; where an inner
    dimension differs, each chunk is zero-padded (the empty string for
    strings) to the widest. No chunk at all gives no rows."""
    if None not in shape[1:]:
        return array.concat()
    empty_shape = [0 if n is None else n for n in shape]

    def measure(index, widest):
        return index + 1, tf.maximum(widest, tf.shape(array.read(index)))

    _, widest = tf.while_loop(
        lambda index, _: index < size,
        measure,
        (tf.constant(0), tf.constant(empty_shape, tf.int32)),
    )
    zero = tf.zeros([], array.dtype)
    padded = tf.TensorArray(array.dtype, size=size + 1, infer_shape=False)

    def pad(index, padded):
        element = array.read(index)
        margin = widest[1:] - tf.shape(element)[1:]
        paddings = tf.pad(margin[:, None], [[1, 0], [1, 0]])
        return index + 1, padded.write(
            index, tf.pad(element, paddings, constant_values=zero)
        )

    _, padded = tf.while_loop(
        lambda index, _: index < size, pad, (tf.constant(0), padded)
    )
    # A last element of no rows, so that there is one to concatenate.
    no_rows = tf.fill(tf.concat([[0], widest[1:]], 0), zero)
    return padded.write(size, no_rows).concat()


def forced_alignments(
    aligner, source_tokenizer, target_tokenizer, max_tokens, text, target
):
    """Forced decoding of `target` [B] as translations of `text` [B]: a
    dict of `source_tokens` [B, Tx] and `target_tokens` [B, Ty] (padded
    with ""), and `alignment` float32 [B, Ty, Tx]. A target may be twice as
    long as an input may."""
    text, target = checked_pair(text, target)
    source = padded_ids(sentence_ids(source_tokenizer, text, max_tokens))
    target_ids = sentence_ids(
        target_tokenizer, target, max_tokens and 2 * max_tokens
    )
    target, alignment = forced_alignment(aligner, source, target_ids)
    return {
        "source_tokens": _tokens(source_tokenizer, source),
        "target_tokens": _tokens(target_tokenizer, target),
        "alignment": alignment,
    }


def _tokens(tokenizer, ids):
    """The token strings of padded ids, "" on padding."""
    return tf.where(ids == PAD_ID, "", tokenizer.id_to_token(ids))

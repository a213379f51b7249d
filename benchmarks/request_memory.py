"""Peak memory of one large request to an export's `serving_default`.

    python benchmarks/request_memory.py EXPORT_VERSION_DIR ROWS TOKENS

Loads the SavedModel with only TensorFlow and TF Text imported, answers one
short sentence, then one request of ROWS copies of a TOKENS-word sentence
(cut to the export's `max_input_tokens`), and prints the peak RSS
(`ru_maxrss`), its growth over the one-sentence request, and the time. The
search runs in sorted chunks of the export's `batch_size` inside the graph,
so the growth is one chunk's search plus the request's rows.
"""

import resource
import sys
import time

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the tokenizers' ops)

WORDS = ["a", "man", "rides", "a", "bike", "down", "the", "street", "."]


def main(export, rows, tokens):
    serve = tf.saved_model.load(export).signatures["serving_default"]
    serve(text=tf.constant(["a dog ."]))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sentence = " ".join((WORDS * (tokens // len(WORDS) + 1))[:tokens])
    start = time.time()
    out = serve(text=tf.constant([sentence] * rows))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    answers = len(out["translation"].numpy())
    print(
        f"{rows:,} rows x {tokens} tokens: {after:,.0f} MB peak RSS "
        f"(+{after - before:,.0f} MB over one sentence), "
        f"{time.time() - start:.1f} s, {answers:,} answers"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))

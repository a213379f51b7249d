"""What one optimizer update costs: Keras's Adam against one fused kernel.

    python benchmarks/optimizer_update.py \
        --model_dir=runs/flop_account/joey_match

Times, on the trainable weights of the model in `--model_dir` (their
shapes; random values), each inside a `tf.function`, the mean of 20 calls
after one warm-up, three rounds alternating:
  - `keras.optimizers.Adam(...).apply_gradients`, what the trainer runs
    (Keras updates each variable with several elementwise ops, each reading
    and writing a weight-sized tensor);
  - `tf.raw_ops.ResourceApplyAdam` per variable: the same update (Kingma and
    Ba's Algorithm 1 with the bias corrections folded into the step size, as
    Keras computes it) in one kernel that reads each tensor once;
  - `tf.clip_by_global_norm` at 1.0, the trainer's `--clip_norm`.
A profile of the training step shows the weight-sized elementwise ops
(#33, benchmarks/history/near_the_limit.md); this says how much of them a
fused update would save alone. Inside joey_match's training step it saved
nothing measurable (the update runs beside the rest of the step).
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import keras
    import tensorflow as tf

    from seq2seq_attn.model_dir import load_trained

    model = load_trained(args.model_dir, checkpoint="latest")[1]
    shapes = [tuple(w.shape) for w in model.trainable_weights]
    count = sum(int(tf.reduce_prod(shape)) for shape in shapes)
    print(f"{len(shapes)} weights, {count:,} parameters")

    weights = [tf.Variable(tf.random.normal(s) * 0.01) for s in shapes]
    grads = [tf.random.normal(s) * 0.01 for s in shapes]
    optimizer = keras.optimizers.Adam(3e-4)
    optimizer.build(weights)
    moments = [[tf.Variable(tf.zeros(s)) for s in shapes] for _ in ("m", "v")]
    step = tf.Variable(0.0)

    @tf.function
    def keras_adam(grads):
        optimizer.apply_gradients(zip(grads, weights, strict=True))

    @tf.function
    def fused_adam(grads):
        step.assign_add(1.0)
        beta1_power, beta2_power = tf.pow(0.9, step), tf.pow(0.999, step)
        for weight, m, v, grad in zip(weights, *moments, grads, strict=True):
            tf.raw_ops.ResourceApplyAdam(
                var=weight.handle,
                m=m.handle,
                v=v.handle,
                beta1_power=beta1_power,
                beta2_power=beta2_power,
                lr=3e-4,
                beta1=0.9,
                beta2=0.999,
                epsilon=1e-7,
                grad=grad,
            )

    @tf.function
    def clip(grads):
        return tf.clip_by_global_norm(grads, 1.0)[0]

    for round_ in range(1, args.rounds + 1):
        times = []
        for name, update in (
            ("Keras Adam", keras_adam),
            ("fused ResourceApplyAdam", fused_adam),
            ("clip_by_global_norm", clip),
        ):
            update(grads)
            started = time.perf_counter()
            for _ in range(20):
                update(grads)
            weights[0].numpy()  # wait for the last update
            ms = (time.perf_counter() - started) / 20 * 1000
            times.append(f"{name} {ms:.1f} ms")
        print(f"round {round_}: " + ", ".join(times))


if __name__ == "__main__":
    main()

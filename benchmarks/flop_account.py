"""An account of the work: equation FLOPs against the cores' matmul peak.

    python benchmarks/flop_account.py \
        [--flagfiles configs/multi30k/joey_match.flags,configs/quickstart.flags]
        [--batches 40] [--profile] [--work runs/flop_account] \
        [--data_dir ../shared/data]

Measures, in one process and one run:
  - the peak: `tf.matmul` of 2048 x 2048 matrices in float32 and bfloat16
    (oneDNN on these cores, TensorFlow's default threads), and the same
    products at the shapes of the models' steps (a recurrence's rows times
    its gate kernel; the output layer's real positions times W_o), which
    is what the small per-step products of a recurrence can reach;
  - for each flagfile (RNNsearch): a model directory made by one training
    step (`runs/flop_account/NAME`: the recipe's vocabularies, config and
    weights; the FLOPs and the time do not depend on the weights), then
      - the training step the trainer runs (`make_train_step`: forward,
        gradients on the real target positions, Adam's update) on
        `--batches` batches of the recipe's stream, with its sorted windows
        and with `--sort_window=1` (random batches, as JoeyNMT draws);
      - one beam-5 step and one greedy step of the search (the decoder step
        with the vocabulary projection and each row's best tokens, every row
        live) on the middle batch of test2016 by source length;
    and prints for each: the equation FLOPs (multiply-add = 2; a backward
    pass = 2 forward passes, one product for each operand's gradient),
    those of the real positions and those of the padding, the achieved
    GFLOP/s (all FLOPs the step computes), the useful GFLOP/s (real
    positions only), and each as a share of the float32 peak.

The equations are Bahdanau et al. (2015), A.2 (`rnnsearch_flops`), counted
as the layers compute them: input projections W x of all steps at once,
U_a h_j once per sentence, the maxout deep output on the real target
positions only (`packed_model`), and in the search C h_j and C_o h_j once
per sentence, weighed by alpha_ij at each step. Elementwise work (gates'
sigmoids and products, the maxout) is left out except the alignment
model's W_a s + U_a h_j and its v_a score, which grow with the source
length; the softmaxes and the loss (a few FLOPs per vocabulary entry) are
left out too.
"""

import argparse
import dataclasses
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_FLAGFILES = "configs/multi30k/joey_match.flags,configs/quickstart.flags"


@dataclasses.dataclass(frozen=True)
class RNNsearchSizes:
    """The sizes the FLOPs of RNNsearch depend on (Bahdanau A.2)."""

    m: int  # embedding
    encoder: int  # n of each encoder direction
    n: int  # decoder state
    attention: int  # n'
    maxout: int  # l
    pool: int
    vocab: int  # K_y

    @classmethod
    def of(cls, model_config):
        c = model_config
        if c.architecture != "rnnsearch":
            raise ValueError(
                f"flop_account counts RNNsearch only, got {c.architecture!r}"
            )
        return cls(
            c.embedding_dim,
            c.encoder_size,
            c.hidden_units,
            c.attention_size,
            c.maxout_units,
            c.maxout_pool_size,
            c.target_vocab_size,
        )

    # Forward FLOPs, by where they happen.
    def per_source_position(self):
        """Both encoder GRUs (W x and U h of the three gates) and U_a h_j."""
        e = self.encoder
        return (
            2 * (2 * self.m * 3 * e + 2 * 3 * e * e)
            + 2 * 2 * e * self.attention
        )

    def per_target_position(self, source_length):
        """The conditional GRU's step i: W E y (outside the loop), W_a s,
        the alignment over `source_length` positions, c_i, C c_i, U s."""
        n, a, e = self.n, self.attention, self.encoder
        return (
            2 * self.m * 3 * n
            + 2 * n * a
            + 3 * source_length * a
            + 2 * source_length * 2 * e
            + 2 * 2 * e * 3 * n
            + 2 * 3 * n * n
        )

    def per_output_position(self):
        """The maxout deep output and W_o (A.2.2)."""
        width = self.pool * self.maxout
        return 2 * (self.n + self.m + 2 * self.encoder) * width + 2 * (
            self.maxout * self.vocab
        )

    def per_sentence(self):
        """s_0 = tanh(W_s backward h_1)."""
        return 2 * self.encoder * self.n

    def per_search_row(self, source_length):
        """One search step of one hypothesis: W E y, W_a s, the alignment,
        sum_j alpha_ij [C h_j; C_o h_j], U s, the maxout's U_o s and V_o E y,
        and W_o."""
        n, a, width = self.n, self.attention, self.pool * self.maxout
        return (
            2 * self.m * 3 * n
            + 2 * n * a
            + 3 * source_length * a
            + 2 * source_length * (3 * n + width)
            + 2 * 3 * n * n
            + 2 * (n + self.m) * width
            + 2 * self.maxout * self.vocab
        )


def training_flops(sizes, source, target_in):
    """`(computed, real)` FLOPs of one training step (forward + backward)
    on a batch: computed over the padded [B, Tx] and [B, Ty] the recurrences
    run on, real over each sentence's own lengths."""
    source_lengths = (source != 0).sum(axis=1)
    target_lengths = (target_in != 0).sum(axis=1)
    batch, width = source.shape
    steps = target_in.shape[1]
    outputs = int(target_lengths.sum())  # packed: real positions only
    computed = (
        batch * width * sizes.per_source_position()
        + batch * steps * sizes.per_target_position(width)
        + outputs * sizes.per_output_position()
        + batch * sizes.per_sentence()
    )
    real = sum(
        int(x) * sizes.per_source_position()
        + int(y) * sizes.per_target_position(int(x))
        + int(y) * sizes.per_output_position()
        + sizes.per_sentence()
        for x, y in zip(source_lengths, target_lengths, strict=True)
    )
    return 3 * computed, 3 * real


def matmul_gflops(shape, dtype, repeats):
    """GFLOP/s of `repeats` products [M, K] x [K, N] in one tf.function,
    the best of three runs. Each product reads its own left matrix, passed
    in as an argument, so that Grappler can neither merge the products as
    common subexpressions nor fold them as constants."""
    import tensorflow as tf

    rows, inner, columns = shape
    lefts = tf.cast(tf.random.normal([repeats, rows, inner]), dtype)
    right = tf.cast(tf.random.normal([inner, columns]), dtype)

    @tf.function
    def products(lefts, right):
        total = tf.zeros([rows, columns], dtype)
        for index in range(repeats):
            total += tf.matmul(lefts[index], right)
        return total

    products(lefts, right)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        products(lefts, right).numpy()
        best = min(best, time.perf_counter() - started)
    return 2 * rows * inner * columns * repeats / best / 1e9


def model_dir_for(flagfile, work, data_dir):
    """A model directory of one training step of `flagfile`."""
    model_dir = work / pathlib.Path(flagfile).stem
    if not (model_dir / "config.json").is_file():
        subprocess.run(["rm", "-rf", str(model_dir)], check=True)
        log = work / f"{model_dir.name}.log"
        with open(log, "w") as out:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "seq2seq_attn.train",
                    f"--flagfile={flagfile}",
                    f"--model_dir={model_dir}",
                    f"--data_dir={data_dir}",
                    "--max_steps=1",
                    "--checkpoint_every=1",
                ],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=True,
            )
    return model_dir


def by_op_type(function):
    """{op type: milliseconds per call} of `function`, from TensorFlow's
    profiler (`profile_decoding.op_times`: summed over the threads that run
    ops, so it can add up to more than the wall time)."""
    from profile_decoding import op_times

    totals = {}
    for op, (ms, _) in op_times(function).items():
        op_type = op.rpartition(" (")[2].rstrip(")")
        totals[op_type] = totals.get(op_type, 0.0) + ms
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def print_op_types(what, totals, top=12):
    total = sum(totals.values())
    print(f"\nwhere the op time of {what} goes ({total:.1f} ms of op time):")
    for op_type, ms in list(totals.items())[:top]:
        print(f"  {ms:8.2f} ms {100 * ms / total:5.1f}%  {op_type}")


def training_rows(model_dir, sizes, count, peak, work, profile=False):
    """One row each for the recipe's sorted windows and random batches;
    with `profile`, the sorted step's op time by op type too."""
    import numpy as np
    from training_step_speed import prepared_step, seconds_per_step

    from seq2seq_attn.config.run import RunConfig

    run = RunConfig.load(model_dir)
    rows = []
    for label, window in (
        (f"sorted windows of {run.data.sort_window}", run.data.sort_window),
        ("random batches (--sort_window=1)", 1),
    ):
        train_step, stream, batches = prepared_step(
            model_dir,
            window,
            count + 5 + 6 * profile,
            work / f"{model_dir.name}_epoch_{window}.json",
        )
        seconds = seconds_per_step(train_step, stream, 5, count)
        if profile and window > 1:
            print_op_types(
                f"a training step, {label}",
                by_op_type(lambda step=train_step, s=stream: step(s)),
            )
        batches = batches[: count + 5]
        flops = [training_flops(sizes, s, t) for (s, t), _ in batches[5:]]
        computed = statistics.mean(f[0] for f in flops)
        real = statistics.mean(f[1] for f in flops)
        tokens = statistics.mean(int((o != 0).sum()) for _, o in batches[5:])
        padding = statistics.mean(
            1 - (t != 0).sum() / t.size for (_, t), _ in batches[5:]
        )
        rows.append(
            dict(
                what=f"training, {label}",
                ms=1000 * seconds,
                target_tokens_per_s=tokens / seconds,
                gflop_computed=computed / 1e9,
                gflop_real=real / 1e9,
                padding_share_of_flops=1 - real / computed,
                target_padding=float(np.float64(padding)),
                gflops=computed / seconds / 1e9,
                useful_gflops=real / seconds / 1e9,
                share_of_peak=computed / seconds / 1e9 / peak,
            )
        )
    return rows


def search_rows(model_dir, sizes, data_dir, peak, batch_size=64, profile=False):
    """One beam-5 and one greedy search step, every row live; with
    `profile`, the beam step's op time by op type too."""
    import numpy as np
    import tensorflow as tf

    from seq2seq_attn.config.run import RunConfig
    from seq2seq_attn.data import BOS_ID, load_corpus
    from seq2seq_attn.decoding.search_step import top_candidates
    from seq2seq_attn.model_dir import load_translator
    from seq2seq_attn.models.inference import map_rows

    data = RunConfig.load(model_dir).data
    test = load_corpus(
        "multi30k",
        "test2016",
        data.source,
        data.target,
        variant=data.variant,
        data_dir=data_dir,
    )
    translator = load_translator([model_dir], checkpoint="latest")
    encoded_rows = sorted(
        (row.numpy() for row in translator.encode(test.sources)), key=len
    )
    middle = len(encoded_rows) // 2
    chunk = encoded_rows[middle - batch_size // 2 : middle + batch_size // 2]
    source = np.zeros((len(chunk), max(map(len, chunk))), "int32")
    for r, row in enumerate(chunk):
        source[r, : len(row)] = row
    lengths = (source != 0).sum(axis=1)
    form = translator.form
    rows = []
    for label, k in (("beam-5 step", 5), ("greedy step", 1)):
        encoded, state = form.encode(tf.constant(source))
        tile = lambda x, k=k: tf.repeat(x, k, axis=0)  # noqa: E731
        encoded = map_rows(tile, encoded)
        state = tf.nest.map_structure(tile, state)
        count = len(chunk) * k
        tokens = tf.fill([count], BOS_ID)
        live = tf.ones([count], tf.bool)
        with form.weights_cast_once():

            @tf.function
            def one_step(
                tokens=tokens, state=state, encoded=encoded, k=k, live=live
            ):
                return top_candidates(form, tokens, 0, state, encoded, k, live)

            one_step()
            repeats = 50
            started = time.perf_counter()
            for _ in range(repeats):
                one_step()
            seconds = (time.perf_counter() - started) / repeats
            if profile and k > 1:
                print_op_types(label, by_op_type(one_step))
        computed = count * sizes.per_search_row(source.shape[1])
        real = k * sum(sizes.per_search_row(int(x)) for x in lengths)
        rows.append(
            dict(
                what=f"{label}, {len(chunk)} x {k} rows, source width "
                f"{source.shape[1]}",
                ms=1000 * seconds,
                gflop_computed=computed / 1e9,
                gflop_real=real / 1e9,
                padding_share_of_flops=1 - real / computed,
                gflops=computed / seconds / 1e9,
                useful_gflops=real / seconds / 1e9,
                share_of_peak=computed / seconds / 1e9 / peak,
            )
        )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--flagfiles", default=DEFAULT_FLAGFILES)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument(
        "--work", type=pathlib.Path, default=ROOT / "runs" / "flop_account"
    )
    parser.add_argument("--data_dir", type=pathlib.Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="also the op time of a sorted training step and a beam step "
        "by op type (TensorFlow's profiler)",
    )
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    data_dir = args.data_dir.resolve()

    import tensorflow as tf

    from seq2seq_attn.config.run import RunConfig

    peaks = {
        dtype: matmul_gflops((2048, 2048, 2048), dtype, 8)
        for dtype in ("float32", "bfloat16")
    }
    threads = tf.config.threading.get_intra_op_parallelism_threads()
    # On a machine with a GPU TensorFlow places the products there: the
    # peak and every step below are then the GPU's, not the cores'.
    gpus = [gpu.name for gpu in tf.config.list_logical_devices("GPU")]
    where = f"on {', '.join(gpus)}" if gpus else f"{os.cpu_count()} cores"
    print(
        f"matmul peak, 2048^3, {where}, intra-op threads "
        f"{threads or 'default'}: "
        f"float32 {peaks['float32']:.1f} GFLOP/s, "
        f"bfloat16 {peaks['bfloat16']:.1f} GFLOP/s",
        flush=True,
    )
    peak = peaks["float32"]
    for flagfile in args.flagfiles.split(","):
        model_dir = model_dir_for(flagfile, work, data_dir)
        sizes = RNNsearchSizes.of(RunConfig.load(model_dir).model)
        print(f"\n## {flagfile}: {sizes}", flush=True)
        n, e = sizes.n, sizes.encoder
        shapes = {
            "decoder U s, 64 rows": (64, n, 3 * n),
            "decoder U s, 320 rows (beam 5)": (320, n, 3 * n),
            "encoder U h, 64 rows": (64, e, 3 * e),
            "W_o, 800 rows": (800, sizes.maxout, sizes.vocab),
        }
        for name, shape in shapes.items():
            rates = {
                dtype: matmul_gflops(shape, dtype, 200)
                for dtype in ("float32", "bfloat16")
            }
            print(
                f"matmul {name} {shape}: float32 {rates['float32']:.1f} "
                f"GFLOP/s ({100 * rates['float32'] / peak:.0f}% of peak), "
                f"bfloat16 {rates['bfloat16']:.1f}",
                flush=True,
            )
        rows = training_rows(
            model_dir, sizes, args.batches, peak, work, args.profile
        )
        rows += search_rows(
            model_dir, sizes, data_dir, peak, profile=args.profile
        )
        for row in rows:
            print(json.dumps(row), flush=True)
        print(
            "\n| step | ms | GFLOP computed | of which padding | GFLOP/s "
            "| useful GFLOP/s | share of fp32 peak |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            print(
                f"| {row['what']} | {row['ms']:.1f} | "
                f"{row['gflop_computed']:.3f} | "
                f"{100 * row['padding_share_of_flops']:.0f}% | "
                f"{row['gflops']:.1f} | {row['useful_gflops']:.1f} | "
                f"{100 * row['share_of_peak']:.1f}% |"
            )


if __name__ == "__main__":
    main()

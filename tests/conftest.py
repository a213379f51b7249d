"""Shared fixtures: quiet TensorFlow, fixed seeds, the shared data folder."""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

SHARED_DATA = (
    pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


def pytest_report_header(config):
    """The versions this run tests, first in its output (.ci/run runs the
    suite on both ends of the supported range)."""
    from importlib.metadata import version

    names = ("tensorflow", "tensorflow-text", "keras", "numpy")
    return "versions: " + ", ".join(f"{n} {version(n)}" for n in names)


# What a test that takes one of these fixtures waits for: a model trained
# by the train CLI, an export, files for a training run, or 0.1.0's models.
SLOW_FIXTURES = {
    "trained_model_dir",
    "raw_model_dir",
    "exported",
    "text_flags",
    "recovered_runs",
    "users_files",
}


def pytest_collection_modifyitems(config, items):
    """Marks `slow` every test that takes a `SLOW_FIXTURES` fixture, so that
    `-m "not slow"` is the fast lane without a mark on each."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def padded_batch(rng, lengths, vocab_size, extra_padding=0):
    """Random ids in [4, vocab_size), each row cut to its length, 0 after."""
    width = max(lengths) + extra_padding
    ids = rng.integers(4, vocab_size, size=(len(lengths), width)).astype(
        "int32"
    )
    for row, length in enumerate(lengths):
        ids[row, length:] = 0
    return ids


def outputs_and_gradients(call, inputs, variables, traced):
    """`call(*inputs)`'s outputs and the gradients of a fixed nonlinear
    function of them (the sum of sin(3 output + k) over the k-th output)
    with respect to the float inputs and `variables`, as NumPy arrays; run
    eagerly, or traced with every axis unknown but the float inputs' last."""
    import tensorflow as tf

    floats = [i for i, x in enumerate(inputs) if x.dtype != bool]

    def run(*inputs):
        watched = [inputs[i] for i in floats]
        with tf.GradientTape() as tape:
            tape.watch(watched)
            outputs = call(*inputs)
            loss = sum(
                tf.reduce_sum(tf.sin(3.0 * output + k))
                for k, output in enumerate(outputs)
            )
        gradients = tape.gradient(loss, watched + list(variables))
        return outputs, [tf.convert_to_tensor(g) for g in gradients]

    if traced:
        run = tf.function(
            run,
            input_signature=[
                tf.TensorSpec(
                    [None] * x.ndim
                    if x.dtype == bool
                    else [None] * (x.ndim - 1) + [x.shape[-1]],
                    x.dtype,
                )
                for x in inputs
            ],
        )
    outputs, gradients = run(*map(tf.constant, inputs))
    return [np.asarray(t) for t in list(outputs) + gradients]


def assert_skipping_padding_changes_nothing(call, inputs, variables, traced):
    """`call(*inputs, skip=...)` gives the same outputs and gradients
    (`outputs_and_gradients`, to 1e-5) with `skip_padding` on, only the live
    rows stepped, as with every row stepped."""
    every_row, live_rows_only = (
        outputs_and_gradients(
            lambda *inputs, skip=skip: call(*inputs, skip=skip),
            inputs,
            variables,
            traced,
        )
        for skip in (False, True)
    )
    for ours, theirs in zip(live_rows_only, every_row, strict=True):
        np.testing.assert_allclose(ours, theirs, atol=1e-5)


def multi30k_slice(directory, train, val, variant="tok"):
    """The first lines of Multi30k train and val (en and de; `variant` "tok"
    or "raw") as plain files in `directory`: {(split, language): path}."""
    import gzip

    files = {}
    for split, count in (("train", train), ("val", val)):
        for language in ("en", "de"):
            if variant == "tok":
                path = f"tok/{split}.lc.norm.tok.{language}.gz"
            else:
                path = f"{split}.{language}.gz"
            with gzip.open(SHARED_DATA / "multi30k" / path, "rt") as f:
                lines = [next(f) for _ in range(count)]
            files[split, language] = directory / f"{split}.{language}"
            files[split, language].write_text("".join(lines))
    return files


def write_lines(path, lines, newline=b"\n"):
    """`lines` (bytes) written to `path`, gzipped where it ends in .gz."""
    import gzip

    data = newline.join(lines) + newline
    if path.suffix == ".gz":
        with gzip.open(path, "wb") as stream:
            stream.write(data)
    else:
        path.write_bytes(data)
    return path


def multi30k_file_flags(files):
    """Train CLI flags that read the files of `multi30k_slice`."""
    return [
        f"--train_source_file={files['train', 'en']}",
        f"--train_target_file={files['train', 'de']}",
        f"--valid_source_file={files['val', 'en']}",
        f"--valid_target_file={files['val', 'de']}",
    ]


@pytest.fixture(scope="module")
def text_flags(tmp_path_factory):
    """The file flags of 400 training and 40 validation pairs of Multi30k
    (the tokenized text), for the train command's tests."""
    directory = tmp_path_factory.mktemp("text")
    return multi30k_file_flags(multi30k_slice(directory, train=400, val=40))


def _train_tiny_rnnsearch(directory, variant, *flags):
    """A tiny RNNsearch trained by the train CLI on 600 Multi30k pairs."""
    import sys

    import commands

    files = multi30k_slice(directory, train=600, val=30, variant=variant)
    model_dir = directory / "model"
    command = [
        sys.executable,
        "-m",
        "seq2seq_attn.train",
        f"--model_dir={model_dir}",
        "--architecture=rnnsearch",
        "--embedding_dim=32",
        "--hidden_units=32",
        "--attention_units=32",
        "--maxout_units=32",
        "--initializer=glorot",
        "--corpus=",
        *multi30k_file_flags(files),
        "--batch_size=32",
        "--optimizer=adam",
        "--learning_rate=0.005",
        "--epochs=3",
        "--seed=3",
        *flags,
    ]
    result = commands.run(command, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return model_dir


def made_once_per_run(tmp_path_factory, name, make):
    """`make(directory)`, made once for the whole run: under pytest-xdist
    the first worker to ask makes it in the workers' common temporary
    folder while the others wait for it, then all read the same files.
    Returns what `make` returned (a path inside `directory`)."""
    import fcntl
    import json

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    directory, made = root / name, root / f"{name}.made"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.is_file():
            if directory.exists():  # a worker that failed to make it
                import shutil

                shutil.rmtree(directory)
            directory.mkdir()
            made.write_text(json.dumps(str(make(directory))))
    return pathlib.Path(json.loads(made.read_text()))


@pytest.fixture(scope="session")
def trained_model_dir(tmp_path_factory):
    """Word shortlists of 400 on Multi30k tok/ (lowercased, tokenised)."""
    return made_once_per_run(
        tmp_path_factory,
        "trained",
        lambda directory: _train_tiny_rnnsearch(
            directory,
            "tok",
            "--tokenizer=word",
            "--source_vocab_size=400",
            "--target_vocab_size=400",
            "--bleu_tokenize=none",
        ),
    )


@pytest.fixture(scope="session")
def raw_model_dir(tmp_path_factory):
    """SentencePiece (the default: raw text in and out) on raw Multi30k."""
    return made_once_per_run(
        tmp_path_factory,
        "trained_raw",
        lambda directory: _train_tiny_rnnsearch(
            directory,
            "raw",
            "--source_vocab_size=700",
            "--target_vocab_size=700",
        ),
    )


def sacrebleu_cache(directory, name, langpair, sources, references):
    """Writes test set `name` in `langpair` where sacreBLEU keeps what it
    downloads (`directory` as $SACREBLEU), so that nothing downloads: the
    files its registry reads, `sources` and `references` standing in for
    the real set."""
    from sacrebleu.dataset import DATASETS

    dataset = DATASETS[name]
    fields = dataset.fieldnames(langpair)
    outdir = pathlib.Path(directory) / name
    outdir.mkdir(parents=True, exist_ok=True)
    columns = {"src": sources, "ref": references}
    for field in fields:
        lines = columns.get(field, ["x"] * len(sources))
        filename = f"{name.replace('/', '_')}.{langpair}.{field}"
        (outdir / filename).write_text("".join(f"{line}\n" for line in lines))
    return outdir

"""Packaging for seq2seq_attn; see BUILD.md for how to build and test."""

import pathlib
import re
import shutil

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).parent
VERSION = re.search(
    r'__version__ = "([^"]+)"',
    (HERE / "seq2seq_attn" / "__init__.py").read_text(),
).group(1)

# Training on TensorFlow Datasets (the papers' WMT'14: --tfds_dataset).
TFDS = ["tensorflow-datasets>=4.9.10"]
TEST = TFDS + [
    "pytest>=8",
    # Two test files at a time (the CI machine's two cores): --dist loadfile
    # keeps a file's module fixtures in one process.
    "pytest-xdist>=3.5",
    "jax[cpu]>=0.4.30",
    "ruff>=0.6",
    "nbclient>=0.10",
    "nbformat>=5.9",
    "ipykernel>=6.29",
]
# benchmarks/: Moses detokenisation for sacreBLEU on raw text.
BENCH = ["sacremoses>=0.1"]
DEV = TEST + BENCH + ["jupyter"]


class BuildWithRecipes(build_py):
    """Copies the recipes (`configs/`) into the package as
    `seq2seq_attn/configs/`, where `seq2seq_attn.recipes` finds them once
    installed (a checkout reads `configs/` itself). MANIFEST.in puts them in
    the sdist."""

    def run(self):
        super().run()
        target = pathlib.Path(self.build_lib) / "seq2seq_attn" / "configs"
        shutil.copytree(HERE / "configs", target, dirs_exist_ok=True)


setup(
    cmdclass={"build_py": BuildWithRecipes},
    name="seq2seq_attn",
    version=VERSION,
    description=(
        "Attention-based neural machine translation (Bahdanau et al. 2015, "
        "Luong et al. 2015) in TensorFlow 2 and Keras 3"
    ),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["seq2seq_attn", "seq2seq_attn.*"]),
    package_data={"seq2seq_attn.export": ["allowed_ops.txt"]},
    install_requires=[
        "tensorflow>=2.20,<2.22",
        # tensorflow-text pins the TensorFlow minor version it was built for;
        # 2.21.0 fails to import (tensorflow/text#1541, fixed in 2.21.1).
        "tensorflow-text>=2.20,!=2.21.0,<2.22",
        # TensorFlow 2.21 no longer installs it; tf.summary needs it.
        "tensorboard>=2.20,<2.22",
        "keras>=3.10",
        "sacrebleu>=2.4",
        "absl-py>=1.4",
        "sentencepiece>=0.2",
        "matplotlib>=3.7",
        "numpy>=1.26",
    ],
    extras_require={
        "gpu": ["tensorflow[and-cuda]>=2.20,<2.22"],
        "tfds": TFDS,
        "test": TEST,
        "bench": BENCH,
        "dev": DEV,
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)

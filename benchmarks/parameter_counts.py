"""Prints the parameter count of the model of each flagfile.

    python benchmarks/parameter_counts.py configs/bahdanau/*.flags \
        configs/luong/*.flags configs/multi30k/*.flags

Vocabulary sizes are the flagfile's (--source_vocab_size and
--target_vocab_size), as if the vocabularies were full.
"""

import gc
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(paths):
    import keras

    from seq2seq_attn.cli.train import run_config_from_flagfile
    from seq2seq_attn.models.builder import build_model

    print("| flagfile | model | parameters |\n|---|---|---:|")
    for path in paths:
        config = run_config_from_flagfile(path).model
        count = build_model(config).count_params()
        detail = config.architecture
        if config.architecture == "luong":
            detail += (
                f" {config.num_layers}x{config.hidden_units} {config.score}"
            )
            detail += f" {config.attention_mode}"
            detail += " +feed" if config.input_feeding else ""
        print(f"| {pathlib.Path(path).as_posix()} | {detail} | {count:,} |")
        keras.backend.clear_session()
        gc.collect()


if __name__ == "__main__":
    main(
        sys.argv[1:]
        or sorted(map(str, pathlib.Path("configs").rglob("*.flags")))
    )

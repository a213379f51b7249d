"""`python -m seq2seq_attn.train`: runs `seq2seq_attn.cli.train`, the
command's first name (importing this module gives that module)."""

import importlib
import runpy
import sys

COMMAND = "seq2seq_attn.cli.train"

if __name__ == "__main__":
    runpy.run_module(COMMAND, run_name="__main__", alter_sys=True)
else:
    sys.modules[__name__] = importlib.import_module(COMMAND)

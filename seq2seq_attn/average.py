"""`python -m seq2seq_attn.average`: runs `seq2seq_attn.cli.average`, the
command's first name (importing this module gives that module)."""

from seq2seq_attn.cli import first_name

first_name(__name__, "seq2seq_attn.cli.average")

"""`python -m seq2seq_attn.recipes`: the training recipes by name.

    python -m seq2seq_attn.recipes                 # every recipe's name
    python -m seq2seq_attn.recipes luong/base      # its flagfile's path
    python -m seq2seq_attn.train --recipe=luong/base --model_dir=runs/base

A recipe is a flagfile of the repository's `configs/` (`configs/README.md`
says what each reproduces), named by its path there without ".flags". The
wheel carries them as `seq2seq_attn/configs/` (setup.py copies them in), so
`--recipe` works after a plain `pip install`; in a checkout they are read
from `configs/`. `--recipe=NAME` is `--flagfile=PATH` in the same place of
the command line: flags after it override the recipe's.
"""

import pathlib
import sys

PACKAGED = pathlib.Path(__file__).with_name("configs")
CHECKOUT = pathlib.Path(__file__).parents[1] / "configs"
FLAG = "--recipe"


def recipes_dir():
    """The directory of the recipes: the installed package's copy, else the
    checkout's `configs/`."""
    for directory in (PACKAGED, CHECKOUT):
        if directory.is_dir():
            return directory
    raise FileNotFoundError(
        f"no recipes: neither {PACKAGED} nor {CHECKOUT} exists (reinstall "
        "seq2seq_attn from a wheel or a checkout)"
    )


def recipe_names():
    """The names of every recipe, sorted ("quickstart", "luong/base", ...)."""
    root = recipes_dir()
    return sorted(
        path.relative_to(root).with_suffix("").as_posix()
        for path in root.rglob("*.flags")
    )


def recipe_path(name):
    """The flagfile of the recipe `name` (".flags" may be given or not)."""
    name = name.removesuffix(".flags")
    if name not in recipe_names():
        raise ValueError(
            f"no recipe {name!r}; the recipes are: {', '.join(recipe_names())}"
        )
    return recipes_dir() / f"{name}.flags"


def expand_recipe_flags(argv):
    """`argv` with every `--recipe=NAME` (or `--recipe NAME`) replaced by
    `--flagfile=PATH`, so that absl reads the recipe where it stands."""
    expanded, arguments = [], iter(argv)
    for argument in arguments:
        if argument == FLAG:
            name = next(arguments, None)
            if name is None:
                raise ValueError(f"{FLAG} needs a name, e.g. {FLAG}=quickstart")
        elif argument.startswith(f"{FLAG}="):
            name = argument.split("=", 1)[1]
        else:
            expanded.append(argument)
            continue
        expanded.append(f"--flagfile={recipe_path(name)}")
    return expanded


def main(argv):
    if len(argv) > 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    try:
        if len(argv) == 2:
            print(recipe_path(argv[1]))
        else:
            print("\n".join(recipe_names()))
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

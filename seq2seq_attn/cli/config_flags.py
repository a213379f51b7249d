"""One flag generator for every command line: a flag per config field, of
the field's name, default and type, with the config docstring's description
of it as its help."""

import dataclasses
import inspect
import re
import sys
import typing

from absl import flags


def _kind(annotation):
    """bool, int, float or str, from a field's type (`int | None` is int)."""
    hints = typing.get_args(annotation) or (annotation,)
    for kind in (bool, int, float, str):
        if kind in hints:
            return kind
    return str


def attribute_docs(cls):
    """{field: its description} from the "Attributes:" section of a class
    docstring (Google style; "a, b: text" describes both a and b)."""
    lines = inspect.getdoc(cls).splitlines()
    if "Attributes:" not in lines:
        return {}
    docs, names = {}, []
    for line in lines[lines.index("Attributes:") + 1 :]:
        if not line.startswith("    "):
            break  # the section ends where the indentation does
        entry = re.match(r"    ([\w, ]+): (.*)", line)
        if entry and not line.startswith("     "):
            names = [name.strip() for name in entry.group(1).split(",")]
            for name in names:
                docs[name] = entry.group(2)
        else:
            for name in names:
                docs[name] += " " + line.strip()
    return docs


_DEFINE = {
    bool: flags.DEFINE_bool,
    int: flags.DEFINE_integer,
    float: flags.DEFINE_float,
    str: flags.DEFINE_string,
}


def define_config_flags(sections, module, skip=None, only=None, choices=None):
    """Defines one absl flag per field of each config class of `sections`
    (`{section: class}`), but the fields `skip[section]` names, or only
    those `only[section]` names, as flags of the command `module` (its
    `__name__`: `--help` lists them); a field `choices` names takes one of
    its values (an enum flag). Returns `{flag name: section}`."""
    # absl names the flags of the module run as a script after its path.
    module = sys.argv[0] if module == "__main__" else module
    defined = {}
    for section, kind in sections.items():
        hints = typing.get_type_hints(kind)
        docs = attribute_docs(kind)
        for field in dataclasses.fields(kind):
            if field.name in (skip or {}).get(section, ()):
                continue
            if only is not None and field.name not in only.get(section, ()):
                continue
            help_text = docs.get(field.name, f"{kind.__name__}.{field.name}")
            if field.name in (choices or {}):
                flags.DEFINE_enum(
                    field.name,
                    field.default,
                    list(choices[field.name]),
                    help_text,
                    module_name=module,
                )
            else:
                define = _DEFINE[_kind(hints[field.name])]
                define(field.name, field.default, help_text, module_name=module)
            defined[field.name] = section
    return defined


def resolve_corpus(data_values):
    """Lets `--corpus`'s default (multi30k) give way to training files or a
    TFDS dataset in `data_values` (the data flags' values, changed in
    place); refuses a corpus given as well, where the flag was set."""
    other_source = any(
        data_values.get(name)
        for name in ("train_source_file", "train_tsv_file", "tfds_dataset")
    )
    corpus = flags.FLAGS["corpus"]
    if other_source and not corpus.present:
        data_values["corpus"] = None
    elif other_source and corpus.value:
        raise ValueError(
            f"data: --corpus={corpus.value} (given on the command line or by "
            "a recipe) and your own data name two sources: add --corpus= "
            "after the recipe to train on your data only"
        )

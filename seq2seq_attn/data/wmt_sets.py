"""Standard test sets by name, from sacreBLEU's registry: the papers' WMT
news test sets (Bahdanau 4.1: newstest2012 and 2013 to validate, 2014 to
test, English-French; Luong 4.1: newstest2013 and 2014, English-German)
without looking for files.

    source, reference = named_test_set("wmt14", "en-fr")

sacreBLEU downloads a set once into `~/.sacrebleu` (or `$SACREBLEU`) and
reads it from there afterwards. "wmt14" is the official newstest2014 (for
English-German the filtered 2,737 sentences that Luong et al. report on;
"wmt14/full" is all 3,003). Multi30k's later test sets are there too, as
raw text: "multi30k/2017" (Flickr 2017) and "multi30k/2018" (Flickr 2018).
"""


def named_test_set(name, langpair):
    """`(source_path, reference_path)` of sacreBLEU test set `name` (e.g.
    "wmt14") in `langpair` ("en-fr": English source, French reference).

    Raises:
        ValueError: if sacreBLEU knows no such set or pair, or cannot
            download it, saying what to do instead.
    """
    from sacrebleu.dataset import DATASETS

    if name not in DATASETS:
        known = ", ".join(
            sorted(k for k in DATASETS if k.startswith(("wmt", "multi30k")))
        )
        raise ValueError(
            f"sacreBLEU has no test set {name!r}; its WMT and Multi30k sets: "
            f"{known}"
        )
    dataset = DATASETS[name]
    if langpair not in dataset.langpairs:
        raise ValueError(
            f"sacreBLEU's {name} has no language pair {langpair!r}; it has "
            f"{', '.join(sorted(dataset.langpairs))}"
        )
    try:
        source = dataset.get_source_file(langpair)
        references = dataset.get_reference_files(langpair)
    except (OSError, SystemExit) as error:
        raise ValueError(
            f"could not get sacreBLEU's {name} {langpair} ({error}): "
            "download it where there is a network (`sacrebleu -t "
            f"{name} -l {langpair} --echo src`) and copy ~/.sacrebleu here, "
            "or give --src and --ref"
        ) from None
    return source, references[0]

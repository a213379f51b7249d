"""The recipes by name, from a checkout and from an installed wheel."""

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from seq2seq_attn import recipes

REPO = pathlib.Path(__file__).parents[1]
LUONG = "multi30k/luong_global_general_feed"


def test_recipe_flag_becomes_a_flagfile_where_it_stands():
    path = recipes.recipe_path("quickstart")
    assert path == REPO / "configs" / "quickstart.flags"
    assert recipes.expand_recipe_flags(
        ["train", "--recipe=quickstart", "--epochs=1"]
    ) == ["train", f"--flagfile={path}", "--epochs=1"]
    assert recipes.expand_recipe_flags(
        ["train", "--recipe", "quickstart.flags"]
    ) == ["train", f"--flagfile={path}"]
    names = recipes.recipe_names()
    assert "luong/global_general_feed" in names and LUONG in names
    assert len(names) == len(list((REPO / "configs").rglob("*.flags")))
    with pytest.raises(ValueError, match="no recipe 'luong/nope'.*luong/base"):
        recipes.expand_recipe_flags(["train", "--recipe=luong/nope"])
    with pytest.raises(ValueError, match="needs a name"):
        recipes.expand_recipe_flags(["train", "--recipe"])


def _run(args, cwd, pythonpath):
    result = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
    )
    return result.returncode, result.stdout.strip(), result.stderr.strip()


@pytest.mark.slow
def test_the_wheel_carries_the_recipes_and_train_reads_them(tmp_path):
    # `pip wheel .` shipped no recipes: an installed package had none.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "configs", source / "configs")
    ignore = shutil.ignore_patterns("__pycache__", "configs")
    shutil.copytree(
        REPO / "seq2seq_attn", source / "seq2seq_attn", ignore=ignore
    )
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps"]
        + ["--no-build-isolation", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("seq2seq_attn-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.removeprefix("seq2seq_attn/configs/")
            for name in archive.namelist()
            if name.startswith("seq2seq_attn/configs/")
        }
        archive.extractall(tmp_path / "site")
    expected = {
        path.relative_to(REPO / "configs").as_posix()
        for path in (REPO / "configs").rglob("*")
        if path.is_file()
    }
    assert shipped == expected

    # Installed (the wheel's files first on the path), away from a checkout.
    site, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, err = _run(
        ["-m", "seq2seq_attn.recipes", LUONG], elsewhere, site
    )
    assert code == 0, err
    assert out == str(site / "seq2seq_attn" / "configs" / f"{LUONG}.flags")
    code, out, err = _run(
        ["-m", "seq2seq_attn.train", f"--recipe={LUONG}", "--model_dir=m"]
        + ["--print_params", "--hidden_units=64", "--embedding_dim=64"],
        elsewhere,
        site,
    )
    assert code == 0, err[-3000:]
    # The recipe's architecture, with the flags given after it.
    assert out.splitlines()[-1].startswith("luong: "), out
    count = int(out.splitlines()[-1].split()[1].replace(",", ""))
    assert count < 2_000_000  # 8.2M at the recipe's 256 units


def test_own_data_after_a_recipe_that_names_a_corpus(tmp_path):
    from seq2seq_attn.cli.train import run_config_from_flagfile

    recipe = recipes.recipe_path("quickstart")  # --corpus=multi30k
    files = ["--train_source_file=a.en", "--train_target_file=a.de"]
    with pytest.raises(ValueError, match="add --corpus= after the recipe"):
        run_config_from_flagfile(recipe, *files)
    run = run_config_from_flagfile(recipe, "--corpus=", *files)
    assert not run.data.corpus and run.data.train_source_file == "a.en"

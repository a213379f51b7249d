"""The README's Python code runs as written, in a fresh process."""

import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)


def test_the_readme_has_python_code():
    assert BLOCKS


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", BLOCKS[index]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    print(result.stdout)


def test_the_readme_leaves_the_lab_notebook_to_results():
    # The README is for users; machines, commits and run-by-run ratios go to
    # benchmarks/RESULTS.md (it named both machines and eight commits).
    text = README.read_text()
    words = set(re.findall(r"\b[0-9a-f]{7,40}\b", text))
    commits = {
        w for w in words if re.search(r"\d", w) and re.search("[a-f]", w)
    }
    assert not commits, commits
    machines = re.findall(r"EPYC|Xeon|CPU-2", text, re.IGNORECASE)
    assert not machines, machines
    assert "benchmarks/RESULTS.md" in text

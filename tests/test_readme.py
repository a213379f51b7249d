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

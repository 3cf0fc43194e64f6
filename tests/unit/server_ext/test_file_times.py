"""The Python twin of the plugin's ``file_time`` relation (``server_ext/file_times.py``), the
order of a changelog's files on a server without the plugin: nanosecond times, ties refused."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from server_ext.file_times import file_time, file_times


def write(path: Path, text: str = '{"a": 1}\n') -> str:
    path.write_text(text)
    return path.as_uri()


def test_a_file_time_is_its_nanosecond_modification_time(tmp_path: Path) -> None:
    first = write(tmp_path / "part-b.json")
    second = write(tmp_path / "part-a.json")  # written later, named earlier
    times = file_times(pd.Series([first, second, first]), pd.Series([0, 0, 0]), pd.Series(["T"]))
    assert list(times) == [
        (tmp_path / "part-b.json").stat().st_mtime_ns,
        (tmp_path / "part-a.json").stat().st_mtime_ns,
        (tmp_path / "part-b.json").stat().st_mtime_ns,
    ]
    assert times[0] < times[1]


def test_two_files_of_a_directory_that_tie_are_refused_naming_both(tmp_path: Path) -> None:
    a = write(tmp_path / "part-a.json")
    b = write(tmp_path / "part-b.json")
    tie = (tmp_path / "part-a.json").stat().st_mtime_ns
    os.utime(tmp_path / "part-b.json", ns=(tie, tie))
    with pytest.raises(RuntimeError) as failure:
        file_time(b, "Orders")
    message = str(failure.value)
    assert "part-a.json" in message and "part-b.json" in message and "Orders" in message
    assert "'changelog.file-order' = 'name'" in message
    with pytest.raises(RuntimeError):
        file_time(a, "Orders")


def test_files_that_hold_no_rows_do_not_tie_and_new_files_are_listed(tmp_path: Path) -> None:
    a = write(tmp_path / "part-a.json")
    tie = (tmp_path / "part-a.json").stat().st_mtime_ns
    for hidden in ("_SUCCESS", ".part-c.json.tmp", "part-empty.json"):
        write(tmp_path / hidden, "x" if hidden != "part-empty.json" else "")
        os.utime(tmp_path / hidden, ns=(tie, tie))
    assert file_time(a) == tie
    b = write(tmp_path / "part-b.json")  # after the directory was listed
    assert file_time(b) == (tmp_path / "part-b.json").stat().st_mtime_ns > tie


def test_another_filesystems_file_keeps_sparks_time() -> None:
    times = file_times(pd.Series(["s3a://b/t/part-0.json"]), pd.Series([1_500]), pd.Series([""]))
    assert list(times) == [1_500_000]

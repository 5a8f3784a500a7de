"""A shipped dataset (under the repository's data/) is refused from a dirty tree unless allowed."""

from __future__ import annotations

import subprocess

import pytest

from tcpmodels.records import DirtyTreeError, shipped_git_state


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path):
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "data" / "datasets").mkdir(parents=True)
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "commit", "-qm", "first")
    return tmp_path


def test_clean_tree_writes_shipped_dataset(repo):
    state = shipped_git_state(repo, repo / "data" / "datasets")
    assert state["dirty"] is False and state["shipped"] is True and state["allow_dirty"] is False
    assert len(state["commit"]) == 40


def test_dirty_tree_refused_for_shipped_dataset(repo):
    (repo / "code.py").write_text("x = 2\n")
    with pytest.raises(DirtyTreeError, match="--allow-dirty"):
        shipped_git_state(repo, repo / "data" / "datasets")
    with pytest.raises(ValueError):  # campaign_errors turns ValueError into exit status 1
        shipped_git_state(repo, repo / "data")


def test_allow_dirty_is_recorded(repo):
    (repo / "code.py").write_text("x = 2\n")
    state = shipped_git_state(repo, repo / "data" / "datasets", allow_dirty=True)
    assert state["dirty"] is True and state["allow_dirty"] is True


def test_dirty_tree_may_write_outside_data(repo, tmp_path_factory):
    (repo / "code.py").write_text("x = 2\n")
    state = shipped_git_state(repo, tmp_path_factory.mktemp("elsewhere"))
    assert state["dirty"] is True and state["shipped"] is False


def test_untracked_files_do_not_make_the_tree_dirty(repo):
    (repo / "runs.jsonl").write_text("{}\n")
    assert shipped_git_state(repo, repo / "data" / "datasets")["dirty"] is False

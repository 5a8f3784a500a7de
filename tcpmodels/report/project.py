"""The notebooks, data and examples shipped with tcpmodels, and ``tcpmodels init DIR`` that writes them into a working folder.

Why a folder and not the installed package: every notebook writes executed copies to
``reports/`` and figures to ``../figures`` and reads ``../data``, so it must run in a
folder the user owns, never inside ``site-packages``. The wheel carries the repository's
``notebooks/``, ``data/`` and ``examples/`` (testbed configurations) as package data
(``tcpmodels/_shipped/``, copied there by ``setup.py`` at build time); ``tcpmodels init DIR``
copies them into ``DIR`` with an empty ``figures/``, and ``tcpmodels report`` run in ``DIR``
then finds ``./notebooks`` (``tcpmodels testbed run examples/two_path.toml`` its example).
In a source checkout (editable install) the checkout's own folders are the source.

Every notebook is written with its outputs, execution counts and saved widget state cleared
(JupyterLab saves them into the notebook it runs; a stale widget view from an earlier session
must not reach the next). ``--students`` also leaves out the cells tagged :data:`ANSWERS_TAG`
(the lectures' collapsed answer blocks), so that a course can hand the copies out.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

__all__ = ["ANSWERS_TAG", "SHIPPED_DIRS", "init_project", "shipped_root", "working_copy"]

#: Folders copied by :func:`init_project`, relative to :func:`shipped_root`.
SHIPPED_DIRS = ("notebooks", "data", "examples")
#: Cell tag of a lecture's answers (a markdown cell holding a closed ``<details>`` block).
ANSWERS_TAG = "answers"
#: Never copied: editor and Jupyter leftovers.
_IGNORE_NAMES = (".ipynb_checkpoints", "__pycache__", "*.pyc", ".DS_Store")
_IGNORE = shutil.ignore_patterns(*_IGNORE_NAMES)


def shipped_root() -> Path:
    """Folder holding the shipped ``notebooks/``, ``data/`` and ``examples/``.

    Returns
    -------
    Path
        ``<package>/_shipped`` in an installed wheel; the checkout's root in a source
        checkout (editable install), recognised by its ``setup.cfg``.

    Raises
    ------
    FileNotFoundError
        If neither exists (a package built without its notebooks).
    """
    package = Path(__file__).resolve().parents[1]
    candidates = [package / "_shipped", package.parent]
    for root in candidates:
        if all((root / d).is_dir() for d in SHIPPED_DIRS) and (root.name == "_shipped" or (root / "setup.cfg").is_file()):
            return root
    raise FileNotFoundError(
        f"this tcpmodels installation ships no {'/, '.join(SHIPPED_DIRS)}/ (looked in {', '.join(map(str, candidates))}); "
        "install the wheel built from the repository, or work in a checkout"
    )


def working_copy(source: str | Path, target: str | Path, *, students: bool = False) -> Path:
    """Write a notebook as a working copy: outputs, execution counts and saved widget state cleared.

    Parameters
    ----------
    source : str or Path
        The shipped ``.ipynb``.
    target : str or Path
        Where to write it.
    students : bool
        Also leave out every cell tagged :data:`ANSWERS_TAG`.

    Returns
    -------
    Path
        ``target``.
    """
    import nbformat

    nb = nbformat.read(source, as_version=4)
    if students:
        nb.cells = [c for c in nb.cells if ANSWERS_TAG not in c.get("metadata", {}).get("tags", [])]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, target)
    return Path(target)


def init_project(dest: str | Path, *, force: bool = False, students: bool = False) -> list[Path]:
    """Write a ready working folder: the shipped notebooks, data and examples, and an empty ``figures/``.

    Parameters
    ----------
    dest : str or Path
        Folder to fill (created if missing). Relative paths are relative to the working directory.
    force : bool
        Replace ``notebooks/``, ``data/`` and ``examples/`` if ``dest`` already has them (otherwise refuse).
    students : bool
        Student copies: the lectures without their answer blocks (see :func:`working_copy`).

    Returns
    -------
    list of Path
        The folders written, absolute.

    Raises
    ------
    FileExistsError
        If ``dest`` already holds ``notebooks/`` or ``data/`` and ``force`` is false.
    FileNotFoundError
        If the installation ships no notebooks (see :func:`shipped_root`).
    """
    source = shipped_root()
    dest = Path(dest).resolve()
    present = [d for d in SHIPPED_DIRS if (dest / d).exists()]
    if present and not force:
        raise FileExistsError(f"{dest} already has {' and '.join(present)}/; use --force to replace them")
    if source == dest:
        raise FileExistsError(f"{dest} is where the shipped files come from")
    written = []
    dest.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED_DIRS:
        target = dest / name
        if target.exists():
            shutil.rmtree(target)
        if name == "notebooks":
            shutil.copytree(source / name, target, ignore=shutil.ignore_patterns("*.ipynb", *_IGNORE_NAMES))
            for nb in sorted((source / name).glob("*.ipynb")):
                working_copy(nb, target / nb.name, students=students)
        else:
            shutil.copytree(source / name, target, ignore=_IGNORE)
        written.append(target)
    figures = dest / "figures"
    figures.mkdir(exist_ok=True)
    written.append(figures)
    return written


def _cmd_init(args: argparse.Namespace) -> int:
    try:
        written = init_project(args.dir, force=args.force, students=args.students)
    except (FileExistsError, FileNotFoundError) as exc:
        print(f"tcpmodels init: {exc}", file=sys.stderr)
        return 2
    dest = written[0].parent
    n_notebooks = len(list((dest / "notebooks").glob("*.ipynb")))
    kind = "student copies of the notebooks (no answers)" if args.students else "notebooks"
    print(f"wrote {n_notebooks} {kind}, data/, examples/ and figures/ to {dest}")
    print(f"next: cd {dest} && tcpmodels report            (all notebooks; or name some, e.g. p4_lftcp_100g)")
    print(f"  or: jupyter lab --notebook-dir={dest / 'notebooks'}   (the lectures: teach_*.ipynb)")
    return 0


def add_subcommand(subparsers: argparse._SubParsersAction) -> None:
    """Register ``tcpmodels init``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``tcpmodels`` parser's sub-command collection.
    """
    p = subparsers.add_parser(
        "init",
        help="write the shipped notebooks and data into a working folder",
        description=(
            "Copy the notebooks, data and testbed examples shipped with tcpmodels into DIR\n"
            "(DIR/notebooks, DIR/data, DIR/examples) and create DIR/figures. Notebooks are written\n"
            "without outputs or saved widget state; --students also leaves out the lectures'\n"
            "answer blocks. Then run `tcpmodels report` inside DIR: reports go to DIR/reports\n"
            "and figures to DIR/figures, never into the installed package."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="folder to write (created if missing)")
    p.add_argument("--force", action="store_true", help="replace DIR/notebooks, DIR/data and DIR/examples if they exist")
    p.add_argument("--students", action="store_true",
                   help="student copies: the lectures (teach_*.ipynb) without their answer blocks")
    p.set_defaults(func=_cmd_init)

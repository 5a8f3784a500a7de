"""The notebooks and data shipped with tcpmodels, and ``tcpmodels init DIR`` that writes them into a working folder.

Why a folder and not the installed package: every notebook writes executed copies to
``reports/`` and figures to ``../figures`` and reads ``../data``, so it must run in a
folder the user owns, never inside ``site-packages``. The wheel carries the repository's
``notebooks/`` and ``data/`` as package data (``tcpmodels/_shipped/``, copied there by
``setup.py`` at build time); ``tcpmodels init DIR`` copies them into ``DIR`` with an empty
``figures/``, and ``tcpmodels report`` run in ``DIR`` then finds ``./notebooks``.
In a source checkout (editable install) the checkout's own folders are the source.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

__all__ = ["SHIPPED_DIRS", "shipped_root", "init_project"]

#: Folders copied by :func:`init_project`, relative to :func:`shipped_root`.
SHIPPED_DIRS = ("notebooks", "data")
#: Never copied: editor and Jupyter leftovers.
_IGNORE = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc", ".DS_Store")


def shipped_root() -> Path:
    """Folder holding the shipped ``notebooks/`` and ``data/``.

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
    package = Path(__file__).resolve().parent
    candidates = [package / "_shipped", package.parent]
    for root in candidates:
        if all((root / d).is_dir() for d in SHIPPED_DIRS) and (root.name == "_shipped" or (root / "setup.cfg").is_file()):
            return root
    raise FileNotFoundError(
        f"this tcpmodels installation ships no notebooks/ and data/ (looked in {', '.join(map(str, candidates))}); "
        "install the wheel built from the repository, or work in a checkout"
    )


def init_project(dest: str | Path, *, force: bool = False) -> list[Path]:
    """Write a ready working folder: the shipped notebooks and data, and an empty ``figures/``.

    Parameters
    ----------
    dest : str or Path
        Folder to fill (created if missing). Relative paths are relative to the working directory.
    force : bool
        Replace ``notebooks/`` and ``data/`` if ``dest`` already has them (otherwise refuse).

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
        shutil.copytree(source / name, target, ignore=_IGNORE)
        written.append(target)
    figures = dest / "figures"
    figures.mkdir(exist_ok=True)
    written.append(figures)
    return written


def _cmd_init(args: argparse.Namespace) -> int:
    try:
        written = init_project(args.dir, force=args.force)
    except (FileExistsError, FileNotFoundError) as exc:
        print(f"tcpmodels init: {exc}", file=sys.stderr)
        return 2
    dest = written[0].parent
    n_notebooks = len(list((dest / "notebooks").glob("*.ipynb")))
    print(f"wrote {n_notebooks} notebooks, data/ and figures/ to {dest}")
    print(f"next: cd {dest} && tcpmodels report            (all notebooks; or name some, e.g. p4_lftcp_100g)")
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
            "Copy the notebooks and data shipped with tcpmodels into DIR (DIR/notebooks, DIR/data)\n"
            "and create DIR/figures. Then run `tcpmodels report` inside DIR: reports go to\n"
            "DIR/reports and figures to DIR/figures, never into the installed package."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="folder to write (created if missing)")
    p.add_argument("--force", action="store_true", help="replace DIR/notebooks and DIR/data if they exist")
    p.set_defaults(func=_cmd_init)

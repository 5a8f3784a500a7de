"""Build hooks: the compiled pcap kernel, and the wheel also carries notebooks/, data/ and examples/ (for ``tcpmodels init``).

``tcpmodels.traces.ckernel`` is a small C extension (only Python's own headers and a C compiler, gcc
from the Makefile's system packages): the per-record loops of the native pcap reader. It is optional:
where it cannot be built the install goes on and the reader uses its numpy path (same results).

All metadata is in setup.cfg. ``build_py`` copies ``notebooks/`` (the notebooks and their README),
``data/`` and ``examples/`` (testbed configurations) into ``tcpmodels/_shipped/`` of the build, so an installed wheel can write a
ready working folder (``tcpmodels.report.project.init_project``) without the repository. An editable
install skips the copy: there the checkout's own folders are used.
"""

import shutil
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("notebooks", "data", "examples")
IGNORE = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc", ".DS_Store")


class BuildPyWithShippedFiles(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "tcpmodels" / "_shipped"
        for name in SHIPPED:
            if not (ROOT / name).is_dir():
                raise FileNotFoundError(f"{ROOT / name} is missing: the wheel must ship it (see tcpmodels/report/project.py)")
            if (target / name).exists():
                shutil.rmtree(target / name)
            shutil.copytree(ROOT / name, target / name, ignore=IGNORE)


KERNEL = Extension("tcpmodels.traces.ckernel", sources=["tcpmodels/traces/ckernel.c"],
                   extra_compile_args=["-O2"], optional=True)
# the per-connection pass: its time comparisons must round as numpy's do (no fast-math, no contraction)
FLOWS = Extension("tcpmodels.traces.cflows", sources=["tcpmodels/traces/cflows.c"],
                  extra_compile_args=["-O3", "-fno-fast-math", "-ffp-contract=off"], optional=True)

setup(cmdclass={"build_py": BuildPyWithShippedFiles}, ext_modules=[KERNEL, FLOWS])

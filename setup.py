"""Build hook: the embedded default domain (kb/, rules/) goes into the wheel as pipeline/domain/, so an installed
verirag's defaults work from any folder (pipeline.defaults looks there first). Metadata lives in pyproject.toml."""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DOMAIN = ("kb", "rules")


class BuildWithDomain(build_py):
    def run(self) -> None:
        super().run()
        here = Path(__file__).resolve().parent
        for name in DOMAIN:
            target = Path(self.build_lib) / "pipeline" / "domain" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(here / name, target, ignore=shutil.ignore_patterns(".*", "__pycache__"))


setup(cmdclass={"build_py": BuildWithDomain})

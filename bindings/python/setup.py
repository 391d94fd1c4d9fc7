"""Builds libtkc with CMake (from the repository this directory sits in, ../..) into a temporary
folder and bundles it as tkc/_lib/libtkc.so; with $TKC_LIB set, that library is bundled instead.
Metadata is in pyproject.toml.

    pip install ./bindings/python                          # builds libtkc (CMake, a C compiler)
    TKC_LIB=build/libtkc.so pip install ./bindings/python  # bundles an existing build
$CMAKE_ARGS adds CMake options (e.g. -DTKC_WITH_LLVM=OFF); $CMAKE_BUILD_PARALLEL_LEVEL sets the jobs.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CMAKE_OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DTKC_BUILD_TESTS=OFF", "-DTKC_BUILD_EXAMPLES=OFF", "-DTKC_BUILD_BENCH=OFF",
                 "-DTKC_WERROR=OFF"]


def version():
    """TKC_VERSION_MAJOR.MINOR.PATCH of include/tkc/base.h."""
    text = open(os.path.join(REPO, "include", "tkc", "base.h")).read()
    return ".".join(re.search(r"#define TKC_VERSION_%s (\d+)" % part, text).group(1) for part in ("MAJOR", "MINOR", "PATCH"))


def build_libtkc(tmp):
    """Runs CMake on the repository into tmp; returns the built shared library's path."""
    if not os.path.exists(os.path.join(REPO, "CMakeLists.txt")):
        raise RuntimeError("tkc: %s is not the tkc repository (no CMakeLists.txt): set TKC_LIB to a built libtkc.so" % REPO)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    # CMake asks python3 where the wgpu package is (the WEBGPU device's headers): give it the user's
    # Python environment, not pip's build isolation, which hides the installed packages
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
    extra = shlex.split(os.environ.get("CMAKE_ARGS", ""))
    subprocess.check_call(["cmake", "-S", REPO, "-B", tmp] + CMAKE_OPTIONS + extra, env=env)
    subprocess.check_call(["cmake", "--build", tmp, "--target", "tkc", "-j", jobs], env=env)
    libs = sorted(glob.glob(os.path.join(tmp, "libtkc.so*")) + glob.glob(os.path.join(tmp, "libtkc*.dylib")))
    if not libs:
        raise RuntimeError("tkc: the CMake build made no libtkc in %s" % tmp)
    return libs[0]


class BuildPyWithLib(build_py):
    """build_py, then the shared library into tkc/_lib/."""

    def run(self):
        super().run()
        dest = os.path.join(self.build_lib, "tkc", "_lib")
        os.makedirs(dest, exist_ok=True)
        name = "libtkc.dylib" if os.uname().sysname == "Darwin" else "libtkc.so"
        given = os.environ.get("TKC_LIB")
        if given:
            shutil.copy(os.path.realpath(given), os.path.join(dest, name))
            return
        tmp = tempfile.mkdtemp(prefix="tkc-build-")
        try:
            shutil.copy(os.path.realpath(build_libtkc(tmp)), os.path.join(dest, name))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class BinaryDistribution(Distribution):
    """The wheel holds a platform library."""

    def has_ext_modules(self):
        return True


setup(version=version(), cmdclass={"build_py": BuildPyWithLib}, distclass=BinaryDistribution)

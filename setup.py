"""Build the Cython kernels in simplexsg/_ext against numpy's C random API (libnpyrandom).

OpenMP (for ``prange`` over documents) is used when the compiler accepts ``-fopenmp``; without
it the kernels build serially and ``n_jobs`` has no effect. Set SIMPLEXSG_NO_OPENMP=1 to force that.
"""
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

NUMPY_DIR = Path(np.get_include()).parents[1]          # .../site-packages/numpy
NUMPY_LIBS = [str(NUMPY_DIR / "random" / "lib"), str(NUMPY_DIR / "_core" / "lib")]

COMPILER_DIRECTIVES = {
    "language_level": 3,
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
}


def openmp_flags():
    """['-fopenmp'] if the C compiler builds and links an OpenMP program, else []."""
    if os.environ.get("SIMPLEXSG_NO_OPENMP") or sys.platform == "darwin":
        return []
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "omp.c"
        src.write_text("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        result = subprocess.run([*cc, "-fopenmp", str(src), "-o", str(Path(tmp) / "omp")],
                                capture_output=True)
    return ["-fopenmp"] if result.returncode == 0 else []


OPENMP = openmp_flags()


def kernel(name):
    return Extension(
        f"simplexsg._ext.{name}",
        sources=[f"simplexsg/_ext/{name}.pyx"],
        include_dirs=[np.get_include()],
        library_dirs=NUMPY_LIBS,
        libraries=["npyrandom", "npymath", "m"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3", *OPENMP],
        extra_link_args=OPENMP,
    )


KERNELS = sorted(p.stem for p in Path("simplexsg/_ext").glob("*.pyx"))

# The kernels compile on every core, one C file a thread (setuptools' parallel build_ext):
# one after another, their compilation is most of an install's time.
setup(ext_modules=cythonize([kernel(n) for n in KERNELS], compiler_directives=COMPILER_DIRECTIVES),
      options={"build_ext": {"parallel": os.cpu_count() or 1}})

# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""tests/cuda/host.c's launches from Python (tests/integration/gpu-standin.sh): NOT a GPU test.

Loads the injection library perch hands it (CUDA_INJECTION64_PATH) and the stand-in libcupti
with ctypes, as a CUDA program's driver would, and launches spin_a three times from the Python
function py_launch_site, so perch's launch probe sees Python frames above the C ones: the GPU
time by launching call path names py_launch_site.
"""
import ctypes
import os
import time

inj = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"], mode=ctypes.RTLD_GLOBAL)
cupti = ctypes.CDLL("libcupti.so.13", mode=os.RTLD_NOLOAD)
launch = cupti.fake_cupti_launch
launch.restype = ctypes.c_uint32
launch.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_int]
# time for perch to read the libraries just loaded (their unwind tables), as the host's settle
time.sleep(0.3)
print("init", inj.InitializeInjection(), flush=True)


def py_launch_site():
    print("launch spin_a", launch(1, 211, b"spin_a", 1), flush=True)  # cudaLaunchKernel_v7000


for _ in range(3):
    py_launch_site()
cupti.fake_cupti_complete()
# perch names Python code objects from the live process at its drains (every 100 ms): a program
# that exits right after its last launch leaves its code objects unnamed (counted); a CUDA
# program's teardown is longer than this
time.sleep(0.3)

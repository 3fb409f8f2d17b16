"""Code-generation targets other than the host CPU (the host is target=None: driver.py and
jit.py). nvptx/: PTX for NVIDIA GPUs, all of it in that package."""

"""gpu_infra_gpus: `gpu-infra-api gpu-check cuda|nvlink`, the GPU checks that need a library
call (the user data or, where the fleet has them, the node tools write it next to
gpu-infra-api). Python 3.6+ standard library."""

import ctypes

NVLINK_MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS (nvml.h)


def check_cuda() -> None:
    """Exit 1 unless every GPU takes a CUDA context (libcuda cuCtxCreate)."""
    count = ctypes.c_int()
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) or cuda.cuDeviceGetCount(ctypes.byref(count)) or not count.value:
        raise SystemExit("gpu-infra-api: CUDA sees no GPU")
    for index in range(count.value):
        device, context = ctypes.c_int(), ctypes.c_void_p()
        if cuda.cuDeviceGet(ctypes.byref(device), index) or \
                cuda.cuCtxCreate_v2(ctypes.byref(context), 0, device):
            raise SystemExit("gpu-infra-api: no CUDA context on GPU {}".format(index))
        cuda.cuCtxDestroy_v2(context)


def check_nvlink() -> None:
    """Exit 1 unless NVML starts and every GPU has NVLink links, all of them active (the
    health step runs it only on types with more than one GPU on NVLink)."""
    count = ctypes.c_int()
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
    if nvml.nvmlInit_v2() or nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)):
        raise SystemExit("gpu-infra-api: NVML did not start")
    for index in range(count.value):
        handle, active, links = ctypes.c_void_p(), ctypes.c_int(), 0
        if nvml.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)):
            raise SystemExit("gpu-infra-api: NVML has no handle for GPU {}".format(index))
        for link in range(NVLINK_MAX_LINKS):
            if nvml.nvmlDeviceGetNvLinkState(handle, link, ctypes.byref(active)):
                continue  # no such link on this GPU
            if not active.value:
                raise SystemExit("gpu-infra-api: GPU {} NVLink {} down".format(index, link))
            links += 1
        if not links:
            raise SystemExit("gpu-infra-api: GPU {} has no NVLink link".format(index))

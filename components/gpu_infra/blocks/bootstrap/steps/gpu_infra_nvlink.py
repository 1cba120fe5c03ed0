"""gpu_infra_nvlink: `gpu-infra-api gpu-check nvlink` (fleets whose catalog entry says NVLink
only): every NVLink link NVML knows on every GPU is active. Python 3.6+ standard library."""

import ctypes

NVLINK_MAX_LINKS = 18  # NVML_NVLINK_MAX_LINKS (nvml.h)


def check_nvlink() -> None:
    """Exit 1 unless NVML starts and every GPU has NVLink links, all of them active."""
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

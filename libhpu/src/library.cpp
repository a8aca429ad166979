// SPDX-License-Identifier: MIT
// The library itself: its version and its error strings. No C++ exception
// crosses the C ABI (include/hpu/hpu.h): every entry point catches and
// reports -ENOMEM (allocation) or -EIO.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "hpu/hpu.h"

extern "C" {

HPU_EXPORT uint32_t hpu_get_version(void)
{
    return HPU_API_VERSION;
}

HPU_EXPORT const char *hpu_strerror(int err)
{
    const int e = err < 0 ? -err : err;
    switch (e) {
    case 0:
        return "Success";
    case ENODEV:
        return "No such HPU device";
    case ENOENT:
        return "No such file or directory (is the hpu driver loaded?)";
    case EACCES:
    case EPERM:
        return "Permission denied (no access to the HPU device node)";
    case EINVAL:
        return "Invalid argument";
    case EFAULT:
        return "Bad address (unmapped memory or a device MMU fault)";
    case ETIME:
        return "Timer expired (the fence did not signal in time)";
    case ETIMEDOUT:
        return "The job timed out on the device";
    case ECANCELED:
        return "The job was cancelled (device reset or queue destroyed)";
    case ENOSPC:
        return "Command list full";
    case EXDEV:
        return "Object belongs to another HPU device";
    case ENOMEM:
        return "Out of memory";
    case EPROTO:
        return "Unexpected answer from the hpu driver (version mismatch?)";
    case ENOTTY:
        return "Not an hpu device (ioctl not supported)";
    case EIO:
        return "Input/output error";
    case EBUSY:
        return "Device or resource busy (a reset in progress, or the job is still pending)";
    case EDEADLK:
        return "Not allowed from the HPU event callback";
    case ENOEXEC:
        return "The device refused a TPC launch or GEMM (bad kernel binary, launch or tensor descriptor)";
    case EILSEQ:
        return "A TPC core hit an illegal instruction or ran off its code";
    case EDOM:
        return "A TPC kernel's assertion failed";
    case EOPNOTSUPP:
        return "Not supported by the hpu driver";
    case EHWPOISON:
        return "Uncorrectable memory error (HBM ECC)";
    default:
        break;
    }
    const char *desc = strerrordesc_np(e);
    return desc != nullptr ? desc : "Unknown error";
}

} // extern "C"

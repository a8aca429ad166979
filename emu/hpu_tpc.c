/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the TPC engine (engine index 8), its TPC_LAUNCH packet
 * (Documentation/hw/compute.md, Documentation/hw/tpc.md).
 *
 * The queue manager of the cluster is the one of hpu_qm.c; this file only
 * runs the packet.  For now it checks the packet's fields and refuses
 * every launch BAD_LAUNCH: the cores are not modelled yet.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include "hpu_internal.h"

int hpum_tpc_launch(const HpuPacket *k)
{
    uint64_t desc = hpum_le64(k->p + 8);

    if (hpum_le32(k->p + 4)) {
        return hpum_pkt_bad(k, "TPC_LAUNCH reserved field not zero");
    }
    if (desc & (HPU_LAUNCH_DESC_ALIGN - 1)) {
        return hpum_bad_launch(k, desc, 1,
                               "launch descriptor not 64-byte aligned");
    }
    return hpum_bad_launch(k, desc, 0,
                           "TPC launch not implemented in this model yet");
}

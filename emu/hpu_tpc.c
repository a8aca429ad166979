/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the TPC cluster (engine index 8) and its TPC_LAUNCH
 * packet (Documentation/hw/compute.md, Documentation/hw/tpc.md).
 *
 * A launch is read and checked in the order of tpc.md (descriptor,
 * binary, counts and index space, tensor descriptors), all through the
 * MMU in the command buffer's ASID.  The code is then decoded once into
 * HpuTpcBundle records (handler opcode, register numbers, the immediate,
 * the lane count; an illegal bundle keeps its reason and fails only when a
 * member reaches it), and the index space is split across the cores as
 * tpc.md says.  Each core runs its members on a worker thread of the
 * environment (HpuCoreOps.run_parallel; one after the other without it)
 * with the interpreter of hpu_tpc_exec.c.
 *
 * Memory: a core translates tensor addresses per page run through
 * hpum_mem_run() into a small translation cache of its own, keeps per
 * tensor the run and HBM chunk of its last access, and copies with memcpy
 * from HBM chunks or dma_read / dma_write for host pages.  A core's
 * members run as one access in flight (hpum_dma_begin() .. hpum_dma_end(),
 * hbm.users raised, its translations held for MMU_INV), renewed at every
 * member's end and every HPU_TPC_CHECK_BUNDLES bundles, when the core also
 * checks that the job may go on (hpum_job_check_locked(): stream disabled,
 * reset, INJ_HANG) and, if an MMU_INV of its ASID came, forgets its
 * translations.  So a reset or an MMU_INV waits for at most that slice of
 * one member per core, and nothing is stored after it through a
 * translation made before it.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpu_internal.h"
#include "hpu_tpc_int.h"

/* The instruction table of the header, indexed by slot and opcode. */
static const struct hpu_tpc_insn_desc hpum_tpc_table[] = { HPU_TPC_INSN_DESCS };

/*
 * The row of @op in @slot, or NULL.  A linear search: the decoder runs once
 * per bundle of a launch.
 */
static const struct hpu_tpc_insn_desc *hpum_tpc_find(unsigned int slot,
                                                     unsigned int op)
{
    size_t i;

    for (i = 0; i < HPU_ARRAY_LEN(hpum_tpc_table); i++) {
        if (hpum_tpc_table[i].slot == slot && hpum_tpc_table[i].opcode == op) {
            return &hpum_tpc_table[i];
        }
    }
    return NULL;
}

/* ---- Decoder (tpc.md "Slot encoding", "TPC_ILLEGAL") ------------------ */

static int hpum_tpc_opnd_class(unsigned int k)
{
    switch (k) {
    case HPU_TPC_OPND_VD: case HPU_TPC_OPND_VA:
    case HPU_TPC_OPND_VB: case HPU_TPC_OPND_VC:
        return HPU_TPC_CL_V;
    case HPU_TPC_OPND_SD: case HPU_TPC_OPND_SA: case HPU_TPC_OPND_SC:
        return HPU_TPC_CL_S;
    case HPU_TPC_OPND_PD: case HPU_TPC_OPND_PA: case HPU_TPC_OPND_PB:
    case HPU_TPC_OPND_PC: case HPU_TPC_OPND_PNA:
        return HPU_TPC_CL_P;
    case HPU_TPC_OPND_QD: case HPU_TPC_OPND_QA:
    case HPU_TPC_OPND_QB: case HPU_TPC_OPND_QC:
        return HPU_TPC_CL_Q;
    case HPU_TPC_OPND_ID: case HPU_TPC_OPND_IA: case HPU_TPC_OPND_IB:
        return HPU_TPC_CL_I;
    case HPU_TPC_OPND_TA:
        return HPU_TPC_CL_T;
    default:
        return HPU_TPC_CL_NONE;
    }
}

/* Field (0 D, 1 A, 2 B, 3 C) of a register operand, or -1. */
static int hpum_tpc_opnd_field(unsigned int k)
{
    switch (k) {
    case HPU_TPC_OPND_VD: case HPU_TPC_OPND_SD: case HPU_TPC_OPND_PD:
    case HPU_TPC_OPND_QD: case HPU_TPC_OPND_ID:
        return 0;
    case HPU_TPC_OPND_VA: case HPU_TPC_OPND_SA: case HPU_TPC_OPND_PA:
    case HPU_TPC_OPND_PNA: case HPU_TPC_OPND_QA: case HPU_TPC_OPND_IA:
    case HPU_TPC_OPND_TA:
        return 1;
    case HPU_TPC_OPND_VB: case HPU_TPC_OPND_PB: case HPU_TPC_OPND_QB:
    case HPU_TPC_OPND_IB:
        return 2;
    case HPU_TPC_OPND_VC: case HPU_TPC_OPND_SC: case HPU_TPC_OPND_PC:
    case HPU_TPC_OPND_QC: case HPU_TPC_OPND_DIMC:
        return 3;
    default:
        return -1;
    }
}

static unsigned int hpum_tpc_class_limit(int cl)
{
    if (cl == HPU_TPC_CL_V || cl == HPU_TPC_CL_S) {
        return 32;
    }
    return cl == HPU_TPC_CL_T ? HPU_TPC_MAX_TENSORS : 8;
}

static unsigned int hpum_tpc_reg_field(uint64_t lo, int f)
{
    return (unsigned int)(lo >> (32 + 8 * f)) & 0xff;
}

static unsigned int hpum_tpc_part_ratio(unsigned int src, unsigned int dst)
{
    unsigned int ls = hpu_tpc_lanes(src), ld = hpu_tpc_lanes(dst);

    return ls > ld ? ls / ld : ld / ls;
}

static bool hpum_tpc_imm_ok(const struct hpu_tpc_insn_desc *d,
                            unsigned int type, uint32_t imm)
{
    unsigned int w;

    if (d->flags & HPU_TPC_IF_LANEIMM) {
        return imm < hpu_tpc_lanes(type);
    }
    if ((d->flags & HPU_TPC_IF_IDX) || d->types == HPU_TPC_TS_NONE ||
        type == HPU_TPC_DT_F32 || type == HPU_TPC_DT_BF16) {
        return true;
    }
    w = 8 * hpu_tpc_dtype_size(type);
    return w >= 32 || (imm >> w) == 0;
}

static unsigned int hpum_tpc_check_mods(const struct hpu_tpc_insn_desc *d,
                                        unsigned int slot, uint64_t lo)
{
    unsigned int type = HPU_TPC_GET(lo, TYPE), type2 = HPU_TPC_GET(lo, TYPE2);
    unsigned int mod = HPU_TPC_GET(lo, MOD);

    if (d->types == HPU_TPC_TS_NONE ? type != 0 : !((d->types >> type) & 1)) {
        return HPU_TPC_ILL_FIELD;
    }
    if (d->flags & HPU_TPC_IF_TYPE2) {
        if (!((d->types >> type2) & 1) || type2 == type) {
            return HPU_TPC_ILL_FIELD;
        }
    } else if (type2) {
        return HPU_TPC_ILL_FIELD;
    }
    if (d->flags & HPU_TPC_IF_COND) {
        if (mod >= HPU_TPC_COND_COUNT) {
            return HPU_TPC_ILL_FIELD;
        }
    } else if (d->flags & HPU_TPC_IF_RMODE) {
        bool sr_ok = slot == HPU_TPC_SLOT_VECTOR && type == HPU_TPC_DT_F32 &&
                     type2 == HPU_TPC_DT_BF16;

        if (mod > HPU_TPC_RM_SR || (mod == HPU_TPC_RM_SR && !sr_ok)) {
            return HPU_TPC_ILL_FIELD;
        }
    } else if (mod && d->opnd[0] != HPU_TPC_OPND_PNA) {
        return HPU_TPC_ILL_FIELD;
    }
    if (HPU_TPC_GET(lo, SAT)) {
        if (!(d->flags & HPU_TPC_IF_SAT)) {
            return HPU_TPC_ILL_FIELD;
        }
        if (!(d->flags & HPU_TPC_IF_TYPE2) && !((HPU_TPC_TS_INT >> type) & 1)) {
            return HPU_TPC_ILL_FIELD;
        }
    }
    if (HPU_TPC_GET(lo, GLANE) && !(d->flags & HPU_TPC_IF_LANEG)) {
        return HPU_TPC_ILL_GUARD;
    }
    return HPU_TPC_ILL_NONE;
}

/*
 * One slot: the checks of check_slot() in tools/hpu-as, then the tensor
 * type against the launch (the slot's TENSOR reason comes in slot order).
 * Fills @o.  Returns the illegal reason or HPU_TPC_ILL_NONE.
 */
static unsigned int hpum_tpc_decode_slot(const HpuTpcLaunch *L,
                                         unsigned int slot, uint64_t lo,
                                         uint64_t hi, HpuTpcOp *o)
{
    const struct hpu_tpc_insn_desc *d;
    unsigned int op = HPU_TPC_GET(lo, OPCODE), used = 0, r, i, f;
    unsigned int form = HPU_TPC_GET(lo, FORM), type = HPU_TPC_GET(lo, TYPE);
    uint32_t imm = (uint32_t)HPU_TPC_GET(hi, IMM);

    memset(o, 0, sizeof(*o));
    if (op == HPU_TPC_OP_NOP) {
        return (lo || hi) ? HPU_TPC_ILL_FIELD : HPU_TPC_ILL_NONE;
    }
    d = hpum_tpc_find(slot, op);
    if (!d) {
        return HPU_TPC_ILL_OPCODE;
    }
    if (HPU_TPC_GET(lo, RSVD) || HPU_TPC_GET(hi, HIRSVD)) {
        return HPU_TPC_ILL_FIELD;
    }
    r = hpum_tpc_check_mods(d, slot, lo);
    if (r) {
        return r;
    }
    /* bits of used: 0-3 fields D A B C, 4 mod, 5 form, 6 imm, 7 part */
    for (i = 0; i < 4; i++) {
        unsigned int k = d->opnd[i];
        int cl = hpum_tpc_opnd_class(k);
        int fld = hpum_tpc_opnd_field(k);

        if (cl != HPU_TPC_CL_NONE) {
            unsigned int reg = hpum_tpc_reg_field(lo, fld);

            used |= 1u << fld;
            if (reg >= hpum_tpc_class_limit(cl)) {
                return HPU_TPC_ILL_FIELD;
            }
            if ((k == HPU_TPC_OPND_PD || k == HPU_TPC_OPND_QD) && reg == 0) {
                return HPU_TPC_ILL_FIELD;
            }
            if (cl == HPU_TPC_CL_T && reg >= L->nt) {
                return HPU_TPC_ILL_TENSOR;
            }
            if (k == HPU_TPC_OPND_PNA) {
                used |= 1u << 4;
                if (HPU_TPC_GET(lo, MOD) > 1) {
                    return HPU_TPC_ILL_FIELD;
                }
            }
            continue;
        }
        switch (k) {
        case HPU_TPC_OPND_DIMC:
            used |= 1u << 3;
            if (hpum_tpc_reg_field(lo, 3) >= HPU_TPC_DIMS) {
                return HPU_TPC_ILL_FIELD;
            }
            break;
        case HPU_TPC_OPND_XB:
        case HPU_TPC_OPND_SXB:
            used |= 1u << 5;
            if (form == 3 ||
                (k == HPU_TPC_OPND_SXB && form == HPU_TPC_FORM_V)) {
                return HPU_TPC_ILL_FIELD;
            }
            if (form == HPU_TPC_FORM_IMM) {
                used |= 1u << 6;
                if (!hpum_tpc_imm_ok(d, type, imm)) {
                    return HPU_TPC_ILL_FIELD;
                }
            } else {
                used |= 1u << 2;
                if (hpum_tpc_reg_field(lo, 2) >= 32) {
                    return HPU_TPC_ILL_FIELD;
                }
            }
            break;
        case HPU_TPC_OPND_MEM:
            used |= (1u << 5) | (1u << 6) | (1u << 1);
            if (form == HPU_TPC_FORM_S) {
                if (hpum_tpc_reg_field(lo, 1) >= 32) {
                    return HPU_TPC_ILL_FIELD;
                }
            } else if (form != HPU_TPC_FORM_IMM || hpum_tpc_reg_field(lo, 1)) {
                return HPU_TPC_ILL_FIELD;
            }
            break;
        case HPU_TPC_OPND_IMM:
            used |= 1u << 6;
            if ((d->flags & HPU_TPC_IF_BIT) && imm > 1) {
                return HPU_TPC_ILL_FIELD;
            }
            if (d->flags & HPU_TPC_IF_ARG) {
                if (imm >= HPU_TPC_MAX_SCALARS) {
                    return HPU_TPC_ILL_FIELD;
                }
                if (imm >= L->ns) {
                    return HPU_TPC_ILL_ARG;
                }
            }
            break;
        case HPU_TPC_OPND_LBL:
            used |= 1u << 6;
            if (imm >= L->nb) {
                return HPU_TPC_ILL_FIELD;
            }
            break;
        case HPU_TPC_OPND_PART:
            used |= 1u << 7;
            if (HPU_TPC_GET(lo, PART) >=
                hpum_tpc_part_ratio(type, HPU_TPC_GET(lo, TYPE2))) {
                return HPU_TPC_ILL_FIELD;
            }
            break;
        default:
            break;
        }
    }
    if (d->flags & (HPU_TPC_IF_COND | HPU_TPC_IF_RMODE)) {
        used |= 1u << 4;
    }
    for (f = 0; f < 4; f++) {
        if (!(used & (1u << f)) && hpum_tpc_reg_field(lo, (int)f)) {
            return HPU_TPC_ILL_FIELD;
        }
    }
    if ((!(used & 0x10) && HPU_TPC_GET(lo, MOD)) ||
        (!(used & 0x20) && HPU_TPC_GET(lo, FORM)) ||
        (!(used & 0x40) && imm) ||
        (!(used & 0x80) && HPU_TPC_GET(lo, PART))) {
        return HPU_TPC_ILL_FIELD;
    }
    if ((d->flags & HPU_TPC_IF_TENSOR) &&
        L->t[hpum_tpc_reg_field(lo, 1)].dt != type) {
        return HPU_TPC_ILL_TENSOR;
    }
    o->op = (uint8_t)op;
    o->dt = (uint8_t)type;
    o->dt2 = (uint8_t)HPU_TPC_GET(lo, TYPE2);
    o->form = (uint8_t)form;
    o->mod = (uint8_t)HPU_TPC_GET(lo, MOD);
    o->sat = (uint8_t)HPU_TPC_GET(lo, SAT);
    o->part = (uint8_t)HPU_TPC_GET(lo, PART);
    o->greg = (uint8_t)HPU_TPC_GET(lo, GREG);
    o->gneg = (uint8_t)HPU_TPC_GET(lo, GNEG);
    o->glane = (uint8_t)HPU_TPC_GET(lo, GLANE);
    o->d = (uint8_t)hpum_tpc_reg_field(lo, 0);
    o->a = (uint8_t)hpum_tpc_reg_field(lo, 1);
    o->b = (uint8_t)hpum_tpc_reg_field(lo, 2);
    o->c = (uint8_t)hpum_tpc_reg_field(lo, 3);
    o->imm = imm;
    o->desc = d;
    o->lanes = (uint16_t)hpu_tpc_lanes(type);
    o->dst_class = 0;
    if (hpum_tpc_opnd_field(d->opnd[0]) == 0) {
        o->dst_class = (uint8_t)hpum_tpc_opnd_class(d->opnd[0]);
    }
    return HPU_TPC_ILL_NONE;
}

/*
 * Whether the decoded slot @o reads register @reg of class @cl
 * as a source (fields A, B, C and the B or MEM forms; a destination it
 * also reads is its own, which no other slot writes).
 */
static bool hpum_tpc_reads(const HpuTpcOp *o, int cl, unsigned int reg)
{
    const struct hpu_tpc_insn_desc *d = o->desc;
    const uint8_t field[4] = { o->d, o->a, o->b, o->c };
    unsigned int i;

    for (i = 0; d && i < 4; i++) {
        unsigned int k = d->opnd[i];
        int f = hpum_tpc_opnd_field(k), c = hpum_tpc_opnd_class(k);

        if (c != HPU_TPC_CL_NONE && f > 0 && c == cl && field[f] == reg) {
            return true;
        }
        if ((k == HPU_TPC_OPND_XB || k == HPU_TPC_OPND_SXB) &&
            o->form != HPU_TPC_FORM_IMM && o->b == reg &&
            cl == (o->form == HPU_TPC_FORM_V ? HPU_TPC_CL_V : HPU_TPC_CL_S)) {
            return true;
        }
        if (k == HPU_TPC_OPND_MEM && o->form == HPU_TPC_FORM_S &&
            cl == HPU_TPC_CL_S && o->a == reg) {
            return true;
        }
    }
    return false;
}

/*
 * Whether a slot that runs after @slot (in the order load, store, scalar,
 * vector) reads the register @slot writes.
 */
static bool hpum_tpc_read_later(const HpuTpcBundle *b, unsigned int slot)
{
    static const unsigned int order[HPU_TPC_SLOTS] = {
        HPU_TPC_SLOT_LOAD, HPU_TPC_SLOT_STORE, HPU_TPC_SLOT_SCALAR,
        HPU_TPC_SLOT_VECTOR,
    };
    const HpuTpcOp *o = &b->s[slot];
    unsigned int i;
    bool after = false;

    for (i = 0; i < HPU_TPC_SLOTS; i++) {
        if (after && hpum_tpc_reads(&b->s[order[i]], o->dst_class, o->d)) {
            return true;
        }
        after |= order[i] == slot;
    }
    return false;
}

/*
 * Add the vector, scalar, index and lane-predicate registers the decoded
 * slot @o names (operands and guard) to the launch's masks: the
 * registers a member's start zeroes, as no other can be read.
 */
static void hpum_tpc_name_regs(HpuTpcLaunch *L, const HpuTpcOp *o)
{
    const struct hpu_tpc_insn_desc *d = o->desc;
    const uint8_t field[4] = { o->d, o->a, o->b, o->c };
    uint32_t *mask[HPU_TPC_CL_T + 1] = {
        [HPU_TPC_CL_V] = &L->vmask, [HPU_TPC_CL_S] = &L->smask,
        [HPU_TPC_CL_I] = &L->imask, [HPU_TPC_CL_Q] = &L->qmask,
    };
    unsigned int i;

    for (i = 0; d && i < 4; i++) {
        unsigned int k = d->opnd[i];
        int f = hpum_tpc_opnd_field(k), c = hpum_tpc_opnd_class(k);

        if (c != HPU_TPC_CL_NONE && mask[c]) {
            *mask[c] |= 1u << field[f];
        }
        if ((k == HPU_TPC_OPND_XB || k == HPU_TPC_OPND_SXB) &&
            o->form != HPU_TPC_FORM_IMM) {
            *mask[o->form == HPU_TPC_FORM_V ? HPU_TPC_CL_V : HPU_TPC_CL_S] |=
                1u << o->b;
        }
        if (k == HPU_TPC_OPND_MEM && o->form == HPU_TPC_FORM_S) {
            L->smask |= 1u << o->a;
        }
    }
    if (d && o->glane) {
        L->qmask |= 1u << o->greg;
    }
}

/*
 * Whether the vector slot's guard is a predicate the scalar slot writes
 * (the guard is read before the bundle writes anything).
 */
static bool hpum_tpc_guard_written(const HpuTpcBundle *b)
{
    const HpuTpcOp *os = &b->s[HPU_TPC_SLOT_SCALAR];
    const HpuTpcOp *ov = &b->s[HPU_TPC_SLOT_VECTOR];

    return ov->op && os->op && os->dst_class == HPU_TPC_CL_P &&
           os->d == ov->greg;
}

/* Decode bundle @n of the code at @p (64 bytes); fills L->code[n]. */
static void hpum_tpc_decode_bundle(HpuTpcLaunch *L, uint32_t n,
                                   const uint8_t *p)
{
    HpuTpcBundle *b = &L->code[n];
    uint32_t written[8] = { 0 };
    unsigned int i, r = 0;

    memset(b, 0, sizeof(*b));
    for (i = 0; i < HPU_TPC_SLOTS && !r; i++) {
        r = hpum_tpc_decode_slot(L, i, hpum_le64(p + 16 * i),
                                 hpum_le64(p + 16 * i + 8), &b->s[i]);
    }
    for (i = 0; i < HPU_TPC_SLOTS && !r; i++) {
        const HpuTpcOp *o = &b->s[i];
        uint32_t bit = 1u << o->d;

        if (!o->op || !o->dst_class) {
            continue;
        }
        if (written[o->dst_class] & bit) {
            r = HPU_TPC_ILL_CONFLICT;
        }
        written[o->dst_class] |= bit;
    }
    b->ill = (uint8_t)r;
    /*
     * tpc.md "Notes for implementations": a vector load may write its
     * register before the other slots run when none of them reads it; all
     * slots may write at once, in the order load, store, scalar, vector,
     * when none reads what one before it writes (an assert stops the
     * bundle before any write: those bundles buffer).
     */
    if (!r) {
        bool load_read = hpum_tpc_read_later(b, HPU_TPC_SLOT_LOAD);

        b->ld_direct = b->s[HPU_TPC_SLOT_LOAD].dst_class == HPU_TPC_CL_V &&
                       !load_read;
        b->direct = b->s[HPU_TPC_SLOT_SCALAR].op != HPU_TPC_OP_ASSERT &&
                    !load_read &&
                    !hpum_tpc_read_later(b, HPU_TPC_SLOT_SCALAR) &&
                    !hpum_tpc_guard_written(b);
    }
    for (i = 0; i < HPU_TPC_SLOTS; i++) {
        b->s[i].slot = (uint8_t)i;
        b->direct &= !b->s[i].glane;
    }
    for (i = 0; i < HPU_TPC_SLOTS && !r; i++) {
        hpum_tpc_name_regs(L, &b->s[i]);
    }
}

/* ---- Reading and checking the launch (tpc.md "Launch descriptor") ----- */

/* Read @len bytes at @va of the job's ASID; a failure status or OK. */
static int hpum_tpc_read(const HpuPacket *k, uint64_t va, void *buf,
                         uint64_t len)
{
    return hpum_mem_xfer(k->c, k->e, k->j->epoch, k->j->asid, va, buf, len,
                         false, k->f);
}

static const char *const hpum_tpc_rule_names[] = { HPU_TPC_LAUNCH_RULE_NAMES };
static const char *const hpum_tpc_ill_names[] = { HPU_TPC_ILLEGAL_NAMES };

static int hpum_tpc_refuse(const HpuPacket *k, uint64_t desc, uint32_t rule,
                           unsigned int tensor, const char *what)
{
    char why[96];

    snprintf(why, sizeof(why), "%s breaks %s", what,
             rule < HPU_ARRAY_LEN(hpum_tpc_rule_names) &&
             hpum_tpc_rule_names[rule] ? hpum_tpc_rule_names[rule] : "?");
    return hpum_bad_launch(k, desc, HPU_TPC_BL_INFO(rule, tensor), why);
}

/*
 * The model ran out of host memory for @what: the launch broke no rule,
 * the engine could not run it (BUS_ERROR, no event, as the MME's buffers;
 * compute.md).
 */
static int hpum_tpc_no_memory(const HpuPacket *k, const char *what)
{
    HPU_LOG(k->c, "TPC.%u: out of host memory for %s", k->s, what);
    return HPU_CQ_BUS_ERROR;
}

/*
 * Read and check everything the launch names; fill @L (its code
 * decoded).  Returns HPU_CQ_OK or the packet's status.
 */
static int hpum_tpc_load(const HpuPacket *k, uint64_t desc, HpuTpcLaunch *L,
                         uint8_t **binp)
{
    uint8_t d[HPU_TPC_LAUNCH_FIXED_SIZE], td[HPU_TPC_TENSOR_DESC_SIZE];
    uint32_t rule, size, i, off, dd;
    uint64_t bin;
    uint8_t *b;
    int r;

    r = hpum_tpc_read(k, desc, d, sizeof(d));
    if (r) {
        return r;
    }
    rule = hpu_tpc_check_launch_fixed(d);
    if (rule) {
        return hpum_tpc_refuse(k, desc, rule, 0, "launch descriptor");
    }
    bin = hpum_le64(d + HPU_TPC_LAUNCH_OFF(binary));
    size = hpum_le32(d + HPU_TPC_LAUNCH_OFF(binary_size));
    if (size < HPU_TPC_BIN_HEADER_SIZE || size > HPU_TPC_MAX_BINARY) {
        return hpum_tpc_refuse(k, desc, HPU_TPC_BL_BIN_SIZE, 0, "binary_size");
    }
    b = malloc(size);
    if (!b) {
        return hpum_tpc_no_memory(k, "the binary");
    }
    *binp = b;
    r = hpum_tpc_read(k, bin, b, size);
    if (r) {
        return r;
    }
    rule = hpu_tpc_check_binary(b, size);
    if (rule) {
        return hpum_tpc_refuse(k, desc, rule, 0, "kernel binary");
    }
    rule = hpu_tpc_check_launch_args(d, b);
    if (rule) {
        return hpum_tpc_refuse(k, desc, rule, 0, "launch arguments");
    }
    L->nt = d[HPU_TPC_LAUNCH_OFF(num_tensors)];
    L->ns = d[HPU_TPC_LAUNCH_OFF(num_scalars)];
    for (i = 0; i < HPU_TPC_MAX_SCALARS; i++) {
        L->scalars[i] = hpum_le32(d + HPU_TPC_LAUNCH_OFF(scalars) + 4 * i);
    }
    L->seed = hpum_le64(d + HPU_TPC_LAUNCH_OFF(seed));
    /* at most 2^48: the product hpu_tpc_check_launch_args() bounded */
    L->members = hpu_tpc_launch_members(d);
    for (dd = 0; dd < HPU_TPC_DIMS; dd++) {
        L->isize[dd] = hpum_le32(d + HPU_TPC_LAUNCH_OFF(index_size) + 4 * dd);
    }
    for (i = 0; i < L->nt; i++) {
        HpuTpcTensor *t = &L->t[i];
        uint64_t at = desc + HPU_TPC_LAUNCH_FIXED_SIZE +
                      (uint64_t)HPU_TPC_TENSOR_DESC_SIZE * i;

        r = hpum_tpc_read(k, at, td, sizeof(td));
        if (r) {
            return r;
        }
        rule = hpu_tpc_check_tensor(td, b[HPU_TPC_BIN_OFF(tensor_dtype) + i]);
        if (rule) {
            return hpum_tpc_refuse(k, desc, rule, i, "tensor descriptor");
        }
        t->base = hpum_le64(td + HPU_TPC_TENSOR_OFF(base));
        t->dt = td[HPU_TPC_TENSOR_OFF(dtype)];
        t->nd = td[HPU_TPC_TENSOR_OFF(ndims)];
        t->es = hpu_tpc_dtype_size(t->dt);
        t->pad = hpum_le32(td + HPU_TPC_TENSOR_OFF(pad));
        for (dd = 0; dd < HPU_TPC_DIMS; dd++) {
            uint32_t s = hpum_le32(td + HPU_TPC_TENSOR_OFF(size) + 4 * dd);

            t->size[dd] = dd < t->nd ? s : 1;
            t->stride[dd] = hpum_le32(td + HPU_TPC_TENSOR_OFF(stride) + 4 * dd);
        }
    }
    L->nb = hpum_le32(b + HPU_TPC_BIN_OFF(num_bundles));
    L->entry = hpum_le32(b + HPU_TPC_BIN_OFF(entry));
    L->slm_size = hpum_le32(b + HPU_TPC_BIN_OFF(slm_size));
    L->vlm_size = hpum_le32(b + HPU_TPC_BIN_OFF(vlm_size));
    off = hpum_le32(b + HPU_TPC_BIN_OFF(code_offset));
    /* one more: running past the last bundle reaches it (PC_RANGE) */
    L->code = calloc(L->nb + 1, sizeof(HpuTpcBundle));
    if (!L->code) {
        return hpum_tpc_no_memory(k, "the decoded code");
    }
    for (i = 0; i < L->nb; i++) {
        hpum_tpc_decode_bundle(L, i, b + off + (size_t)HPU_TPC_BUNDLE_SIZE * i);
    }
    L->code[L->nb].ill = HPU_TPC_ILL_PC_RANGE;
    if (!hpum_tpc_prepare(L)) {
        return hpum_tpc_no_memory(k, "the decoded code");
    }
    return HPU_CQ_OK;
}

/* ---- Failures ----------------------------------------------------------- */

/*
 * Under the lock: record the launch's first failure (any thread): @st is
 * a status; for ILLEGAL and ASSERT @addr and @info go to the event.
 */
void hpum_tpc_fail_locked(HpuTpcLaunch *L, int st, uint16_t ev,
                          uint64_t addr, uint32_t info, const HpuFault *f)
{
    HpuCore *c = L->k->c;

    if (!L->status) {
        L->status = st;
        L->ev_id = ev;
        L->ev_addr = addr;
        L->ev_info = info;
        if (f) {
            L->fault = *f;
        }
        if (ev == HPU_EVENT_TPC_ILLEGAL) {
            unsigned int why = info >> 8;

            HPU_LOG(c, "TPC.%u: core %u: illegal bundle at code offset 0x%llx "
                    "(ASID %u): %s", L->k->s, info & 0xff,
                    (unsigned long long)addr, L->k->j->asid,
                    why < HPU_ARRAY_LEN(hpum_tpc_ill_names) &&
                    hpum_tpc_ill_names[why] ? hpum_tpc_ill_names[why] : "?");
        } else if (ev == HPU_EVENT_TPC_ASSERT) {
            HPU_LOG(c, "TPC.%u: assert failed at code offset 0x%llx "
                    "(ASID %u), value 0x%x", L->k->s,
                    (unsigned long long)addr, L->k->j->asid, info);
        }
    }
    __atomic_store_n(&L->stop, 1, __ATOMIC_RELEASE);
}

/* hpum_tpc_fail_locked(), taking the lock. */
void hpum_tpc_fail(HpuTpcLaunch *L, int st, uint16_t ev, uint64_t addr,
                   uint32_t info, const HpuFault *f)
{
    HpuCore *c = L->k->c;

    hpum_lock(c);
    hpum_tpc_fail_locked(L, st, ev, addr, info, f);
    hpum_unlock(c);
}

/* ---- Cores -------------------------------------------------------------- */

/* Core @i of the launch runs its share of the index space. */
static void hpum_tpc_core_main(void *arg, unsigned int i)
{
    HpuTpcLaunch *L = arg;
    uint64_t n = L->members, first, end;
    HpuTpcCore *k;

    /* members floor(i * N / C) <= lin < floor((i + 1) * N / C), N < 2^48 */
    first = n * i / L->cores;
    end = n * (i + 1) / L->cores;
    if (first == end) {
        return;
    }
    k = malloc(sizeof(*k));
    if (!k) {
        HpuFault f = { .status = HPU_CQ_BUS_ERROR };

        hpum_tpc_fail(L, HPU_CQ_BUS_ERROR, 0, 0, 0, &f);
        return;
    }
    memset(k->vp[0], 0xff, sizeof(k->vp[0]));  /* vp0: never written */
    k->inflight = false;
    k->L = L;
    k->index = i;
    hpum_tpc_run_members(k, first, end);
    free(k);
}

int hpum_tpc_launch(const HpuPacket *k)
{
    HpuCore *c = k->c;
    uint64_t desc = hpum_le64(k->p + 8);
    HpuTpcLaunch *L;
    uint8_t *bin = NULL;
    unsigned int i;
    int r;

    if (hpum_le32(k->p + 4)) {
        return hpum_pkt_bad(k, "TPC_LAUNCH reserved field not zero");
    }
    if (desc & (HPU_LAUNCH_DESC_ALIGN - 1)) {
        return hpum_tpc_refuse(k, desc, HPU_TPC_BL_DESC_MAGIC, 0,
                               "launch descriptor address (not 64-byte "
                               "aligned)");
    }
    L = calloc(1, sizeof(*L));
    if (!L) {
        return hpum_tpc_no_memory(k, "the launch");
    }
    L->k = k;
    r = hpum_tpc_load(k, desc, L, &bin);
    free(bin);
    if (r == HPU_CQ_OK) {
        L->avx2 = c->tpc_host_simd && hpum_tpc_host_avx2();
        L->cores = c->tpc_cores ? c->tpc_cores : 1;
        if (L->cores > HPU_H1_TPC_ENGINES) {
            L->cores = HPU_H1_TPC_ENGINES;
        }
        if (c->ops->run_parallel && L->cores > 1) {
            c->ops->run_parallel(c->opaque, hpum_tpc_core_main, L, L->cores);
        } else {
            for (i = 0; i < L->cores; i++) {
                hpum_tpc_core_main(L, i);
            }
        }
        r = L->status;
        if (r == HPU_CQ_MMU_FAULT || r == HPU_CQ_BUS_ERROR || r == HPU_CQ_ECC) {
            *k->f = L->fault;
        } else if (r > 0) {
            k->ev->id = L->ev_id;
            k->ev->addr = L->ev_addr;
            k->ev->info = L->ev_info;
        }
    }
    free(L->code);
    free(L->uops);
    free(L->first);
    free(L->pro);
    free(L->pro_aff);
    free(L);
    return r;
}

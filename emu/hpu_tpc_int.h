/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: what hpu_tpc.c (launch, decoder, cores) and
 * hpu_tpc_exec.c (the interpreter) share.  Not for other files.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_TPC_INT_H
#define HPU_TPC_INT_H

#include "hpu_internal.h"
#include "hpu_tpc.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the TPC interpreter keeps lanes in host order: little-endian hosts only"
#endif

/* Bundles a core runs between two checks of its job (and access renewals). */
#define HPU_TPC_CHECK_BUNDLES   1024
/* Entries of a core's translation cache. */
#define HPU_TPC_XC_ENTRIES      8
/* Bytes a translation asks for beyond the access (runs over huge pages). */
#define HPU_TPC_XC_WANT         (2ULL << 20)

/* Register classes of operands (HpuTpcOp.dst_class). */
enum {
    HPU_TPC_CL_NONE, HPU_TPC_CL_V, HPU_TPC_CL_S, HPU_TPC_CL_P, HPU_TPC_CL_Q,
    HPU_TPC_CL_I, HPU_TPC_CL_T
};

/*
 * What the interpreter runs (HpuTpcOp.xop of a HpuTpcUop, chosen by
 * hpum_tpc_prepare()): for a slot of a bundle that writes in place, a
 * short path of its own or HPU_TPC_X_SLOT, the slot's general code; the
 * end of such a bundle; or a whole other bundle.
 */
enum {
    HPU_TPC_X_END,              /* a direct bundle of four NOPs */
    HPU_TPC_X_BUNDLE,           /* hpum_tpc_bundle() */
    HPU_TPC_X_SLOT,
    HPU_TPC_X_LD_T,             /* ld.t, no lane guard, tensor of stride 1 */
    HPU_TPC_X_ST_T,             /* st.t, the same */
    HPU_TPC_X_TSIZE,
    HPU_TPC_X_LDARG,
    HPU_TPC_X_MOV,
    HPU_TPC_X_SALU,             /* add ... shr */
    HPU_TPC_X_CMP,
    HPU_TPC_X_LOOP,
    HPU_TPC_X_JMP,
    HPU_TPC_X_HALT,
    HPU_TPC_X_IID,
    HPU_TPC_X_IDX,              /* imov, iset, iadd, imul */
    HPU_TPC_X_IADD,             /* iadd in place: iD = iD + B in one component */
    HPU_TPC_X_VF32,             /* f32 elementwise arithmetic, no lane guard */
    HPU_TPC_X_PSET,             /* spD = imm: the prologue's predicates */
    HPU_TPC_X_IAFF,             /* iD = HpuTpcLaunch.pro_aff[imm] */
};

/*
 * An index register as a function of the member's coordinate m: component
 * c is m[src[c]] * a[c] + b[c] (32-bit wrapping), or b[c] if src[c] is
 * HPU_TPC_DIMS.
 */
typedef struct HpuTpcAff {
    uint8_t src[HPU_TPC_DIMS];
    uint32_t a[HPU_TPC_DIMS], b[HPU_TPC_DIMS];
} HpuTpcAff;

/* One decoded slot. */
typedef struct HpuTpcOp {
    uint8_t op;                 /* opcode in its slot; 0: NOP */
    uint8_t slot;               /* HPU_TPC_SLOT_* */
    uint8_t xop;                /* HPU_TPC_X_* */
    uint8_t dt, dt2;            /* data type, conversion's destination type */
    uint8_t form, mod, sat, part;
    uint8_t greg, gneg, glane;  /* guard */
    uint8_t d, a, b, c;         /* register fields */
    uint8_t dst_class;          /* HPU_TPC_CL_* written through D, 0 none */
    uint16_t lanes;             /* lanes of dt */
    uint32_t imm;
    const struct hpu_tpc_insn_desc *desc;   /* its row of HPU_TPC_INSNS */
} HpuTpcOp;

typedef struct HpuTpcBundle {
    HpuTpcOp s[HPU_TPC_SLOTS];
    uint8_t ill;                /* HPU_TPC_ILL_* when a member reaches it */
    /* a vector load may write its register at once: no other slot reads it */
    bool ld_direct;
    /*
     * every slot may write at once, in the order load, store, scalar,
     * vector, and read its guard then: no lane guard, no guard the scalar
     * slot writes
     */
    bool direct;
} HpuTpcBundle;

/*
 * One step of the code as the interpreter runs it (tpc.md "Notes for
 * implementations"): the slots of a direct bundle, NOPs left out, each a
 * step (HPU_TPC_X_END if all are NOPs); any other bundle one step,
 * HPU_TPC_X_BUNDLE.  Bundle n's steps begin at HpuTpcLaunch.first[n].
 */
typedef struct HpuTpcUop {
    HpuTpcOp o;
    bool last;                  /* the bundle's last step */
    uint32_t pc;                /* the bundle */
    uint32_t to;                /* loop, jmp: the target's first step */
} HpuTpcUop;

typedef struct HpuTpcTensor {
    uint64_t base;
    uint32_t dt, es, nd, pad;
    uint32_t size[HPU_TPC_DIMS];        /* 1 at and above nd */
    uint64_t stride[HPU_TPC_DIMS];      /* elements */
} HpuTpcTensor;

/* A launch, shared by its cores. */
typedef struct HpuTpcLaunch {
    const HpuPacket *k;
    HpuTpcBundle *code;
    uint32_t nb, entry, slm_size, vlm_size;
    uint32_t nt, ns;
    uint32_t scalars[HPU_TPC_MAX_SCALARS];
    HpuTpcTensor t[HPU_TPC_MAX_TENSORS];
    uint32_t isize[HPU_TPC_DIMS];
    uint64_t members;
    uint64_t seed;
    /* registers the code names: vector, scalar, index, lane predicates */
    uint32_t vmask, smask, imask, qmask;
    HpuTpcUop *uops;            /* the code's steps (hpum_tpc_prepare()) */
    uint32_t *first;            /* per bundle, and the sentinel past them */
    /*
     * The member's prologue (hpum_tpc_prepare()): the register writes that
     * stand for the first pro_bundles bundles from the entry, computed
     * once per launch; then uops[pro_next] on.  pro NULL: none.
     */
    HpuTpcUop *pro;
    HpuTpcAff *pro_aff;         /* the index registers it writes */
    uint32_t npro, pro_bundles, pro_next;
    bool avx2;                  /* f32 arithmetic with the host's AVX2, FMA */
    unsigned int cores;
    int stop;                   /* atomic: a core failed or the job ended */
    /* the first failure, under the core lock */
    int status;
    uint16_t ev_id;
    uint64_t ev_addr;
    uint32_t ev_info;
    HpuFault fault;
} HpuTpcLaunch;

typedef union HpuTpcVec {
    uint8_t u8[256];
    int8_t i8[256];
    uint16_t u16[128];
    int16_t i16[128];
    uint32_t u32[64];
    int32_t i32[64];
    float f[64];
    uint64_t q[32];
} HpuTpcVec;

/* HBM bytes a tensor's accesses find in place (HpuTpcCore.win). */
typedef struct HpuTpcWin {
    uint64_t va, len;
    uint64_t addr;
    uint8_t *p;
} HpuTpcWin;

/* A core's state while it runs members of one launch. */
typedef struct HpuTpcCore {
    HpuTpcVec v[HPU_TPC_VREGS];
    HpuTpcVec tv, tb, tl;       /* vector result, B operand, load result */
    float fa[128], fb[128], fc[128], fd[128];   /* bf16 widened */
    uint32_t rw[HPU_TPC_MAX_LANES];             /* random words of a draw */
    uint8_t vlm[HPU_TPC_VLM_SIZE];
    uint8_t slm[HPU_TPC_SLM_SIZE];
    uint32_t s[HPU_TPC_SREGS];
    uint64_t vp[HPU_TPC_QREGS][4];
    uint8_t sp[HPU_TPC_PREGS];
    int32_t ir[HPU_TPC_IREGS][HPU_TPC_DIMS];
    uint32_t m[HPU_TPC_DIMS];   /* the member's coordinate */
    uint64_t lin;
    uint32_t draw;
    HpuTpcLaunch *L;
    unsigned int index;
    /*
     * The translations the core keeps (xc, tr, win): emptied when its
     * work begins and at its first slice renewal after an MMU_INV of its
     * ASID (hpum_tpc_slice_next()).
     */
    HpuMemRun xc[HPU_TPC_XC_ENTRIES];
    unsigned int xc_next;       /* the entry the next translation replaces */
    unsigned int xc_last;       /* the entry of the last hit */
    bool xc_valid[HPU_TPC_XC_ENTRIES];
    /* per tensor, reads and writes: the run of its last access (len 0: none) */
    HpuMemRun tr[HPU_TPC_MAX_TENSORS][2];
    /*
     * per tensor, reads and writes: HBM bytes its accesses find in place,
     * [va, va + len) at host address p and HBM offset addr (one chunk of
     * a run; len 0: none).  Valid while the core's slice holds hbm.users
     * up.
     */
    HpuTpcWin win[HPU_TPC_MAX_TENSORS][2];
    uint64_t gmask[HPU_TPC_SLOTS][4];   /* lane guards of the bundle */
    /*
     * A slice's access is in flight, its translations (xc, tr, win) held
     * for MMU_INV since generation inv_gen (hpum_xlat_hold_locked()).
     */
    bool inflight;
    uint32_t inv_gen;
    uint32_t alert;             /* HpuCore.job_alert when the job was checked */
} HpuTpcCore;

/* hpu_tpc.c: record the launch's first failure and stop its cores. */
void hpum_tpc_fail(HpuTpcLaunch *L, int st, uint16_t ev, uint64_t addr,
                   uint32_t info, const HpuFault *f);
/* hpu_tpc.c: hpum_tpc_fail() with the core lock held. */
void hpum_tpc_fail_locked(HpuTpcLaunch *L, int st, uint16_t ev,
                          uint64_t addr, uint32_t info, const HpuFault *f);
/* hpu_tpc_exec.c: whether the host has AVX2 and FMA. */
bool hpum_tpc_host_avx2(void);
/*
 * hpu_tpc_exec.c: the steps of the decoded code (L->uops, L->first);
 * false: no host memory for them.
 */
bool hpum_tpc_prepare(HpuTpcLaunch *L);
/* hpu_tpc_exec.c: run members [@first, @end) of the launch on core @k. */
void hpum_tpc_run_members(HpuTpcCore *k, uint64_t first, uint64_t end);

#endif /* HPU_TPC_INT_H */

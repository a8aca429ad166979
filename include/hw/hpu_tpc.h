/* SPDX-License-Identifier: MIT */
/*
 * HPU Tensor Processor Core (TPC): instruction encodings, the kernel binary
 * header, the launch and tensor descriptors, their validation and refusal
 * codes, and the random number generator.  Shared by the assembler
 * (tools/hpu-as), the device model's interpreter (emu/), the driver, libhpu
 * and the tests.  The specification is Documentation/hw/tpc.md; all fields
 * are little-endian.  Only fixed-size integer types; no C++, no QEMU, no
 * libc beyond <stddef.h>/<stdint.h>: the kernel includes this header too.
 *
 * One table, HPU_TPC_INSNS(X), lists every instruction (slot, opcode,
 * mnemonic, data types, flags, operands): the assembler, the disassembler
 * and the interpreter's decoder are all generated from it.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_TPC_H
#define HPU_TPC_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

/* ---- Architectural limits ------------------------------------------- */

#define HPU_TPC_VREGS			32	/* V0-V31, 2048 bits each */
#define HPU_TPC_SREGS			32	/* S0-S31, 32 bits */
#define HPU_TPC_PREGS			8	/* SP0-SP7 scalar predicates, SP0 = true */
#define HPU_TPC_QREGS			8	/* VP0-VP7 lane predicates, VP0 = all true */
#define HPU_TPC_IREGS			8	/* I0-I7, 5 x int32 each */
#define HPU_TPC_DIMS			5
#define HPU_TPC_VBYTES			256	/* bytes of a vector register */
#define HPU_TPC_MAX_LANES		256
#define HPU_TPC_SLM_SIZE		4096	/* scalar local memory, bytes */
#define HPU_TPC_VLM_SIZE		65536	/* vector local memory, bytes */
#define HPU_TPC_MAX_TENSORS		16
#define HPU_TPC_MAX_SCALARS		32
#define HPU_TPC_MAX_BUNDLES		16384
#define HPU_TPC_MAX_BINARY		0x100000u	/* 1 MiB */
#define HPU_TPC_MAX_DIM_SIZE		0x7fffffffu
#define HPU_TPC_MAX_MEMBERS		(1ull << 48)
#define HPU_TPC_NAME_SIZE		32

/* ---- Data types (4-bit codes; 0 = none) ------------------------------- */

/* X(NAME, code, suffix, element bytes, signed, float) */
#define HPU_TPC_DTYPES(X)			\
	X(F32, 1, "f32", 4, 1, 1)		\
	X(BF16, 2, "bf16", 2, 1, 1)		\
	X(I32, 3, "i32", 4, 1, 0)		\
	X(U32, 4, "u32", 4, 0, 0)		\
	X(I16, 5, "i16", 2, 1, 0)		\
	X(U16, 6, "u16", 2, 0, 0)		\
	X(I8, 7, "i8", 1, 1, 0)			\
	X(U8, 8, "u8", 1, 0, 0)

#define HPU_TPC_DT_ENUM_(n, c, s, b, sg, f)	HPU_TPC_DT_##n = (c),
enum hpu_tpc_dtype {
	HPU_TPC_DT_NONE = 0,
	HPU_TPC_DTYPES(HPU_TPC_DT_ENUM_)
	HPU_TPC_DT_COUNT
};
#undef HPU_TPC_DT_ENUM_

/* Type sets: bit (1 << code) for each allowed data type. */
#define HPU_TPC_TS(n)		(1u << HPU_TPC_DT_##n)
#define HPU_TPC_TS_NONE		0u
#define HPU_TPC_TS_FP		(HPU_TPC_TS(F32) | HPU_TPC_TS(BF16))
#define HPU_TPC_TS_INT		(HPU_TPC_TS(I32) | HPU_TPC_TS(U32) | HPU_TPC_TS(I16) | \
				 HPU_TPC_TS(U16) | HPU_TPC_TS(I8) | HPU_TPC_TS(U8))
#define HPU_TPC_TS_ALL		(HPU_TPC_TS_FP | HPU_TPC_TS_INT)
#define HPU_TPC_TS_SGN		(HPU_TPC_TS_FP | HPU_TPC_TS(I32) | HPU_TPC_TS(I16) | \
				 HPU_TPC_TS(I8))
#define HPU_TPC_TS_S		(HPU_TPC_TS(F32) | HPU_TPC_TS(I32) | HPU_TPC_TS(U32))
#define HPU_TPC_TS_SI		(HPU_TPC_TS(I32) | HPU_TPC_TS(U32))
#define HPU_TPC_TS_F32		HPU_TPC_TS(F32)

static inline unsigned int hpu_tpc_dtype_valid(unsigned int dt)
{
	return dt >= HPU_TPC_DT_F32 && dt <= HPU_TPC_DT_U8;
}

/* Element size in bytes (0 for an invalid code). */
static inline unsigned int hpu_tpc_dtype_size(unsigned int dt)
{
	static const unsigned char sz[16] = { 0, 4, 2, 4, 4, 2, 2, 1, 1 };

	return sz[dt & 15];
}

/* Lanes of a vector register holding that type: 64, 128 or 256. */
static inline unsigned int hpu_tpc_lanes(unsigned int dt)
{
	unsigned int s = hpu_tpc_dtype_size(dt);

	return s ? HPU_TPC_VBYTES / s : 0;
}

/* ---- Bundle and slot encoding --------------------------------------------
 *
 * A bundle is 64 bytes: four 16-byte slots, load (bytes 0-15), scalar
 * (16-31), vector (32-47), store (48-63).  A slot is two little-endian
 * 64-bit words, lo (bytes 0-7) and hi (bytes 8-15):
 *
 *   lo [7:0]   opcode (0 = NOP in every slot; a NOP slot is all zero)
 *   lo [11:8]  type: the operation's data type (cvt: the source type)
 *   lo [15:12] type2: cvt's destination type, else 0
 *   lo [18:16] guard predicate register
 *   lo [19]    guard negated
 *   lo [20]    guard is a lane predicate VPn (else a scalar predicate SPn)
 *   lo [22:21] form of the B operand: 0 vector register, 1 scalar
 *              register, 2 immediate (hi [31:0]); 3 reserved
 *   lo [26:23] mod: comparison condition, rounding mode, assert negation
 *   lo [27]    sat: saturate
 *   lo [29:28] part: cvt's lane part
 *   lo [31:30] reserved, 0
 *   lo [39:32] field D (destination register)
 *   lo [47:40] field A
 *   lo [55:48] field B
 *   lo [63:56] field C
 *   hi [31:0]  imm: immediate
 *   hi [63:32] reserved, 0
 *
 * Every field an instruction does not use must be zero.
 */
#define HPU_TPC_BUNDLE_SIZE		64
#define HPU_TPC_SLOT_SIZE		16
#define HPU_TPC_SLOTS			4

enum hpu_tpc_slot {
	HPU_TPC_SLOT_LOAD = 0,
	HPU_TPC_SLOT_SCALAR = 1,
	HPU_TPC_SLOT_VECTOR = 2,
	HPU_TPC_SLOT_STORE = 3,
};

#define HPU_TPC_F_OPCODE_SHIFT		0
#define HPU_TPC_F_OPCODE_MASK		0xffull
#define HPU_TPC_F_TYPE_SHIFT		8
#define HPU_TPC_F_TYPE_MASK		0xfull
#define HPU_TPC_F_TYPE2_SHIFT		12
#define HPU_TPC_F_TYPE2_MASK		0xfull
#define HPU_TPC_F_GREG_SHIFT		16
#define HPU_TPC_F_GREG_MASK		0x7ull
#define HPU_TPC_F_GNEG_SHIFT		19
#define HPU_TPC_F_GNEG_MASK		0x1ull
#define HPU_TPC_F_GLANE_SHIFT		20
#define HPU_TPC_F_GLANE_MASK		0x1ull
#define HPU_TPC_F_FORM_SHIFT		21
#define HPU_TPC_F_FORM_MASK		0x3ull
#define HPU_TPC_F_MOD_SHIFT		23
#define HPU_TPC_F_MOD_MASK		0xfull
#define HPU_TPC_F_SAT_SHIFT		27
#define HPU_TPC_F_SAT_MASK		0x1ull
#define HPU_TPC_F_PART_SHIFT		28
#define HPU_TPC_F_PART_MASK		0x3ull
#define HPU_TPC_F_RSVD_SHIFT		30
#define HPU_TPC_F_RSVD_MASK		0x3ull
#define HPU_TPC_F_D_SHIFT		32
#define HPU_TPC_F_D_MASK		0xffull
#define HPU_TPC_F_A_SHIFT		40
#define HPU_TPC_F_A_MASK		0xffull
#define HPU_TPC_F_B_SHIFT		48
#define HPU_TPC_F_B_MASK		0xffull
#define HPU_TPC_F_C_SHIFT		56
#define HPU_TPC_F_C_MASK		0xffull
/* in hi: */
#define HPU_TPC_F_IMM_SHIFT		0
#define HPU_TPC_F_IMM_MASK		0xffffffffull
#define HPU_TPC_F_HIRSVD_SHIFT		32
#define HPU_TPC_F_HIRSVD_MASK		0xffffffffull

#define HPU_TPC_GET(word, f) \
	(((word) >> HPU_TPC_F_##f##_SHIFT) & HPU_TPC_F_##f##_MASK)
#define HPU_TPC_PUT(f, v) \
	(((uint64_t)(v) & HPU_TPC_F_##f##_MASK) << HPU_TPC_F_##f##_SHIFT)

/* B operand forms */
#define HPU_TPC_FORM_V			0
#define HPU_TPC_FORM_S			1
#define HPU_TPC_FORM_IMM		2

/* mod of cmp/vcmp: conditions */
#define HPU_TPC_CONDS(X)		\
	X(EQ, 0, "eq")			\
	X(NE, 1, "ne")			\
	X(LT, 2, "lt")			\
	X(LE, 3, "le")			\
	X(GT, 4, "gt")			\
	X(GE, 5, "ge")
#define HPU_TPC_COND_ENUM_(n, v, s)	HPU_TPC_COND_##n = (v),
enum hpu_tpc_cond { HPU_TPC_CONDS(HPU_TPC_COND_ENUM_) HPU_TPC_COND_COUNT };
#undef HPU_TPC_COND_ENUM_

/* mod of cvt/vcvt: rounding modes (RN is the default and is not written) */
#define HPU_TPC_RMODES(X)		\
	X(RN, 0, "rn")			\
	X(RZ, 1, "rz")			\
	X(RU, 2, "ru")			\
	X(RD, 3, "rd")			\
	X(SR, 4, "sr")
#define HPU_TPC_RM_ENUM_(n, v, s)	HPU_TPC_RM_##n = (v),
enum hpu_tpc_rmode { HPU_TPC_RMODES(HPU_TPC_RM_ENUM_) HPU_TPC_RM_COUNT };
#undef HPU_TPC_RM_ENUM_

/* ---- Operand kinds --------------------------------------------------------
 * Each names a register class or immediate and the field it lives in.
 */
#define HPU_TPC_OPNDS(X)						\
	X(NONE)								\
	X(VD)	/* vector register in D */				\
	X(VA)								\
	X(VB)	/* vector register in B, form 0 */			\
	X(VC)								\
	X(SD)	/* scalar register in D */				\
	X(SA)								\
	X(SC)								\
	X(PD)	/* scalar predicate in D (not SP0) */			\
	X(PA)								\
	X(PB)								\
	X(PC)								\
	X(PNA)	/* scalar predicate in A, "!" negation in mod bit 0 */	\
	X(QD)	/* lane predicate in D (not VP0) */			\
	X(QA)								\
	X(QB)								\
	X(QC)								\
	X(ID)	/* index register in D */				\
	X(IA)								\
	X(IB)								\
	X(TA)	/* tensor number in A */				\
	X(DIMC)	/* dimension 0-4 in C */				\
	X(XB)	/* vector register (form 0), scalar register (1) or immediate (2) */ \
	X(SXB)	/* scalar register (form 1) or immediate (2) */		\
	X(MEM)	/* [Sa + imm] (form 1) or [imm] (form 2, A = 0) */	\
	X(IMM)	/* a 32-bit immediate */				\
	X(LBL)	/* a bundle index in imm */				\
	X(PART)	/* cvt lane part in the part field */

#define HPU_TPC_OPND_ENUM_(n)	HPU_TPC_OPND_##n,
enum hpu_tpc_opnd { HPU_TPC_OPNDS(HPU_TPC_OPND_ENUM_) HPU_TPC_OPND_COUNT };
#undef HPU_TPC_OPND_ENUM_

/* ---- Instruction flags ---------------------------------------------------- */
#define HPU_TPC_IF_LANEG	0x0001u	/* a lane predicate may guard it */
#define HPU_TPC_IF_COND		0x0002u	/* mod is a condition (required) */
#define HPU_TPC_IF_RMODE	0x0004u	/* mod is a rounding mode */
#define HPU_TPC_IF_SAT		0x0008u	/* sat may be set (integer types only for vadd/vsub) */
#define HPU_TPC_IF_TYPE2	0x0010u	/* type2 is used (cvt) */
#define HPU_TPC_IF_BRANCH	0x0020u	/* may change the program counter */
#define HPU_TPC_IF_HALT		0x0040u	/* ends the member */
#define HPU_TPC_IF_RNG		0x0080u	/* consumes one draw of the RNG */
#define HPU_TPC_IF_LANEIMM	0x0100u	/* the SXB immediate is a lane number (< lanes) */
#define HPU_TPC_IF_RDD		0x0200u	/* reads its destination too (loop, vmac, vins) */
#define HPU_TPC_IF_BIT		0x0400u	/* IMM is 0 or 1 */
#define HPU_TPC_IF_ARG		0x0800u	/* IMM is a scalar-argument number */
#define HPU_TPC_IF_IDX		0x1000u	/* SXB immediate is an int32 index value */
#define HPU_TPC_IF_TENSOR	0x2000u	/* type must equal the tensor's data type */

/*
 * The instruction table: X(slot, opcode, NAME, "mnemonic", types, flags,
 * operand0, operand1, operand2, operand3).  Operands are listed in
 * assembly order; NONE pads.  Opcodes are per slot.
 */
#define HPU_TPC_INSNS(X)							\
	/* load slot */								\
	X(LOAD, 0x01, LD_T, "ld.t", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_TENSOR, VD, TA, IB, NONE) \
	X(LOAD, 0x02, LD_TS, "ld.ts", HPU_TPC_TS_ALL, HPU_TPC_IF_TENSOR, SD, TA, IB, NONE) \
	X(LOAD, 0x03, LD_L, "ld.l", HPU_TPC_TS_NONE, 0, SD, MEM, NONE, NONE)	\
	X(LOAD, 0x04, LD_LV, "ld.lv", HPU_TPC_TS_NONE, 0, VD, MEM, NONE, NONE) \
	X(LOAD, 0x05, LDARG, "ldarg", HPU_TPC_TS_NONE, HPU_TPC_IF_ARG, SD, IMM, NONE, NONE) \
	X(LOAD, 0x06, TSIZE, "tsize", HPU_TPC_TS_NONE, 0, SD, TA, DIMC, NONE) \
	/* scalar slot */							\
	X(SCALAR, 0x01, MOV, "mov", HPU_TPC_TS_NONE, 0, SD, SXB, NONE, NONE)	\
	X(SCALAR, 0x02, ADD, "add", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x03, SUB, "sub", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x04, MUL, "mul", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x05, DIV, "div", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x06, REM, "rem", HPU_TPC_TS_SI, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x07, MIN, "min", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x08, MAX, "max", HPU_TPC_TS_S, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x09, AND, "and", HPU_TPC_TS_NONE, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x0a, OR, "or", HPU_TPC_TS_NONE, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x0b, XOR, "xor", HPU_TPC_TS_NONE, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x0c, NOT, "not", HPU_TPC_TS_NONE, 0, SD, SA, NONE, NONE)	\
	X(SCALAR, 0x0d, SHL, "shl", HPU_TPC_TS_NONE, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x0e, SHR, "shr", HPU_TPC_TS_SI, 0, SD, SA, SXB, NONE)	\
	X(SCALAR, 0x0f, CMP, "cmp", HPU_TPC_TS_S, HPU_TPC_IF_COND, PD, SA, SXB, NONE) \
	X(SCALAR, 0x10, SEL, "sel", HPU_TPC_TS_NONE, 0, SD, PC, SA, SXB)	\
	X(SCALAR, 0x11, CVT, "cvt", HPU_TPC_TS_S, HPU_TPC_IF_TYPE2 | HPU_TPC_IF_RMODE | HPU_TPC_IF_SAT, SD, SA, NONE, NONE) \
	X(SCALAR, 0x14, PAND, "pand", HPU_TPC_TS_NONE, 0, PD, PA, PB, NONE)	\
	X(SCALAR, 0x15, POR, "por", HPU_TPC_TS_NONE, 0, PD, PA, PB, NONE)	\
	X(SCALAR, 0x16, PXOR, "pxor", HPU_TPC_TS_NONE, 0, PD, PA, PB, NONE)	\
	X(SCALAR, 0x17, PNOT, "pnot", HPU_TPC_TS_NONE, 0, PD, PA, NONE, NONE) \
	X(SCALAR, 0x18, PSET, "pset", HPU_TPC_TS_NONE, HPU_TPC_IF_BIT, PD, IMM, NONE, NONE) \
	X(SCALAR, 0x20, JMP, "jmp", HPU_TPC_TS_NONE, HPU_TPC_IF_BRANCH, LBL, NONE, NONE, NONE) \
	X(SCALAR, 0x21, LOOP, "loop", HPU_TPC_TS_NONE, HPU_TPC_IF_BRANCH | HPU_TPC_IF_RDD, SD, LBL, NONE, NONE) \
	X(SCALAR, 0x22, HALT, "halt", HPU_TPC_TS_NONE, HPU_TPC_IF_HALT, NONE, NONE, NONE, NONE) \
	X(SCALAR, 0x23, ASSERT, "assert", HPU_TPC_TS_NONE, 0, PNA, SXB, NONE, NONE) \
	X(SCALAR, 0x30, IID, "iid", HPU_TPC_TS_NONE, 0, ID, NONE, NONE, NONE) \
	X(SCALAR, 0x31, IMOV, "imov", HPU_TPC_TS_NONE, 0, ID, IA, NONE, NONE) \
	X(SCALAR, 0x32, ISET, "iset", HPU_TPC_TS_NONE, HPU_TPC_IF_IDX, ID, IA, DIMC, SXB) \
	X(SCALAR, 0x33, IADD, "iadd", HPU_TPC_TS_NONE, HPU_TPC_IF_IDX, ID, IA, DIMC, SXB) \
	X(SCALAR, 0x34, IMUL, "imul", HPU_TPC_TS_NONE, HPU_TPC_IF_IDX, ID, IA, DIMC, SXB) \
	X(SCALAR, 0x35, IGET, "iget", HPU_TPC_TS_NONE, 0, SD, IA, DIMC, NONE) \
	/* vector slot */							\
	X(VECTOR, 0x01, VMOV, "vmov", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, XB, NONE, NONE) \
	X(VECTOR, 0x02, VADD, "vadd", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_SAT, VD, VA, XB, NONE) \
	X(VECTOR, 0x03, VSUB, "vsub", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_SAT, VD, VA, XB, NONE) \
	X(VECTOR, 0x04, VMUL, "vmul", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x05, VDIV, "vdiv", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x06, VMIN, "vmin", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x07, VMAX, "vmax", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x08, VMAC, "vmac", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_RDD, VD, VA, XB, NONE) \
	X(VECTOR, 0x09, VFMA, "vfma", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, VA, VB, VC) \
	X(VECTOR, 0x0a, VABS, "vabs", HPU_TPC_TS_SGN, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x0b, VNEG, "vneg", HPU_TPC_TS_SGN, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x0c, VAND, "vand", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x0d, VOR, "vor", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x0e, VXOR, "vxor", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x0f, VNOT, "vnot", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x10, VSHL, "vshl", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x11, VSHR, "vshr", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG, VD, VA, XB, NONE) \
	X(VECTOR, 0x12, VCMP, "vcmp", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_COND, QD, VA, XB, NONE) \
	X(VECTOR, 0x13, VSEL, "vsel", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, QC, VA, XB) \
	X(VECTOR, 0x14, VCVT, "vcvt", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_TYPE2 | HPU_TPC_IF_RMODE | HPU_TPC_IF_SAT | HPU_TPC_IF_RDD, VD, VA, PART, NONE) \
	X(VECTOR, 0x18, VEXP, "vexp", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x19, VLOG, "vlog", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1a, VRCP, "vrcp", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1b, VRSQRT, "vrsqrt", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1c, VSQRT, "vsqrt", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1d, VTANH, "vtanh", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1e, VSIGMOID, "vsigmoid", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x1f, VERF, "verf", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG, VD, VA, NONE, NONE) \
	X(VECTOR, 0x20, VREDSUM, "vredsum", HPU_TPC_TS_ALL, 0, VD, VA, NONE, NONE) \
	X(VECTOR, 0x21, VREDMAX, "vredmax", HPU_TPC_TS_ALL, 0, VD, VA, NONE, NONE) \
	X(VECTOR, 0x22, VREDMIN, "vredmin", HPU_TPC_TS_ALL, 0, VD, VA, NONE, NONE) \
	X(VECTOR, 0x24, VBCAST, "vbcast", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_LANEIMM, VD, VA, SXB, NONE) \
	X(VECTOR, 0x25, VSHUF, "vshuf", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, VA, VB, NONE) \
	X(VECTOR, 0x26, VROT, "vrot", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_LANEIMM, VD, VA, SXB, NONE) \
	X(VECTOR, 0x27, VEXT, "vext", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEIMM, SD, VA, SXB, NONE) \
	X(VECTOR, 0x28, VINS, "vins", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEIMM | HPU_TPC_IF_RDD, VD, SA, SXB, NONE) \
	X(VECTOR, 0x29, VIOTA, "viota", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG, VD, NONE, NONE, NONE) \
	X(VECTOR, 0x2a, VRAND, "vrand", HPU_TPC_TS_INT, HPU_TPC_IF_LANEG | HPU_TPC_IF_RNG, VD, NONE, NONE, NONE) \
	X(VECTOR, 0x2b, VRANDU, "vrandu", HPU_TPC_TS_FP, HPU_TPC_IF_LANEG | HPU_TPC_IF_RNG, VD, NONE, NONE, NONE) \
	X(VECTOR, 0x30, VPAND, "vpand", HPU_TPC_TS_NONE, 0, QD, QA, QB, NONE) \
	X(VECTOR, 0x31, VPOR, "vpor", HPU_TPC_TS_NONE, 0, QD, QA, QB, NONE)	\
	X(VECTOR, 0x32, VPXOR, "vpxor", HPU_TPC_TS_NONE, 0, QD, QA, QB, NONE) \
	X(VECTOR, 0x33, VPNOT, "vpnot", HPU_TPC_TS_NONE, 0, QD, QA, NONE, NONE) \
	X(VECTOR, 0x34, VPFIRST, "vpfirst", HPU_TPC_TS_NONE, 0, SD, QA, NONE, NONE) \
	X(VECTOR, 0x35, VPCOUNT, "vpcount", HPU_TPC_TS_NONE, 0, SD, QA, NONE, NONE) \
	X(VECTOR, 0x36, VPSET, "vpset", HPU_TPC_TS_NONE, 0, QD, PA, NONE, NONE) \
	/* store slot */							\
	X(STORE, 0x01, ST_T, "st.t", HPU_TPC_TS_ALL, HPU_TPC_IF_LANEG | HPU_TPC_IF_TENSOR, TA, IB, VC, NONE) \
	X(STORE, 0x02, ST_TS, "st.ts", HPU_TPC_TS_ALL, HPU_TPC_IF_TENSOR, TA, IB, SC, NONE) \
	X(STORE, 0x03, ST_L, "st.l", HPU_TPC_TS_NONE, 0, MEM, SC, NONE, NONE) \
	X(STORE, 0x04, ST_LV, "st.lv", HPU_TPC_TS_NONE, 0, MEM, VC, NONE, NONE)

/* HPU_TPC_OP_<NAME> = opcode (within its slot) */
#define HPU_TPC_OP_ENUM_(sl, oc, n, m, t, f, o0, o1, o2, o3)	HPU_TPC_OP_##n = (oc),
enum hpu_tpc_opcode {
	HPU_TPC_OP_NOP = 0,
	HPU_TPC_INSNS(HPU_TPC_OP_ENUM_)
};
#undef HPU_TPC_OP_ENUM_

/* One row of the table, for table-driven tools:
 *   static const struct hpu_tpc_insn_desc t[] = { HPU_TPC_INSN_DESCS };
 */
struct hpu_tpc_insn_desc {
	uint8_t slot;
	uint8_t opcode;
	uint16_t flags;
	uint16_t types;
	uint8_t opnd[4];
	const char *mnemonic;
};

#define HPU_TPC_INSN_DESC_(sl, oc, n, m, t, f, o0, o1, o2, o3)		\
	{ HPU_TPC_SLOT_##sl, (oc), (uint16_t)(f), (uint16_t)(t),	\
	  { HPU_TPC_OPND_##o0, HPU_TPC_OPND_##o1, HPU_TPC_OPND_##o2,	\
	    HPU_TPC_OPND_##o3 }, (m) },
#define HPU_TPC_INSN_DESCS	HPU_TPC_INSNS(HPU_TPC_INSN_DESC_)

/* ---- TPC_ILLEGAL reasons (event 14 info [15:8]) --------------------------- */
#define HPU_TPC_ILLEGAL_REASONS(X)	\
	X(NONE, 0)			\
	X(OPCODE, 1)			\
	X(FIELD, 2)			\
	X(GUARD, 3)			\
	X(CONFLICT, 4)			\
	X(PC_RANGE, 5)			\
	X(TENSOR, 6)			\
	X(ARG, 7)			\
	X(LOCAL, 8)

#define HPU_TPC_ILL_ENUM_(name, value)	HPU_TPC_ILL_##name = (value),
enum hpu_tpc_illegal { HPU_TPC_ILLEGAL_REASONS(HPU_TPC_ILL_ENUM_) };
#undef HPU_TPC_ILL_ENUM_
#define HPU_TPC_ILL_NAME_(name, value)	[value] = #name,
#define HPU_TPC_ILLEGAL_NAMES		HPU_TPC_ILLEGAL_REASONS(HPU_TPC_ILL_NAME_)

/* ---- BAD_LAUNCH rules (event 13 info [7:0]; [15:8] the tensor for TENSOR_*) */
#define HPU_TPC_LAUNCH_RULES(X)	\
	X(OK, 0)			\
	X(DESC_MAGIC, 1)		\
	X(DESC_RESERVED, 2)		\
	X(BIN_ADDR, 3)			\
	X(BIN_MAGIC, 4)			\
	X(BIN_VERSION, 5)		\
	X(BIN_SIZE, 6)			\
	X(BIN_RESERVED, 7)		\
	X(BIN_CODE, 8)			\
	X(BIN_ENTRY, 9)			\
	X(BIN_COUNTS, 10)		\
	X(BIN_LOCAL, 11)		\
	X(BIN_DTYPE, 12)		\
	X(BIN_NAME, 13)			\
	X(BIN_META, 14)			\
	X(ARG_COUNT, 15)		\
	X(INDEX_SPACE, 16)		\
	X(TENSOR_DTYPE, 17)		\
	X(TENSOR_SHAPE, 18)		\
	X(TENSOR_ALIGN, 19)		\
	X(TENSOR_RANGE, 20)		\
	X(TENSOR_PAD, 21)		\
	X(TENSOR_RESERVED, 22)

#define HPU_TPC_BL_ENUM_(name, value)	HPU_TPC_BL_##name = (value),
enum hpu_tpc_launch_rule { HPU_TPC_LAUNCH_RULES(HPU_TPC_BL_ENUM_) };
#undef HPU_TPC_BL_ENUM_
#define HPU_TPC_BL_NAME_(name, value)	[value] = #name,
#define HPU_TPC_LAUNCH_RULE_NAMES	HPU_TPC_LAUNCH_RULES(HPU_TPC_BL_NAME_)

/* BAD_LAUNCH event info of a rule, with the tensor index for TENSOR_* */
#define HPU_TPC_BL_INFO(rule, tensor)	((uint32_t)(rule) | ((uint32_t)(tensor) << 8))

/* ---- Kernel binary -------------------------------------------------------- */
#define HPU_TPC_BIN_MAGIC		0x43505448u	/* "HTPC" */
#define HPU_TPC_BIN_VERSION		1
#define HPU_TPC_BIN_HEADER_SIZE		128
#define HPU_TPC_DTYPE_ANY		0

struct hpu_tpc_bin_header {
	uint32_t magic;
	uint16_t format_version;
	uint16_t header_size;
	uint32_t total_size;		/* bytes of the whole binary */
	uint32_t flags;			/* 0 */
	uint32_t code_offset;		/* 64-byte aligned, >= header_size */
	uint32_t code_size;		/* num_bundles * 64 */
	uint32_t num_bundles;		/* 1..HPU_TPC_MAX_BUNDLES */
	uint32_t entry;			/* first bundle of every member */
	uint8_t num_tensors;		/* 0..16 */
	uint8_t num_scalars;		/* 0..32 */
	uint8_t index_dims;		/* 1..5: dimensions of the index space used */
	uint8_t reserved0;
	uint32_t slm_size;		/* scalar local memory used: multiple of 4 */
	uint32_t vlm_size;		/* vector local memory used: multiple of 256 */
	uint32_t meta_offset;		/* metadata strings, 0 when meta_size is 0 */
	uint32_t meta_size;
	uint32_t reserved1[3];
	uint8_t tensor_dtype[HPU_TPC_MAX_TENSORS];	/* 0 = any, else a dtype */
	char name[HPU_TPC_NAME_SIZE];	/* printable ASCII, NUL-padded */
	uint32_t reserved2[4];
};

#define HPU_TPC_BIN_OFF(field)	((uint32_t)offsetof(struct hpu_tpc_bin_header, field))

/* ---- Launch descriptor ---------------------------------------------------- */
#define HPU_TPC_LAUNCH_MAGIC		0x4c505448u	/* "HTPL" */
#define HPU_TPC_LAUNCH_ALIGN		64
#define HPU_TPC_LAUNCH_FIXED_SIZE	192	/* then num_tensors tensor descriptors */
#define HPU_TPC_TENSOR_DESC_SIZE	64

struct hpu_tpc_tensor_desc {
	uint64_t base;			/* VA of element (0,0,0,0,0) */
	uint8_t dtype;
	uint8_t ndims;			/* 1..5 */
	uint16_t flags;			/* 0 */
	uint32_t pad;			/* padding value's bits, zero above the element */
	uint32_t size[HPU_TPC_DIMS];	/* 1..2^31-1 for d < ndims, else 0 */
	uint32_t stride[HPU_TPC_DIMS];	/* in elements, 0 allowed; 0 for d >= ndims */
	uint64_t reserved;
};

struct hpu_tpc_launch_desc {
	uint32_t magic;
	uint32_t flags;			/* 0 */
	uint64_t binary;		/* VA of the kernel binary, 64-byte aligned */
	uint32_t binary_size;		/* = the binary's total_size */
	uint8_t num_tensors;		/* = the binary's */
	uint8_t num_scalars;		/* = the binary's */
	uint16_t reserved0;
	uint32_t index_size[HPU_TPC_DIMS];
	uint32_t reserved1;
	uint64_t seed;			/* Philox key of the launch */
	uint64_t reserved2;
	uint32_t scalars[HPU_TPC_MAX_SCALARS];	/* 0 beyond num_scalars */
	/* followed by num_tensors struct hpu_tpc_tensor_desc */
};

#define HPU_TPC_LAUNCH_OFF(field)	((uint32_t)offsetof(struct hpu_tpc_launch_desc, field))
#define HPU_TPC_TENSOR_OFF(field)	((uint32_t)offsetof(struct hpu_tpc_tensor_desc, field))

static inline uint32_t hpu_tpc_launch_size(unsigned int num_tensors)
{
	return HPU_TPC_LAUNCH_FIXED_SIZE + HPU_TPC_TENSOR_DESC_SIZE * num_tensors;
}

#ifdef __cplusplus
#define HPU_TPC_ASSERT_(cond, msg)	static_assert(cond, msg)
#else
#define HPU_TPC_ASSERT_(cond, msg)	_Static_assert(cond, msg)
#endif
HPU_TPC_ASSERT_(sizeof(struct hpu_tpc_bin_header) == HPU_TPC_BIN_HEADER_SIZE, "bin header");
HPU_TPC_ASSERT_(HPU_TPC_BIN_OFF(tensor_dtype) == 64, "tensor_dtype");
HPU_TPC_ASSERT_(HPU_TPC_BIN_OFF(name) == 80, "name");
HPU_TPC_ASSERT_(sizeof(struct hpu_tpc_tensor_desc) == HPU_TPC_TENSOR_DESC_SIZE, "tensor desc");
HPU_TPC_ASSERT_(sizeof(struct hpu_tpc_launch_desc) == HPU_TPC_LAUNCH_FIXED_SIZE, "launch desc");
HPU_TPC_ASSERT_(HPU_TPC_LAUNCH_OFF(scalars) == 64, "scalars");
HPU_TPC_ASSERT_(HPU_TPC_TENSOR_OFF(size) == 16, "size");
HPU_TPC_ASSERT_(HPU_TPC_TENSOR_OFF(stride) == 36, "stride");
#undef HPU_TPC_ASSERT_

/* ---- Validation ------------------------------------------------------------
 * The checks of tpc.md, in the order the device applies them, on
 * little-endian bytes (no alignment or host-endianness assumptions).  Each
 * returns a BAD_LAUNCH rule (HPU_TPC_BL_OK when the input passes).
 */
static inline uint32_t hpu_tpc_le16(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

static inline uint32_t hpu_tpc_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static inline uint64_t hpu_tpc_le64(const uint8_t *p)
{
	return (uint64_t)hpu_tpc_le32(p) | ((uint64_t)hpu_tpc_le32(p + 4) << 32);
}

static inline int hpu_tpc_all_zero(const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * The 128-byte header @h of a binary of @avail bytes (the launch's
 * binary_size; the device reads the header first, then the rest).  The
 * checks run in the order of tpc.md's table (field by field, by offset),
 * so the rule returned is the first one broken in that order.
 */
static inline uint32_t hpu_tpc_check_header(const uint8_t *h, uint32_t avail)
{
	uint32_t total, off, size, n, entry, moff, msize, i;
	uint32_t nt, ns, nd, slm, vlm, end;

	if (hpu_tpc_le32(h + HPU_TPC_BIN_OFF(magic)) != HPU_TPC_BIN_MAGIC)
		return HPU_TPC_BL_BIN_MAGIC;
	if (hpu_tpc_le16(h + HPU_TPC_BIN_OFF(format_version)) != HPU_TPC_BIN_VERSION ||
	    hpu_tpc_le16(h + HPU_TPC_BIN_OFF(header_size)) != HPU_TPC_BIN_HEADER_SIZE)
		return HPU_TPC_BL_BIN_VERSION;
	total = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(total_size));
	if (total < HPU_TPC_BIN_HEADER_SIZE || total > HPU_TPC_MAX_BINARY || total != avail)
		return HPU_TPC_BL_BIN_SIZE;
	if (hpu_tpc_le32(h + HPU_TPC_BIN_OFF(flags)))
		return HPU_TPC_BL_BIN_RESERVED;
	off = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(code_offset));
	size = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(code_size));
	n = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(num_bundles));
	if (off % HPU_TPC_BUNDLE_SIZE || off < HPU_TPC_BIN_HEADER_SIZE || n == 0 ||
	    n > HPU_TPC_MAX_BUNDLES || size != n * HPU_TPC_BUNDLE_SIZE ||
	    off > total || size > total - off)
		return HPU_TPC_BL_BIN_CODE;
	entry = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(entry));
	if (entry >= n)
		return HPU_TPC_BL_BIN_ENTRY;
	nt = h[HPU_TPC_BIN_OFF(num_tensors)];
	ns = h[HPU_TPC_BIN_OFF(num_scalars)];
	nd = h[HPU_TPC_BIN_OFF(index_dims)];
	if (nt > HPU_TPC_MAX_TENSORS || ns > HPU_TPC_MAX_SCALARS || nd < 1 ||
	    nd > HPU_TPC_DIMS)
		return HPU_TPC_BL_BIN_COUNTS;
	if (h[HPU_TPC_BIN_OFF(reserved0)])
		return HPU_TPC_BL_BIN_RESERVED;
	slm = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(slm_size));
	vlm = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(vlm_size));
	if (slm % 4 || slm > HPU_TPC_SLM_SIZE || vlm % HPU_TPC_VBYTES ||
	    vlm > HPU_TPC_VLM_SIZE)
		return HPU_TPC_BL_BIN_LOCAL;
	moff = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(meta_offset));
	msize = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(meta_size));
	end = off + size;
	if (msize == 0) {
		if (moff)
			return HPU_TPC_BL_BIN_META;
	} else if (moff < HPU_TPC_BIN_HEADER_SIZE || moff > total || msize > total - moff ||
		   (moff < end && moff + msize > off)) {
		return HPU_TPC_BL_BIN_META;
	}
	if (!hpu_tpc_all_zero(h + HPU_TPC_BIN_OFF(reserved1), 12))
		return HPU_TPC_BL_BIN_RESERVED;
	for (i = 0; i < HPU_TPC_MAX_TENSORS; i++) {
		uint32_t dt = h[HPU_TPC_BIN_OFF(tensor_dtype) + i];

		if (dt && (i >= nt || !hpu_tpc_dtype_valid(dt)))
			return HPU_TPC_BL_BIN_DTYPE;
	}
	for (i = 0; i < HPU_TPC_NAME_SIZE; i++) {
		uint8_t c = (uint8_t)h[HPU_TPC_BIN_OFF(name) + i];

		if (!c)
			break;
		if (c < 0x20 || c > 0x7e)
			return HPU_TPC_BL_BIN_NAME;
	}
	if (i == 0 || i == HPU_TPC_NAME_SIZE ||
	    !hpu_tpc_all_zero(h + HPU_TPC_BIN_OFF(name) + i, HPU_TPC_NAME_SIZE - i))
		return HPU_TPC_BL_BIN_NAME;
	if (!hpu_tpc_all_zero(h + HPU_TPC_BIN_OFF(reserved2), 16))
		return HPU_TPC_BL_BIN_RESERVED;
	return HPU_TPC_BL_OK;
}

/*
 * The metadata section: NUL-terminated strings of printable ASCII, one
 * after the other (the device does not read it; libhpu and the tools do).
 */
static inline uint32_t hpu_tpc_check_meta(const uint8_t *m, uint32_t size)
{
	uint32_t i;

	if (size == 0)
		return HPU_TPC_BL_OK;
	if (m[size - 1] != 0)
		return HPU_TPC_BL_BIN_META;
	for (i = 0; i < size; i++)
		if (m[i] && (m[i] < 0x20 || m[i] > 0x7e))
			return HPU_TPC_BL_BIN_META;
	return HPU_TPC_BL_OK;
}

/*
 * A whole binary of @size bytes (the launch's binary_size; refused before
 * anything is read when below 128 or above 1 MiB): the header and the
 * metadata section.
 */
static inline uint32_t hpu_tpc_check_binary(const uint8_t *b, uint32_t size)
{
	uint32_t r;

	if (size < HPU_TPC_BIN_HEADER_SIZE || size > HPU_TPC_MAX_BINARY)
		return HPU_TPC_BL_BIN_SIZE;
	r = hpu_tpc_check_header(b, size);
	if (r)
		return r;
	return hpu_tpc_check_meta(b + hpu_tpc_le32(b + HPU_TPC_BIN_OFF(meta_offset)),
				  hpu_tpc_le32(b + HPU_TPC_BIN_OFF(meta_size)));
}

/*
 * The fixed 192 bytes of a launch descriptor @d (the device reads them
 * first), in tpc.md's order: magic, flags and reserved fields, unused
 * scalars zero, counts within the limits, the binary's alignment.  Then the device reads and
 * checks the binary (hpu_tpc_check_binary()), then the counts and the
 * index space against it (hpu_tpc_check_launch_args()), then each tensor
 * descriptor (hpu_tpc_check_tensor()).
 */
static inline uint32_t hpu_tpc_check_launch_fixed(const uint8_t *d)
{
	uint32_t ns, i;

	if (hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(magic)) != HPU_TPC_LAUNCH_MAGIC)
		return HPU_TPC_BL_DESC_MAGIC;
	ns = d[HPU_TPC_LAUNCH_OFF(num_scalars)];
	if (hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(flags)) ||
	    hpu_tpc_le16(d + HPU_TPC_LAUNCH_OFF(reserved0)) ||
	    hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(reserved1)) ||
	    hpu_tpc_le64(d + HPU_TPC_LAUNCH_OFF(reserved2)))
		return HPU_TPC_BL_DESC_RESERVED;
	for (i = ns; i < HPU_TPC_MAX_SCALARS; i++)	/* none when ns > 32 */
		if (hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(scalars) + 4 * i))
			return HPU_TPC_BL_DESC_RESERVED;
	if (d[HPU_TPC_LAUNCH_OFF(num_tensors)] > HPU_TPC_MAX_TENSORS ||
	    ns > HPU_TPC_MAX_SCALARS)
		return HPU_TPC_BL_ARG_COUNT;
	if (hpu_tpc_le64(d + HPU_TPC_LAUNCH_OFF(binary)) % HPU_TPC_LAUNCH_ALIGN)
		return HPU_TPC_BL_BIN_ADDR;
	return HPU_TPC_BL_OK;
}

/*
 * The number of members of the index space of the launch descriptor @d:
 * the product of its index_size[], or 0 when a size is 0 or the product
 * passes HPU_TPC_MAX_MEMBERS (2^48).  Each factor is checked before it is
 * multiplied in, so the product never wraps around 2^64.
 */
static inline uint64_t hpu_tpc_launch_members(const uint8_t *d)
{
	uint64_t members = 1;
	uint32_t i;

	for (i = 0; i < HPU_TPC_DIMS; i++) {
		uint32_t s = hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(index_size) + 4 * i);

		if (s == 0 || s > HPU_TPC_MAX_MEMBERS / members)
			return 0;
		members *= s;
	}
	return members;
}

/*
 * After the binary's header @h passed: the descriptor's counts against it
 * and the index space against the binary's index_dims.
 */
static inline uint32_t hpu_tpc_check_launch_args(const uint8_t *d, const uint8_t *h)
{
	uint32_t nd = h[HPU_TPC_BIN_OFF(index_dims)], i;

	if (d[HPU_TPC_LAUNCH_OFF(num_tensors)] != h[HPU_TPC_BIN_OFF(num_tensors)] ||
	    d[HPU_TPC_LAUNCH_OFF(num_scalars)] != h[HPU_TPC_BIN_OFF(num_scalars)])
		return HPU_TPC_BL_ARG_COUNT;
	for (i = 0; i < HPU_TPC_DIMS; i++) {
		uint32_t s = hpu_tpc_le32(d + HPU_TPC_LAUNCH_OFF(index_size) + 4 * i);

		if (s == 0 || s > HPU_TPC_MAX_DIM_SIZE || (i >= nd && s != 1))
			return HPU_TPC_BL_INDEX_SPACE;
	}
	if (!hpu_tpc_launch_members(d))
		return HPU_TPC_BL_INDEX_SPACE;
	return HPU_TPC_BL_OK;
}

/*
 * One tensor descriptor @t (64 bytes) against the dtype the binary pins
 * for it (@want, 0 = any).  The caller adds the tensor index to the event
 * info with HPU_TPC_BL_INFO().
 */
static inline uint32_t hpu_tpc_check_tensor(const uint8_t *t, uint32_t want)
{
	uint32_t dt = t[HPU_TPC_TENSOR_OFF(dtype)], nd = t[HPU_TPC_TENSOR_OFF(ndims)];
	uint64_t base = hpu_tpc_le64(t + HPU_TPC_TENSOR_OFF(base));
	uint64_t span = 0;
	uint32_t es, pad, i;
	int wraps = 0;

	if (hpu_tpc_le16(t + HPU_TPC_TENSOR_OFF(flags)) ||
	    hpu_tpc_le64(t + HPU_TPC_TENSOR_OFF(reserved)))
		return HPU_TPC_BL_TENSOR_RESERVED;
	if (!hpu_tpc_dtype_valid(dt) || (want && dt != want))
		return HPU_TPC_BL_TENSOR_DTYPE;
	if (nd < 1 || nd > HPU_TPC_DIMS)
		return HPU_TPC_BL_TENSOR_SHAPE;
	for (i = 0; i < HPU_TPC_DIMS; i++) {
		uint32_t s = hpu_tpc_le32(t + HPU_TPC_TENSOR_OFF(size) + 4 * i);
		uint32_t st = hpu_tpc_le32(t + HPU_TPC_TENSOR_OFF(stride) + 4 * i);

		if (i < nd && (s == 0 || s > HPU_TPC_MAX_DIM_SIZE))
			return HPU_TPC_BL_TENSOR_SHAPE;
		if (i >= nd && (s || st))
			return HPU_TPC_BL_TENSOR_SHAPE;
		if (i < nd) {
			/* each term is below 2^31 * 2^32; their sum may pass 2^64 */
			uint64_t term = (uint64_t)(s - 1) * st;

			if (span > ~(uint64_t)0 - term)
				wraps = 1;
			span += term;
		}
	}
	es = hpu_tpc_dtype_size(dt);
	if (base % es)
		return HPU_TPC_BL_TENSOR_ALIGN;
	/* the last byte, base + es * span + es - 1, must not pass 2^64 - 1 */
	if (wraps || span > (~(uint64_t)0 - (es - 1)) / es ||
	    base > ~(uint64_t)0 - (es * span + es - 1))
		return HPU_TPC_BL_TENSOR_RANGE;
	pad = hpu_tpc_le32(t + HPU_TPC_TENSOR_OFF(pad));
	if (es < 4 && (pad >> (8 * es)))
		return HPU_TPC_BL_TENSOR_PAD;
	return HPU_TPC_BL_OK;
}

/* ---- FP32 to BF16 ---------------------------------------------------------
 * vcvt.bf16.f32 and st.ts.bf16 on the bits, integer only (tpc.md,
 * "Conversions"): @rm an HPU_TPC_RM_* mode, @sat clamps finite results to
 * the largest finite value, @rnd the lane's random word (used by SR only).
 * BF16 arithmetic rounds its FP32 result with HPU_TPC_RM_RN.
 */
static inline uint16_t hpu_tpc_f32_to_bf16(uint32_t x, unsigned int rm, int sat, uint32_t rnd)
{
	uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu, inexact = mag & 0xffffu, r;

	if (mag > 0x7f800000u)		/* NaN: stays a NaN, quiet */
		return (uint16_t)((x >> 16) | 0x0040u);
	if (mag == 0x7f800000u)		/* infinities stay */
		return (uint16_t)(x >> 16);
	switch (rm) {
	case HPU_TPC_RM_RN:
		r = (mag + 0x7fffu + ((mag >> 16) & 1u)) >> 16;
		break;
	case HPU_TPC_RM_RU:
		r = (mag >> 16) + (!sign && inexact);
		break;
	case HPU_TPC_RM_RD:
		r = (mag >> 16) + (sign && inexact);
		break;
	case HPU_TPC_RM_SR:
		r = (mag + (rnd & 0xffffu)) >> 16;
		break;
	default:			/* RZ */
		r = mag >> 16;
		break;
	}
	if (sat && r >= 0x7f80u)
		r = 0x7f7fu;
	return (uint16_t)((sign >> 16) | r);
}

/* ---- Random numbers: Philox-4x32-10 --------------------------------------
 * Draw n of the member with linear index m gives lane l the 32-bit word
 * (l % 4) of philox(counter = {n, l / 4, m & 0xffffffff, m >> 32},
 * key = {seed & 0xffffffff, seed >> 32}).
 */
#define HPU_TPC_PHILOX_M0	0xd2511f53u
#define HPU_TPC_PHILOX_M1	0xcd9e8d57u
#define HPU_TPC_PHILOX_W0	0x9e3779b9u
#define HPU_TPC_PHILOX_W1	0xbb67ae85u

static inline void hpu_tpc_philox(uint32_t ctr[4], uint32_t k0, uint32_t k1)
{
	int r;

	for (r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)HPU_TPC_PHILOX_M0 * ctr[0];
		uint64_t p1 = (uint64_t)HPU_TPC_PHILOX_M1 * ctr[2];
		uint32_t c1 = ctr[1], c3 = ctr[3];

		ctr[0] = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
		ctr[1] = (uint32_t)p1;
		ctr[2] = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
		ctr[3] = (uint32_t)p0;
		k0 += HPU_TPC_PHILOX_W0;
		k1 += HPU_TPC_PHILOX_W1;
	}
}

/* The 32 random bits of lane @lane in draw @draw of member @member. */
static inline uint32_t hpu_tpc_rand_word(uint64_t seed, uint64_t member,
					 uint32_t draw, uint32_t lane)
{
	uint32_t c[4] = { draw, lane / 4, (uint32_t)member, (uint32_t)(member >> 32) };

	hpu_tpc_philox(c, (uint32_t)seed, (uint32_t)(seed >> 32));
	return c[lane % 4];
}

#endif /* HPU_TPC_H */

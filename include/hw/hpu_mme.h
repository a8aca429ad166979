/* SPDX-License-Identifier: MIT */
/*
 * HPU Matrix Math Engine: the GEMM descriptor an MME_GEMM packet points at
 * (spec version 6).  Documentation/hw/mme.md is the specification; the
 * device model (emu/hpu_mme.c), the driver and the tests use these offsets.
 * All fields are little-endian; addresses are in the command buffer's ASID.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_MME_H
#define HPU_MME_H

#define HPU_MME_DESC_SIZE		128	/* 64-byte aligned */

/* Byte offsets in the descriptor */
#define HPU_MME_D_FLAGS			0x00	/* u32 */
#define HPU_MME_D_RSVD0			0x04	/* u32, zero */
#define HPU_MME_D_M			0x08	/* u32 rows of D */
#define HPU_MME_D_N			0x0c	/* u32 columns of D */
#define HPU_MME_D_K			0x10	/* u32 inner dimension */
#define HPU_MME_D_BATCH			0x14	/* u32 batch count */
#define HPU_MME_D_A			0x18	/* u64 */
#define HPU_MME_D_B			0x20	/* u64 */
#define HPU_MME_D_C			0x28	/* u64, read only if beta != 0 */
#define HPU_MME_D_D			0x30	/* u64 */
#define HPU_MME_D_BIAS			0x38	/* u64, read only with BIAS */
#define HPU_MME_D_LDA			0x40	/* u32, elements */
#define HPU_MME_D_LDB			0x44	/* u32 */
#define HPU_MME_D_LDC			0x48	/* u32 */
#define HPU_MME_D_LDD			0x4c	/* u32 */
#define HPU_MME_D_STRIDE_A		0x50	/* u64, elements between batches */
#define HPU_MME_D_STRIDE_B		0x58	/* u64 */
#define HPU_MME_D_STRIDE_C		0x60	/* u64 */
#define HPU_MME_D_STRIDE_D		0x68	/* u64 */
#define HPU_MME_D_ALPHA			0x70	/* IEEE 754 binary32 */
#define HPU_MME_D_BETA			0x74	/* IEEE 754 binary32 */
#define HPU_MME_D_RSVD1			0x78	/* u64, zero */

/* FLAGS */
#define HPU_MME_F_IN_TYPE_MASK		0x00000003	/* A and B */
#define HPU_MME_F_OUT_TYPE_MASK		0x0000000c	/* C and D */
#define HPU_MME_F_OUT_TYPE_SHIFT	2
#define HPU_MME_F_TRANS_A		0x00000010
#define HPU_MME_F_TRANS_B		0x00000020
#define HPU_MME_F_BIAS			0x00000040
#define HPU_MME_F_ACT_MASK		0x00000300
#define HPU_MME_F_ACT_SHIFT		8
#define HPU_MME_F_DEFINED		0x0000037f
#define HPU_MME_TYPE_FP32		0
#define HPU_MME_TYPE_BF16		1
#define HPU_MME_ACT_NONE		0
#define HPU_MME_ACT_RELU		1
#define HPU_MME_ACT_GELU_TANH		2

/* Limits */
#define HPU_MME_DIM_MAX			65536	/* M, N, K */
#define HPU_MME_BATCH_MAX		65536
#define HPU_MME_TILE			128	/* output tile: 128 x 128 of D */

/* BAD_LAUNCH info codes of an MME_GEMM (the event's info field) */
#define HPU_MME_ERR_DESC_ALIGN		1	/* descriptor not 64-byte aligned */
#define HPU_MME_ERR_FLAGS		2	/* undefined FLAGS bit set */
#define HPU_MME_ERR_IN_TYPE		3	/* input type not FP32/BF16 */
#define HPU_MME_ERR_OUT_TYPE		4	/* output type not FP32/BF16 */
#define HPU_MME_ERR_ACT			5	/* activation not 0-2 */
#define HPU_MME_ERR_RESERVED		6	/* reserved field not zero */
#define HPU_MME_ERR_DIMS		7	/* M, N or K not 1..DIM_MAX */
#define HPU_MME_ERR_BATCH		8	/* batch not 1..BATCH_MAX */
#define HPU_MME_ERR_LDA			9	/* lda below stored row length */
#define HPU_MME_ERR_LDB			10
#define HPU_MME_ERR_LDC			11	/* checked only if beta != 0 */
#define HPU_MME_ERR_LDD			12
#define HPU_MME_ERR_ALIGN		13	/* an address not element aligned */
#define HPU_MME_ERR_RANGE		14	/* an operand wraps the VA space */
#define HPU_MME_ERR_STRIDE_D		15	/* D matrices of a batch overlap */
#define HPU_MME_ERR_OVERLAP		16	/* D overlaps A, B, bias or C */

#endif /* HPU_MME_H */

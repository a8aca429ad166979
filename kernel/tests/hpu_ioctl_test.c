// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: argument checks of VM_BIND (hpu_vm.c) and SUBMIT (hpu_job.c):
 * the boundaries of every range, alignment, zero sizes and sums that
 * would overflow.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/sizes.h>

#include "hpu_accel.h"
#include "../hpu_drv.h"
#include "../hpu_job.h"
#include "../hpu_limits.h"
#include "../hpu_stream.h"
#include "../hpu_vm.h"
#include "hpu_test.h"

/* An 8 MiB buffer of 2 MiB pages. */
#define T_BO_SIZE	(8ULL * SZ_1M)
#define T_PAGE		((u64)SZ_2M)

struct hpu_map_case {
	const char *what;
	u32 flags;
	u64 va;
	u64 bo_offset;
	u64 size;
	bool readonly;
	int ret;
};

static const struct hpu_map_case hpu_map_cases[] = {
	{ "the whole buffer at the start of the range", DRM_HPU_VM_FIXED,
	  HPU_VA_START, 0, T_BO_SIZE, false, 0 },
	{ "zero size", DRM_HPU_VM_FIXED, HPU_VA_START, 0, 0, false, -EINVAL },
	{ "size not a multiple of the page", DRM_HPU_VM_FIXED, HPU_VA_START,
	  0, T_PAGE + SZ_4K, false, -EINVAL },
	{ "offset not a multiple of the page", DRM_HPU_VM_FIXED, HPU_VA_START,
	  SZ_4K, T_PAGE, false, -EINVAL },
	{ "the last page of the buffer", DRM_HPU_VM_FIXED, HPU_VA_START,
	  T_BO_SIZE - T_PAGE, T_PAGE, false, 0 },
	{ "offset at the end of the buffer", DRM_HPU_VM_FIXED, HPU_VA_START,
	  T_BO_SIZE, T_PAGE, false, -EINVAL },
	{ "range past the end of the buffer", DRM_HPU_VM_FIXED, HPU_VA_START,
	  T_BO_SIZE - T_PAGE, 2 * T_PAGE, false, -EINVAL },
	{ "offset + size overflows", DRM_HPU_VM_FIXED, HPU_VA_START,
	  T_PAGE, 0ULL - T_PAGE, false, -EINVAL },
	{ "va not a multiple of the page", DRM_HPU_VM_FIXED,
	  HPU_VA_START + SZ_4K, 0, T_PAGE, false, -EINVAL },
	{ "va below the range", DRM_HPU_VM_FIXED, HPU_VA_START - T_PAGE, 0,
	  T_PAGE, false, -ERANGE },
	{ "va zero", DRM_HPU_VM_FIXED, 0, 0, T_PAGE, false, -ERANGE },
	{ "the last page of the range", DRM_HPU_VM_FIXED, HPU_VA_END - T_PAGE,
	  0, T_PAGE, false, 0 },
	{ "va at the end of the range", DRM_HPU_VM_FIXED, HPU_VA_END, 0,
	  T_PAGE, false, -ERANGE },
	{ "range past the end of the range", DRM_HPU_VM_FIXED,
	  HPU_VA_END - T_PAGE, 0, 2 * T_PAGE, false, -ERANGE },
	{ "va + size overflows", DRM_HPU_VM_FIXED, 0ULL - T_PAGE, 0,
	  2 * T_PAGE, false, -ERANGE },
	{ "without FIXED the va is not checked", 0, 0, 0, T_PAGE, false, 0 },
	{ "read-only buffer mapped writable", DRM_HPU_VM_FIXED, HPU_VA_START,
	  0, T_PAGE, true, -EINVAL },
	{ "read-only buffer mapped read-only",
	  DRM_HPU_VM_FIXED | DRM_HPU_VM_READONLY, HPU_VA_START, 0, T_PAGE,
	  true, 0 },
};

static void hpu_map_case_desc(const struct hpu_map_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hpu_map, hpu_map_cases, hpu_map_case_desc);

static void hpu_ioctl_test_vm_bind_map(struct kunit *test)
{
	const struct hpu_map_case *c = test->param_value;
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	struct drm_hpu_vm_bind args = {
		.op = DRM_HPU_VM_MAP,
		.flags = c->flags,
		.handle = 1,
		.bo_offset = c->bo_offset,
		.size = c->size,
		.va = c->va,
	};

	KUNIT_EXPECT_EQ(test, hpu_vm_bind_map_check(&hdev->drm, &args,
						    T_BO_SIZE, T_PAGE,
						    c->readonly), c->ret);
}

/* 4 KiB pages (host buffers): the same checks at the smaller size. */
static void hpu_ioctl_test_vm_bind_map_host(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	struct drm_hpu_vm_bind args = {
		.op = DRM_HPU_VM_MAP,
		.flags = DRM_HPU_VM_FIXED,
		.va = HPU_VA_START + SZ_4K,
		.bo_offset = SZ_4K,
		.size = SZ_4K,
	};

	KUNIT_EXPECT_EQ(test, hpu_vm_bind_map_check(&hdev->drm, &args, 2 * SZ_4K,
						    SZ_4K, false), 0);
	args.size = 2 * SZ_4K;
	KUNIT_EXPECT_EQ(test, hpu_vm_bind_map_check(&hdev->drm, &args, 2 * SZ_4K,
						    SZ_4K, false), -EINVAL);
	args.size = SZ_4K;
	args.va = HPU_VA_START + 0x800;
	KUNIT_EXPECT_EQ(test, hpu_vm_bind_map_check(&hdev->drm, &args, 2 * SZ_4K,
						    SZ_4K, false), -EINVAL);
}

struct hpu_unmap_case {
	const char *what;
	struct drm_hpu_vm_bind args;
	int ret;
};

#define T_UNMAP(va_, ...) \
	{ .op = DRM_HPU_VM_UNMAP, .va = (va_), __VA_ARGS__ }

static const struct hpu_unmap_case hpu_unmap_cases[] = {
	{ "start of the range", T_UNMAP(HPU_VA_START), 0 },
	{ "last page of the range", T_UNMAP(HPU_VA_END - SZ_4K), 0 },
	{ "flags", T_UNMAP(HPU_VA_START, .flags = DRM_HPU_VM_READONLY), -EINVAL },
	{ "handle", T_UNMAP(HPU_VA_START, .handle = 1), -EINVAL },
	{ "bo_offset", T_UNMAP(HPU_VA_START, .bo_offset = SZ_4K), -EINVAL },
	{ "size", T_UNMAP(HPU_VA_START, .size = SZ_4K), -EINVAL },
	{ "va not 4 KiB aligned", T_UNMAP(HPU_VA_START + 0x800), -EINVAL },
	{ "va below the range", T_UNMAP(HPU_VA_START - SZ_4K), -ERANGE },
	{ "va zero", T_UNMAP(0), -ERANGE },
	{ "va at the end of the range", T_UNMAP(HPU_VA_END), -ERANGE },
	{ "va at the top of the address space", T_UNMAP(0ULL - SZ_4K), -ERANGE },
};

static void hpu_unmap_case_desc(const struct hpu_unmap_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hpu_unmap, hpu_unmap_cases, hpu_unmap_case_desc);

static void hpu_ioctl_test_vm_bind_unmap(struct kunit *test)
{
	const struct hpu_unmap_case *c = test->param_value;
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);

	KUNIT_EXPECT_EQ(test, hpu_vm_bind_unmap_check(&hdev->drm, &c->args),
			c->ret);
}

struct hpu_submit_case {
	const char *what;
	struct drm_hpu_submit args;
	int ret;
};

#define T_SUBMIT(va_, size_, ...) \
	{ .queue_id = 1, .cb_va = (va_), .cb_size = (size_), __VA_ARGS__ }

static const struct hpu_submit_case hpu_submit_cases[] = {
	{ "one packet at the start of the range", T_SUBMIT(HPU_VA_START, 8), 0 },
	{ "the largest command buffer", T_SUBMIT(HPU_VA_START, HPU_CB_MAX_SIZE), 0 },
	{ "the last 8 bytes of the range", T_SUBMIT(HPU_VA_END - 8, 8), 0 },
	{ "flags", T_SUBMIT(HPU_VA_START, 8, .flags = 1), -EINVAL },
	{ "zero size", T_SUBMIT(HPU_VA_START, 0), -EINVAL },
	{ "size not a multiple of 8", T_SUBMIT(HPU_VA_START, 12), -EINVAL },
	{ "size above 1 MiB", T_SUBMIT(HPU_VA_START, HPU_CB_MAX_SIZE + 8), -EINVAL },
	{ "cb_va not 8-byte aligned", T_SUBMIT(HPU_VA_START + 4, 8), -EINVAL },
	{ "cb_va below the range", T_SUBMIT(HPU_VA_START - 8, 8), -EINVAL },
	{ "cb_va at the end of the range", T_SUBMIT(HPU_VA_END, 8), -EINVAL },
	{ "buffer past the end of the range", T_SUBMIT(HPU_VA_END - 8, 16), -EINVAL },
	{ "cb_va + cb_size overflows", T_SUBMIT(0ULL - 8, 16), -EINVAL },
	{ "the longest timeout", T_SUBMIT(HPU_VA_START, 8,
					  .timeout_ms = HPU_JOB_TIMEOUT_MAX_MS), 0 },
	{ "timeout above an hour", T_SUBMIT(HPU_VA_START, 8,
					    .timeout_ms = HPU_JOB_TIMEOUT_MAX_MS + 1),
	  -EINVAL },
	{ "the most syncs", T_SUBMIT(HPU_VA_START, 8,
				     .num_in_syncs = DRM_HPU_MAX_SYNCS,
				     .num_out_syncs = DRM_HPU_MAX_SYNCS), 0 },
	{ "too many in-syncs", T_SUBMIT(HPU_VA_START, 8,
					.num_in_syncs = DRM_HPU_MAX_SYNCS + 1),
	  -EINVAL },
	{ "too many out-syncs", T_SUBMIT(HPU_VA_START, 8,
					 .num_out_syncs = DRM_HPU_MAX_SYNCS + 1),
	  -EINVAL },
};

static void hpu_submit_case_desc(const struct hpu_submit_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hpu_submit, hpu_submit_cases, hpu_submit_case_desc);

static void hpu_ioctl_test_submit(struct kunit *test)
{
	const struct hpu_submit_case *c = test->param_value;
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);

	KUNIT_EXPECT_EQ(test, hpu_submit_check(&hdev->drm, "SUBMIT", &c->args), c->ret);
}

/*
 * user_timeout_ms binds callers without CAP_SYS_ADMIN only: the test's
 * task (root, every capability) may ask for more, an ordinary user not.
 */
static void hpu_ioctl_test_submit_user_timeout(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	struct drm_hpu_submit args = T_SUBMIT(HPU_VA_START, 8, .timeout_ms = 5001);
	const struct cred *self;
	int at_limit, above;

	hdev->limits->user_timeout_ms = 5000;
	KUNIT_EXPECT_EQ(test, hpu_submit_check(&hdev->drm, "SUBMIT", &args), 0);

	self = hpu_test_as_user(test, KUIDT_INIT(1000));
	above = hpu_submit_check(&hdev->drm, "SUBMIT", &args);
	args.timeout_ms = 5000;
	at_limit = hpu_submit_check(&hdev->drm, "SUBMIT", &args);
	hpu_test_as_self(self);

	KUNIT_EXPECT_EQ(test, above, -EINVAL);
	KUNIT_EXPECT_EQ(test, at_limit, 0);
}

struct hpu_submit_array_case {
	const char *what;
	struct drm_hpu_submit_array args;
	int ret;
};

#define ES sizeof(struct drm_hpu_submit)

static const struct hpu_submit_array_case hpu_submit_array_cases[] = {
	{ "one entry", { .count = 1, .submits = 0x1000, .entry_size = ES }, 0 },
	{ "the most entries",
	  { .count = DRM_HPU_MAX_SUBMITS, .submits = 0x1000, .entry_size = ES }, 0 },
	{ "no entry", { .count = 0, .submits = 0x1000, .entry_size = ES }, -EINVAL },
	{ "one entry too many",
	  { .count = DRM_HPU_MAX_SUBMITS + 1, .submits = 0x1000, .entry_size = ES },
	  -EINVAL },
	{ "a huge count", { .count = 0xffffffff, .submits = 0x1000, .entry_size = ES }, -EINVAL },
	{ "a flag", { .count = 1, .flags = 1, .submits = 0x1000, .entry_size = ES }, -EINVAL },
	{ "the top flag",
	  { .count = 1, .flags = 0x80000000, .submits = 0x1000, .entry_size = ES },
	  -EINVAL },
	{ "no entry_size", { .count = 1, .submits = 0x1000 }, -EINVAL },
	{ "entry_size one below v1",
	  { .count = 1, .submits = 0x1000, .entry_size = DRM_HPU_SUBMIT_SIZE_V1 - 1 },
	  -EINVAL },
	{ "entry_size v1",
	  { .count = 1, .submits = 0x1000, .entry_size = DRM_HPU_SUBMIT_SIZE_V1 }, 0 },
	{ "a larger entry_size",
	  { .count = 1, .submits = 0x1000, .entry_size = DRM_HPU_SUBMIT_ENTRY_MAX }, 0 },
	{ "entry_size too large",
	  { .count = 1, .submits = 0x1000, .entry_size = DRM_HPU_SUBMIT_ENTRY_MAX + 1 },
	  -EINVAL },
	{ "pad", { .count = 1, .submits = 0x1000, .entry_size = ES, .pad = 1 }, -EINVAL },
};

#undef ES

static void hpu_submit_array_case_desc(const struct hpu_submit_array_case *c,
				       char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(hpu_submit_array, hpu_submit_array_cases,
		  hpu_submit_array_case_desc);

/*
 * SUBMIT_ARRAY's own fields: 1 to DRM_HPU_MAX_SUBMITS entries, no flags,
 * an entry_size in range, no pad.
 */
static void hpu_ioctl_test_submit_array(struct kunit *test)
{
	const struct hpu_submit_array_case *c = test->param_value;
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);

	KUNIT_EXPECT_EQ(test, hpu_submit_array_check(&hdev->drm, &c->args),
			c->ret);
}

static struct kunit_case hpu_ioctl_test_cases[] = {
	KUNIT_CASE_PARAM(hpu_ioctl_test_vm_bind_map, hpu_map_gen_params),
	KUNIT_CASE(hpu_ioctl_test_vm_bind_map_host),
	KUNIT_CASE_PARAM(hpu_ioctl_test_vm_bind_unmap, hpu_unmap_gen_params),
	KUNIT_CASE_PARAM(hpu_ioctl_test_submit, hpu_submit_gen_params),
	KUNIT_CASE(hpu_ioctl_test_submit_user_timeout),
	KUNIT_CASE_PARAM(hpu_ioctl_test_submit_array, hpu_submit_array_gen_params),
	{}
};

static struct kunit_suite hpu_ioctl_test_suite = {
	.name = "hpu_ioctl_args",
	.test_cases = hpu_ioctl_test_cases,
};

kunit_test_suite(hpu_ioctl_test_suite);

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu KUnit suites: a device without hardware.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_TEST_H__
#define __HPU_TEST_H__

#include <linux/types.h>
#include <linux/uidgid.h>

struct cred;
struct hpu_device;
struct kunit;

struct hpu_device *hpu_test_dev_create(struct kunit *test,
				       unsigned int pt_count, u64 hbm_size);
u32 hpu_test_reg(struct hpu_device *hdev, u32 reg);
u64 hpu_test_pte_read(struct hpu_device *hdev, u64 table, unsigned int idx);
const struct cred *hpu_test_as_user(struct kunit *test, kuid_t uid);
void hpu_test_as_self(const struct cred *old);

#endif /* __HPU_TEST_H__ */

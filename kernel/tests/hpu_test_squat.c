// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_test_squat: a test-only module that claims a range of physical
 * addresses, so that a driver binding later finds part of its BAR taken.
 *
 * tests/vm/bar4-squat.sh loads it over part of an unbound HPU's BAR4 and
 * binds hpu.ko again: over the last 4 KiB hpu.ko must fall back to
 * claiming only the page-table area, over the first 4 KiB its bind must
 * fail with -EBUSY (Documentation/driver/memory.md). Nothing else.
 *
 *   insmod hpu_test_squat.ko start=<physical address> len=<bytes>
 *
 * Copyright (c) 2026 The hpu authors
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ioport.h>
#include <linux/module.h>

static unsigned long long start;
module_param(start, ullong, 0444);
MODULE_PARM_DESC(start, "first physical address of the range to claim");

static unsigned long long len;
module_param(len, ullong, 0444);
MODULE_PARM_DESC(len, "bytes of the range to claim");

static int __init hpu_test_squat_init(void)
{
	resource_size_t first = start;
	resource_size_t size = len;

	if (!size || first != start || size != len ||
	    first + (size - 1) < first)
		return -EINVAL;
	if (!request_mem_region(first, size, "hpu-test-squatter")) {
		pr_info("cannot claim [mem %#llx-%#llx]\n", start,
			start + (len - 1));
		return -EBUSY;
	}
	pr_info("claimed [mem %#llx-%#llx]\n", start, start + (len - 1));
	return 0;
}
module_init(hpu_test_squat_init);

static void __exit hpu_test_squat_exit(void)
{
	release_mem_region(start, len);
}
module_exit(hpu_test_squat_exit);

MODULE_DESCRIPTION("HPU tests: claims a physical address range");
MODULE_AUTHOR("The hpu authors");
MODULE_LICENSE("GPL");

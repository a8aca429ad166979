/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: what the KUnit suites (kernel/tests/, module hpu_kunit.ko) may
 * reach of hpu.ko.
 *
 * Functions the suites test are marked VISIBLE_IF_KUNIT (static without
 * CONFIG_KUNIT) and exported with EXPORT_SYMBOL_IF_KUNIT() into the
 * EXPORTED_FOR_KUNIT_TESTING namespace, which hpu_kunit.ko imports.
 * Without CONFIG_KUNIT nothing changes: no export, static linkage. The
 * reference kernel's headers have no <kunit/visibility.h> (its
 * CONFIG_KUNIT is unset), hence the fallback below, the same as that
 * header's.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_KUNIT_H__
#define __HPU_KUNIT_H__

#if IS_ENABLED(CONFIG_KUNIT)
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#else
#include <linux/build_bug.h>
#include <linux/compiler.h>

#define VISIBLE_IF_KUNIT		static
#define EXPORT_SYMBOL_IF_KUNIT		HPU_NOT_EXPORTED
/* Exports nothing; names @symbol, so that a typo still fails the build. */
#define HPU_NOT_EXPORTED(symbol)	static_assert(!__same_type(typeof(symbol), void))
/* A suite may stand in for a function that reads what plain memory cannot give. */
#define KUNIT_STATIC_STUB_REDIRECT(real_fn_name, args...) ((void)(real_fn_name))
#endif

#endif /* __HPU_KUNIT_H__ */

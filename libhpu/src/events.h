// SPDX-License-Identifier: MIT
// Parsing of the DRM events the hpu driver queues on a device file
// (internal to libhpu; events.cpp).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_EVENTS_H
#define HPU_SRC_EVENTS_H

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hpu/hpu.h"

namespace hpu::detail {

// The driver's sysfs attribute of the PCI device that resets it
// (/sys/bus/pci/devices/<bdf>/<name>, "soft" or "hard").
inline constexpr std::string_view kResetAttr = "hpu_reset";

// Parses the bytes of one read(2) of a DRM file (whole struct drm_event
// records, as drm_read() returns them). Appends an hpu_event for each
// DRM_HPU_EVENT_ERROR and DRM_HPU_EVENT_RESET; skips events of other types
// and known ones shorter than their structure (longer ones come from a
// newer kernel: the known prefix is used). Stops at a record whose header
// or length does not fit in the rest, or whose length is below the header
// size. Returns the number of bytes left unparsed (0 for a well-formed
// buffer).
std::size_t parse_events(const std::uint8_t *buf, std::size_t len, std::vector<hpu_event> &out);

} // namespace hpu::detail

#endif // HPU_SRC_EVENTS_H

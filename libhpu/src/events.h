// SPDX-License-Identifier: MIT
// Errors and events of a device (events.cpp): the event state and callback
// thread, and the parsing of the DRM events the hpu driver queues on a
// device file (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_EVENTS_H
#define HPU_SRC_EVENTS_H

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "hpu/hpu.h"

namespace hpu::detail {

class Kmd;

// Error events and the callback thread of a device.
struct EventState {
    std::atomic<bool> enabled{false};  // DRM_HPU_EVENTS_ENABLE issued on the current fd
    std::mutex read_mu;                // serialises poll+read of the device fd
    std::mutex store_mu;               // guards errors, pending and wake_fd
    std::deque<hpu_event> errors;      // the last HPU_ERROR_HISTORY error events
    std::deque<hpu_event> pending;     // events read but not yet delivered
    std::uint64_t errors_noted = 0;    // error events ever noted (guarded by store_mu)
    std::condition_variable noted_cv;  // notified (store_mu) when an error is noted
    int wake_fd = -1;                  // eventfd of the running thread
    // Set while no thread runs (the thread reads them).
    hpu_event_fn cb = nullptr;
    void *user = nullptr;
    std::thread thread;
    std::atomic<bool> stop{false};
    std::atomic<std::thread::id> thread_id{}; // the thread's id while it runs
};

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

// DRM_IOCTL_HPU_EVENTS on kmd's file: enables events with the whole error
// event (DRM_HPU_EVENTS_ERROR_INFO), or, from a driver that does not know
// that flag, without it. Returns 0 or a negative errno.
int events_enable_on(Kmd &kmd);
// Reads every event pending on the device file without blocking and notes
// each. Returns the number read or a negative errno (-ENODEV marks the
// device lost; -EPROTO when the file is readable but gives no event).
int events_drain(hpu_device *dev);
// Starts the callback thread of dev (ev.cb and ev.user set).
int events_start(hpu_device *dev);
// Stops the callback thread of dev (joins it).
void events_stop(hpu_device *dev) noexcept;
// Whether the caller is the callback thread of dev.
bool events_on_thread(const hpu_device *dev) noexcept;

} // namespace hpu::detail

#endif // HPU_SRC_EVENTS_H

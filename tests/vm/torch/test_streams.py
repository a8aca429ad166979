#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Streams and events of hpu_torch (Documentation/pytorch.md, "Streams and
# events"), imported and run by test_torch.py in its process:
#   TestStreamApi     current / default / pool streams, the stream()
#                     context manager, set_stream, priority, ids.
#   TestStreamOrder   ops run on the current stream's queues: a held stream
#                     leaves the default stream running, and its write
#                     into a tensor read meanwhile on the default stream
#                     has not happened; a producer on one
#                     stream and a consumer on another after wait_event get
#                     the producer's data (held, so a missing dependency is
#                     certain to show: without the wait the consumer reads
#                     the old data); the same with a long GEMM (no hold);
#                     query() false while held, true after; Stream,
#                     Event and device synchronize; wait_stream; lazy mode.
#   TestRecordStream  a block freed while another stream still uses it
#                     (record_stream) is not reused until that stream's
#                     work has ended; without record_stream it is at once;
#                     a block freed while another stream is current waits
#                     for that stream's work too.
#   TestEventTiming   elapsed_time between two timing events lies between
#                     the host's bounds; its errors.
#   TestStreamFailures  a job failing on a stream (the driver's DMA bus
#                     error injection): a stream that waited for an event
#                     after it raises naming it; a timing event's
#                     synchronize() raises for the job before its marker,
#                     once.
#                     A lazy flush that raises an older job's failure keeps
#                     its step (run by the next flush). A failed job of
#                     hpu:1 is reported by the hpu:0 stream that waited for
#                     its event; hpu:0 is not reset (its tensors stay valid).
#   TestStreamErrors  an event of hpu:0 recorded on an hpu:1 stream,
#                     record_stream with another device's stream, a bad
#                     stream id: RuntimeError.
#   TestSecondHpuStreams  the same producer/consumer order on hpu:1.
#   TestCrossHpuWait  hpu:0's stream waits for an event of hpu:1 (held
#                     there: hpu:0's later jobs do not run until it is
#                     released), through Stream.wait_event, Event.wait(s)
#                     and Event.wait(), eager and lazy; a long GEMM's
#                     product on hpu:1 is right on hpu:0 after the wait.
# "Held" streams: torch.ops.hpu_torch._hold_stream(device, id) issues on a
# stream a job blocked on a sync object until _release_stream(device,
# handle) (a test hook): what runs before what is then certain, no timing.
#
# Copyright (c) 2026 The hpu authors
import os
import sys
import time
import unittest

import torch

import hpu_torch  # noqa: F401
from hpu_torch import core, hpu

HPU = torch.device("hpu:0")
_ops = torch.ops.hpu_torch


class Held:
    """with Held(stream): the stream's later jobs wait until the block ends (or release())."""

    def __init__(self, stream):
        self.stream = stream
        self.handle = None

    def __enter__(self):
        self.handle = _ops._hold_stream(self.stream.device.index, self.stream.stream_id)
        return self

    def release(self):
        if self.handle is not None:
            _ops._release_stream(self.stream.device.index, self.handle)
            self.handle = None

    def __exit__(self, *exc):
        self.release()


class StreamCase(unittest.TestCase):
    def setUp(self):
        self.was_lazy = core.is_lazy()
        core.set_lazy(False)
        hpu.synchronize()

    def tearDown(self):
        hpu.set_stream(hpu.default_stream(HPU))
        hpu.set_device(0)
        core.set_lazy(self.was_lazy)
        hpu.synchronize()

    def producer_consumer(self, device, wait):
        """x (zeros) written on a held stream a, read into y on stream b: y's values."""
        n = 1 << 16
        x = torch.zeros(n, device=device)
        hpu.synchronize(device)
        a, b = hpu.Stream(device), hpu.Stream(device)
        self.assertNotEqual(a, b)
        with Held(a) as h:
            with hpu.stream(a):
                x.fill_(7.0)
                ev = a.record_event()
            with hpu.stream(b):
                if wait:
                    b.wait_event(ev)
                y = x.clone()
                done = b.record_event()
            self.assertFalse(a.query())
            self.assertFalse(ev.query())
            if wait:
                self.assertFalse(b.query(), "the consumer ran before the producer's event")
                self.assertFalse(done.query())
            else:
                # b does not wait for a: its copy ends while a is held.
                b.synchronize()
                self.assertTrue(done.query())
                self.assertFalse(a.query())
            h.release()
            b.synchronize()
            a.synchronize()
        self.assertTrue(ev.query() and done.query() and a.query() and b.query())
        self.assertEqual(x.cpu().unique().tolist(), [7.0])
        return y.cpu()


class TestStreamApi(StreamCase):
    def test_current_default_and_pool_streams(self):
        d = hpu.default_stream()
        self.assertEqual(d.stream_id, 0)
        self.assertEqual(d.device, HPU)
        self.assertEqual(hpu.current_stream(), d)
        self.assertIsInstance(d, torch.Stream)
        pool = [hpu.Stream() for _ in range(4)]
        self.assertEqual(sorted(s.stream_id for s in pool), [1, 2, 3, 4], "four pool streams, round robin")
        self.assertEqual(hpu.Stream(), pool[0], "the fifth comes round to the first")
        s = hpu.Stream(priority=-1)
        self.assertEqual(s.priority, -1)
        self.assertIn(s.stream_id, (1, 2, 3, 4))
        with hpu.stream(s) as cur:
            self.assertIs(cur, s)
            self.assertEqual(hpu.current_stream(), s)
            self.assertEqual(hpu.current_stream(HPU), s)
            with hpu.stream(d):
                self.assertEqual(hpu.current_stream(), d)
            self.assertEqual(hpu.current_stream(), s)
        self.assertEqual(hpu.current_stream(), d)
        with hpu.stream(None):
            self.assertEqual(hpu.current_stream(), d)
        hpu.set_stream(s)
        self.assertEqual(hpu.current_stream(), s)
        hpu.set_stream(d)
        self.assertEqual(hpu.current_stream(), d)
        self.assertEqual({hpu.Stream._of(0, 2), hpu.Stream._of(0, 2)}, {hpu.Stream._of(0, 2)})
        self.assertTrue(repr(s).startswith("<hpu_torch.hpu.Stream device=hpu:0 stream_id="))

    def test_empty_streams_and_events_are_complete(self):
        s = hpu.Stream()
        s.synchronize()
        self.assertTrue(s.query())
        e = hpu.Event()
        self.assertTrue(e.query())
        e.synchronize()
        self.assertIsNone(e.device)
        e.wait()  # never recorded: nothing to wait for
        e.record(s)
        self.assertEqual(e.device, HPU)
        self.assertTrue(e.query())


class TestStreamOrder(StreamCase):
    def test_ops_run_on_the_current_streams_queues(self):
        x = torch.arange(1000, dtype=torch.float32, device=HPU)
        y0 = torch.full((1000,), -1.0, device=HPU)  # written on s below
        s = hpu.Stream()
        s.wait_stream(hpu.current_stream())
        with Held(s) as h:
            with hpu.stream(s):
                y = x * 2 + 1
                torch.mul(x, 2, out=y0)
            self.assertFalse(s.query())
            # The default stream is not held: its ops and a read run, and
            # the held stream's write has not happened (an op that ignored
            # the current stream would have run on the default stream).
            z = (x - 1).cpu()
            old = y0.cpu()
            self.assertEqual(old.unique().tolist(), [-1.0], "an op on the held stream ran")
            self.assertTrue(hpu.default_stream().query())
            self.assertFalse(s.query())
            h.release()
        s.synchronize()
        self.assertTrue(s.query())
        torch.testing.assert_close(z, torch.arange(1000, dtype=torch.float32) - 1)
        torch.testing.assert_close(y.cpu(), torch.arange(1000, dtype=torch.float32) * 2 + 1)
        torch.testing.assert_close(y0.cpu(), torch.arange(1000, dtype=torch.float32) * 2)

    def test_wait_event_orders_producer_and_consumer(self):
        y = self.producer_consumer(HPU, wait=True)
        self.assertEqual(y.unique().tolist(), [7.0])

    def test_without_the_wait_the_consumer_reads_the_old_data(self):
        y = self.producer_consumer(HPU, wait=False)
        self.assertEqual(y.unique().tolist(), [0.0])

    def test_long_gemm_producer_and_consumer(self):
        torch.manual_seed(3)
        n = 768
        a_cpu, b_cpu = torch.randn(n, n), torch.randn(n, n)
        a, b = a_cpu.to(HPU), b_cpu.to(HPU)
        x = torch.zeros(n, n, device=HPU)
        prod, cons = hpu.Stream(), hpu.Stream()
        prod.wait_stream(hpu.current_stream())
        with hpu.stream(prod):
            for _ in range(3):  # a few hundred ms of MME work
                torch.mm(a, b, out=x)
            x.mul_(0.5)
            ev = hpu.Event()
            ev.record()
        with hpu.stream(cons):
            cons.wait_event(ev)
            y = x.clone()
            y.add_(1.0)
            got = y.cpu()
        want = (a_cpu @ b_cpu) * 0.5 + 1.0
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)

    def test_synchronize_waits_for_the_held_work(self):
        x = torch.ones(4096, device=HPU)
        s = hpu.Stream()
        s.wait_stream(hpu.current_stream())
        with Held(s) as h:
            with hpu.stream(s):
                x.add_(2.0)
                ev = hpu.Event()
                ev.record()
            self.assertFalse(ev.query())
            self.assertFalse(s.query())
            h.release()
            ev.synchronize()
            self.assertTrue(ev.query())
        with Held(s) as h:
            with hpu.stream(s):
                x.mul_(3.0)
            self.assertFalse(s.query())
            h.release()
            hpu.synchronize()  # the device: every stream
            self.assertTrue(s.query())
        self.assertEqual(x.cpu().unique().tolist(), [9.0])

    def test_wait_stream_and_default_stream_wait(self):
        x = torch.zeros(2048, device=HPU)
        s = hpu.Stream()
        s.wait_stream(hpu.current_stream())
        with Held(s) as h:
            with hpu.stream(s):
                x.fill_(5.0)
            hpu.current_stream().wait_stream(s)
            y = x + 1  # default stream, after s's fill
            self.assertFalse(hpu.default_stream().query())
            h.release()
        self.assertEqual(y.cpu().unique().tolist(), [6.0])

    def test_lazy_mode_steps_follow_their_streams(self):
        core.set_lazy(True)
        x = torch.full((4096,), 2.0, device=HPU)
        core.mark_step()
        s = hpu.Stream()
        s.wait_stream(hpu.current_stream())

        def steps(held):
            before = core.lazy_stats()["flushes"]
            with hpu.stream(s):
                y = x * 3  # recorded
                ev = s.record_event()  # runs the step on s, then records
            self.assertEqual(core.lazy_stats()["flushes"], before + 1)
            if held:
                self.assertFalse(ev.query())
            hpu.current_stream().wait_event(ev)
            z = y + 1  # recorded on the default stream
            core.mark_step()  # the step waits for the default stream, which waits for s
            if held:
                self.assertFalse(hpu.default_stream().query())
            return z

        steps(False)  # the steps' graphs are built (slow in a guest) before s is held
        with Held(s) as h:
            z = steps(True)
            h.release()
        self.assertEqual(z.cpu().unique().tolist(), [7.0])


class TestRecordStream(StreamCase):
    def test_a_block_used_on_another_stream_waits_for_its_work(self):
        hpu.synchronize()
        hpu.empty_cache()  # the pool streams' slabs hold only what this test makes
        home, other = hpu.Stream(), hpu.Stream()
        while other == home:
            other = hpu.Stream()
        n = (3 << 20) // 4 + 128  # a large-pool request: a fresh slab of home's
        with hpu.stream(home):
            # Without record_stream: the freed block is home's again at once.
            t = torch.ones(n, device=HPU)
            ptr = t.data_ptr()
            del t
            u = torch.empty(n, device=HPU)
            self.assertEqual(u.data_ptr(), ptr)
            del u
            t = torch.ones(n, device=HPU)
            self.assertEqual(t.data_ptr(), ptr)
        other.wait_stream(home)
        with Held(other) as h:
            with hpu.stream(other):
                t.add_(1.0)  # held: other still uses t's block
            t.record_stream(other)
            with hpu.stream(home):
                del t
                u = torch.empty(n, device=HPU)
                self.assertNotEqual(u.data_ptr(), ptr, "a block other's held work uses was handed out")
                h.release()
            other.synchronize()
            with hpu.stream(home):
                v = torch.empty(n, device=HPU)
                self.assertEqual(v.data_ptr(), ptr, "the block did not come back once other's work ended")
        del u, v
        hpu.synchronize()
        hpu.empty_cache()

    def test_a_block_freed_on_another_stream_waits_for_that_streams_work(self):
        # As autograd does on PyTorch 1.13: made on a side stream, read and
        # freed while the default stream is current.
        hpu.synchronize()
        hpu.empty_cache()
        side = hpu.Stream()
        n = (3 << 20) // 4 + 128  # a large-pool request: a fresh slab of side's
        with hpu.stream(side):
            t = torch.ones(n, device=HPU)
            ptr = t.data_ptr()
        hpu.default_stream(HPU).wait_stream(side)
        with Held(hpu.default_stream(HPU)) as h:
            t.add_(1.0)  # on the held default stream
            del t  # freed with the default stream current
            with hpu.stream(side):
                u = torch.empty(n, device=HPU)
                self.assertNotEqual(u.data_ptr(), ptr, "a block the default stream's held work uses was handed out")
            h.release()
        hpu.synchronize()
        with hpu.stream(side):
            v = torch.empty(n, device=HPU)
            self.assertEqual(v.data_ptr(), ptr, "the block did not come back once the default stream's work ended")
        del u, v
        hpu.synchronize()
        hpu.empty_cache()

    def test_record_stream_of_another_device_is_refused(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        t = torch.ones(16, device=HPU)
        with self.assertRaisesRegex(RuntimeError, "record_stream"):
            t.record_stream(hpu.Stream("hpu:1"))


class TestEventTiming(StreamCase):
    def test_elapsed_time_lies_between_the_hosts_bounds(self):
        s = hpu.Stream()
        start, end = hpu.Event(enable_timing=True), hpu.Event(enable_timing=True)
        t0 = time.monotonic_ns()
        start.record(s)  # its marker signals after t0
        start.synchronize()
        t1 = time.monotonic_ns()  # ... and before t1
        with Held(s) as h:
            end.record(s)  # its marker follows the held job
            self.assertFalse(end.query())
            with self.assertRaisesRegex(RuntimeError, "completed"):
                start.elapsed_time(end)
            t2 = time.monotonic_ns()
            h.release()  # the held job, then end's marker, signal after t2
        end.synchronize()
        t3 = time.monotonic_ns()  # ... and before t3
        ms = start.elapsed_time(end)
        print(f"\n  elapsed_time {ms:.3f} ms; host bounds {(t2 - t1) / 1e6:.3f} .. {(t3 - t0) / 1e6:.3f} ms",
              file=sys.stderr)
        self.assertGreater(ms, 0.0)
        self.assertGreaterEqual(ms * 1e6, t2 - t1)
        self.assertLessEqual(ms * 1e6, t3 - t0)

    def test_elapsed_time_errors(self):
        a, b = hpu.Event(), hpu.Event()
        a.record()
        b.record()
        with self.assertRaisesRegex(RuntimeError, "enable_timing"):
            a.elapsed_time(b)
        c, d = hpu.Event(enable_timing=True), hpu.Event(enable_timing=True)
        with self.assertRaisesRegex(RuntimeError, "recorded"):
            c.elapsed_time(d)
        with self.assertRaises(ValueError):
            hpu.Event(interprocess=True)


class TestStreamFailures(StreamCase):
    """A job failed on the device (the driver's DMA bus error injection, as test_device.py's)."""

    def tearDown(self):
        # What a failed assertion left unreported must not fail the next tests.
        try:
            hpu.synchronize()
        except RuntimeError:
            pass
        super().tearDown()

    def arm(self, stream):
        """The next job on stream's DMA engine fails (stream s: DMA engine s modulo the engines)."""
        from test_device import debugfs_dir
        d = debugfs_dir(stream.device.index)
        if os.geteuid() != 0 or d is None:
            self.skipTest("needs root and the driver's debugfs fault injection")
        path = os.path.join(d, "inject_dma_fail")

        def disarm():  # if it was not used
            with open(path, "w") as f:
                f.write("0\n")
        self.addCleanup(disarm)
        with open(path, "w") as f:
            f.write(f"{1 << stream.stream_id}\n")  # an engine mask

    def test_a_failed_producer_is_reported_to_the_waiting_stream(self):
        x = torch.zeros(4096, device=HPU)
        hpu.synchronize()
        s = hpu.Stream()
        self.arm(s)
        with hpu.stream(s):
            x.fill_(7.0)  # a DMA memset on s's engine: fails
            ev = s.record_event()
        hpu.current_stream().wait_event(ev)
        # The default stream's read follows the failed job: its result is
        # garbage, and the default stream says so, naming the job.
        with self.assertRaisesRegex(RuntimeError, r"HPU 0: job 'fill \(DMA memset\)' \(an event") as cm:
            x.cpu()
        print(f"\n  {str(cm.exception).splitlines()[0][:300]}", file=sys.stderr)
        self.assertRegex(str(cm.exception), "dma-bus")
        # The producer's own stream reports it too.
        with self.assertRaisesRegex(RuntimeError, r"job 'fill \(DMA memset\)'"):
            s.synchronize()
        hpu.synchronize()
        self.assertEqual(x.cpu().unique().tolist(), [0.0])

    def test_a_timing_event_raises_for_the_failed_job_it_follows(self):
        x = torch.zeros(4096, device=HPU)
        hpu.synchronize()
        s = hpu.Stream()
        self.arm(s)
        ev = hpu.Event(enable_timing=True)
        with hpu.stream(s):
            x.fill_(7.0)  # fails; the event's marker after it does not
            ev.record()
        with self.assertRaisesRegex(RuntimeError, r"HPU 0: job 'fill \(DMA memset\)'") as cm:
            ev.synchronize()
        self.assertRegex(str(cm.exception), "dma-bus")
        self.assertTrue(ev.query())
        s.synchronize()  # reported once: the stream's entry was retired
        hpu.synchronize()

    def test_a_lazy_step_stays_recorded_when_its_flush_raises_an_older_failure(self):
        # A flush makes room on its stream's pending list (64 entries)
        # first; that raises the failure of the list's oldest job. The
        # recorded step is then kept for the next flush, not dropped.
        x = torch.zeros(4096, device=HPU)
        y = torch.zeros(4096, device=HPU)
        u = torch.arange(4096.0, device=HPU)
        v = torch.full((4096,), -1.0, device=HPU)
        s = hpu.Stream()
        hpu.synchronize()
        s.synchronize()  # its pending list is empty
        self.arm(s)
        j0 = _ops.jobs(0)
        with hpu.stream(s):
            x.fill_(7.0)  # one job, a DMA memset: fails, the oldest pending entry of s
            n = 0
            while _ops.jobs(0) - j0 < 64:
                y.fill_(float(n))  # one DMA memset each
                n += 1
            self.assertEqual(_ops.jobs(0) - j0, 64, "s's pending list is not exactly full")
            core.set_lazy(True)
            torch.mul(u, 2, out=v)  # recorded
            with self.assertRaisesRegex(RuntimeError, r"HPU 0: job 'fill \(DMA memset\)'"):
                core.mark_step()  # the flush retires the failed fill first
            core.mark_step()  # the recorded step runs now
            s.synchronize()
        core.set_lazy(False)
        self.assertTrue(torch.equal(v.cpu(), torch.arange(4096.0) * 2), "the recorded step was dropped")
        self.assertEqual(y.cpu().unique().tolist(), [62.0])

    def test_a_failed_producer_on_hpu1_is_reported_to_the_waiting_hpu0_stream(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        d1 = torch.device("hpu:1")
        x1 = torch.zeros(4096, device=d1)
        y0 = torch.zeros(4096, device=HPU)
        hpu.synchronize(d1)
        s1 = hpu.Stream(d1)
        self.arm(s1)
        with hpu.stream(s1):
            x1.fill_(7.0)  # fails on hpu:1
            ev = s1.record_event()
        z0 = torch.arange(4096.0, device=HPU)  # made before: hpu:1's failure must not drop it
        hpu.synchronize(HPU)
        hpu.current_stream(HPU).wait_event(ev)
        y0.add_(1.0)  # follows the failed job: hpu:0's stream reports it
        with self.assertRaisesRegex(RuntimeError, r"HPU 0: HPU 1's job 'fill \(DMA memset\)' \(an event") as cm:
            y0.cpu()
        # hpu:1's failure is not hpu:0's: hpu:0 is not reset, and its own
        # (unrelated) error events are not appended.
        self.assertNotIn("the device was reset", str(cm.exception))
        self.assertNotIn("[device:", str(cm.exception))
        with self.assertRaisesRegex(RuntimeError, r"HPU 1: job 'fill \(DMA memset\)'"):
            s1.synchronize()
        hpu.synchronize(d1)
        hpu.synchronize(HPU)
        self.assertTrue(torch.equal(z0.cpu(), torch.arange(4096.0)), "hpu:0's tensors were dropped")
        self.assertEqual(y0.cpu().unique().tolist(), [1.0])
        self.assertTrue(torch.equal((z0 + 1).cpu(), torch.arange(4096.0) + 1))


class TestStreamErrors(StreamCase):
    def test_bad_stream_ids_are_refused(self):
        with self.assertRaisesRegex(RuntimeError, "no stream 9"):
            _ops.exchange_stream(0, 9)
        with self.assertRaisesRegex(RuntimeError, "no stream"):
            _ops.query_stream(0, -1)
        self.assertEqual(hpu.current_stream().stream_id, 0)

    def test_an_event_of_another_hpu_is_not_recorded_there(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        ev = hpu.Event()
        x = torch.ones(8, device=HPU)
        x.add_(1)
        ev.record()  # on hpu:0's current stream
        s1 = hpu.Stream("hpu:1")
        with self.assertRaisesRegex(RuntimeError, "device index"):
            ev.record(s1)
        ev.synchronize()
        self.assertTrue(ev.query())


class TestSecondHpuStreams(StreamCase):
    def test_producer_and_consumer_on_hpu1(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        d1 = torch.device("hpu:1")
        s = hpu.Stream(d1)
        self.assertEqual(s.device, d1)
        with hpu.stream(s):
            self.assertEqual(hpu.current_device(), 1)
            self.assertEqual(hpu.current_stream(), s)
            self.assertEqual(hpu.current_stream(0), hpu.default_stream(0))
        self.assertEqual(hpu.current_device(), 0)
        y = self.producer_consumer(d1, wait=True)
        self.assertEqual(y.unique().tolist(), [7.0])
        self.assertEqual(y.device, torch.device("cpu"))


class TestCrossHpuWait(StreamCase):
    """A stream of one HPU waits for an event of another (the fence crosses as a sync_file)."""

    def setUp(self):
        if hpu.device_count() < 2:  # before StreamCase's setUp: no tearDown follows a skip
            self.skipTest("one HPU")
        super().setUp()
        self.d1 = torch.device("hpu:1")
        hpu.synchronize(self.d1)

    def tearDown(self):
        core.set_lazy(False)  # before hpu:1's synchronize (super() restores the mode)
        hpu.synchronize(self.d1)
        super().tearDown()

    def check_wait(self, wait):
        """hpu:1's held stream writes x1; hpu:0's default stream waits for its event, then writes y0."""
        n = 1 << 16
        x1 = torch.zeros(n, device=self.d1)
        y0 = torch.zeros(n, device=HPU)
        hpu.synchronize(self.d1)
        hpu.synchronize(HPU)
        s1 = hpu.Stream(self.d1)
        s0 = hpu.current_stream(HPU)
        with Held(s1) as h:
            with hpu.stream(s1):
                x1.fill_(7.0)
                ev = s1.record_event()
            self.assertEqual(ev.device, self.d1)
            wait(ev, s0)
            y0.fill_(3.0)  # on hpu:0's default stream, after the wait
            done = s0.record_event()
            self.assertFalse(ev.query())
            # hpu:0's jobs wait in the driver for hpu:1's held job.
            self.assertFalse(s0.query(), "hpu:0 ran before hpu:1's event")
            self.assertFalse(done.query())
            self.assertTrue(hpu.default_stream(self.d1).query(), "hpu:1's other streams are not held")
            h.release()
            s0.synchronize()
        self.assertTrue(ev.query(), "hpu:0's stream ended before the event it waited for")
        self.assertTrue(done.query())
        self.assertEqual(y0.cpu().unique().tolist(), [3.0])
        s1.synchronize()
        # The value produced on hpu:1, copied to hpu:0 after the wait.
        z0 = x1.to(HPU)
        self.assertEqual(z0.device, HPU)
        self.assertEqual(z0.cpu().unique().tolist(), [7.0])

    def test_stream_wait_event(self):
        self.check_wait(lambda ev, s: s.wait_event(ev))

    def test_event_wait(self):
        self.check_wait(lambda ev, s: ev.wait(s))

    def test_event_wait_on_the_current_stream(self):
        self.check_wait(lambda ev, s: ev.wait())

    def test_after_a_long_op_the_value_is_right(self):
        # A long GEMM on hpu:1's side stream, its event waited for on hpu:0,
        # then hpu:0 copies the product (through the host) and uses it.
        torch.manual_seed(5)
        n = 768
        a_cpu, b_cpu = torch.randn(n, n), torch.randn(n, n)
        a1, b1 = a_cpu.to(self.d1), b_cpu.to(self.d1)
        hpu.synchronize(self.d1)
        s1 = hpu.Stream(self.d1)
        c1 = torch.zeros(n, n, device=self.d1)
        s1.wait_stream(hpu.current_stream(self.d1))
        with hpu.stream(s1):
            for _ in range(3):  # a few hundred ms of MME work
                torch.mm(a1, b1, out=c1)
            c1.mul_(0.5)
            ev = s1.record_event()
        hpu.current_stream(HPU).wait_event(ev)
        marker = torch.ones(4, device=HPU) * 2  # after the wait on hpu:0
        hpu.current_stream(HPU).synchronize()
        self.assertTrue(ev.query(), "hpu:0's stream ended before hpu:1's event")
        c0 = c1.to(HPU) + marker.sum()
        want = (a_cpu @ b_cpu) * 0.5 + 8.0
        torch.testing.assert_close(c0.cpu(), want, rtol=1e-4, atol=1e-3)

    def test_lazy_mode(self):
        core.set_lazy(True)
        self.check_wait(lambda ev, s: s.wait_event(ev))

    def test_an_event_never_recorded_or_ended_is_no_wait(self):
        ev = hpu.Event()
        hpu.current_stream(HPU).wait_event(ev)  # never recorded
        x1 = torch.ones(8, device=self.d1)
        x1.add_(1)
        ev.record(hpu.current_stream(self.d1))
        ev.synchronize()
        j = _ops.jobs(0)
        hpu.current_stream(HPU).wait_event(ev)  # its job ended well: no marker
        self.assertEqual(_ops.jobs(0), j)


if __name__ == "__main__":
    unittest.main(verbosity=2)

#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# run-bench.py's requirement checks on made-up figures (ctest run-bench-torch):
# torch_errors() reports a lazy step slower than eager beyond LAZY_NOISE and
# any fallback in a model's step, and nothing for figures that meet them or
# are missing.
#
# Copyright (c) 2026 The hpu authors

import importlib.util
import os
import unittest

_spec = importlib.util.spec_from_file_location("run_bench", os.path.join(os.path.dirname(__file__), "run-bench.py"))
run_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_bench)


def figures(**over):
    g = {}
    for m, _ in run_bench.TORCH_MODELS:
        g.update({f"torch_{m}_cpu_step_ms": 100.0, f"torch_{m}_eager_step_ms": 50.0,
                  f"torch_{m}_lazy_step_ms": 40.0, f"torch_{m}_eager_fallbacks": 0.0,
                  f"torch_{m}_lazy_fallbacks": 0.0})
    g.update(over)
    return g


class TestTorchErrors(unittest.TestCase):
    def test_requirements_met(self):
        self.assertEqual(run_bench.torch_errors(figures()), [])

    def test_no_figures(self):
        self.assertEqual(run_bench.torch_errors({}), [])

    def test_lazy_within_the_noise_margin(self):
        self.assertEqual(run_bench.torch_errors(figures(torch_mlp_lazy_step_ms=50.0 / 0.81)), [])
        self.assertEqual(run_bench.torch_errors(figures(torch_cnn_lazy_step_ms=50.0 / 0.9)), [], "10% of noise")

    def test_lazy_slower_than_eager(self):
        e = run_bench.torch_errors(figures(torch_cnn_lazy_step_ms=64.0))
        self.assertEqual(len(e), 1)
        self.assertRegex(e[0], r"^torch cnn: lazy mode is slower than eager \(64 ms/step against 50, "
                               r"eager/lazy 0\.781 < 0\.8\)$")

    def test_fallbacks(self):
        e = run_bench.torch_errors(figures(torch_linear_eager_fallbacks=2.0, torch_mlp_lazy_fallbacks=0.5))
        self.assertEqual(e, ["linear_eager: 2 op(s) per step run on the CPU by the fallback (torch_bench.py)",
                             "mlp_lazy: 0.5 op(s) per step run on the CPU by the fallback (torch_bench.py)"])

    def test_print_torch_returns_them(self):
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            e = run_bench.print_torch(figures(torch_linear_lazy_step_ms=70.0))
        self.assertEqual(len(e), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)

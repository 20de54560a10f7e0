#!/usr/bin/env python3
"""Tests of check_layers.py's include-cycle finder (include_cycles, module_of)."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_layers  # noqa: E402


class ModuleOfTest(unittest.TestCase):
    def test_header_source_and_internal_header_are_one_module(self):
        for rel in ("engine/hlo/evaluator.h", "engine/hlo/evaluator.cpp",
                    "engine/hlo/evaluator_internal.h"):
            self.assertEqual(check_layers.module_of(rel), "engine/hlo/evaluator")

    def test_a_source_without_its_header_is_its_own_module(self):
        self.assertEqual(check_layers.module_of("engine/hlo/eval_dot.cpp"), "engine/hlo/eval_dot")


class IncludeCyclesTest(unittest.TestCase):
    def test_a_header_cycle_through_a_source_is_found(self):
        # The cycle the issue names: ir.cpp includes from_graph.h, which includes ir.h.
        cycles = check_layers.include_cycles({
            "e/ir.h": [],
            "e/ir.cpp": ["e/ir.h", "e/from_graph.h"],
            "e/from_graph.h": ["e/ir.h"],
            "e/from_graph.cpp": ["e/from_graph.h"],
        })
        self.assertEqual(cycles, [[("e/from_graph", "e/from_graph.h", "e/ir.h"),
                                   ("e/ir", "e/ir.cpp", "e/from_graph.h")]])

    def test_a_longer_cycle_is_reported_in_order(self):
        cycles = check_layers.include_cycles({
            "e/a.h": ["e/b.h"],
            "e/b.h": ["e/c.h"],
            "e/c.cpp": ["e/a.h"],
            "e/d.h": ["e/a.h"],  # leads into the cycle, not part of it
        })
        self.assertEqual(len(cycles), 1)
        self.assertEqual([m for m, _, _ in cycles[0]], ["e/a", "e/b", "e/c"])

    def test_a_dag_and_an_internal_header_have_no_cycle(self):
        self.assertEqual(check_layers.include_cycles({
            "e/evaluator.h": ["e/array.h"],
            "e/evaluator_internal.h": ["e/evaluator.h"],
            "e/evaluator.cpp": ["e/evaluator_internal.h"],
            "e/eval_dot.cpp": ["e/evaluator_internal.h", "e/array.h"],
            "e/array.cpp": ["e/array.h"],
        }), [])

    def test_two_separate_cycles_are_both_found(self):
        cycles = check_layers.include_cycles({
            "e/a.h": ["e/b.h"], "e/b.cpp": ["e/a.h"],
            "e/x.h": ["e/y.h"], "e/y.cpp": ["e/x.h"],
        })
        self.assertEqual([[m for m, _, _ in c] for c in cycles], [["e/a", "e/b"], ["e/x", "e/y"]])


if __name__ == "__main__":
    unittest.main()

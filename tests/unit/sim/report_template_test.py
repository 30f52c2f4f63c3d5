#!/usr/bin/python3
"""Checks of scripts/report_template.py and of SCALING.md's template with it: the report renders
with or without the real-trace sections. Run: /usr/bin/python3
tests/unit/sim/report_template_test.py (ctest: sim_report_template).
"""
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import report_template as rt  # noqa: E402

TEMPLATE = os.path.join(ROOT, "scripts", "templates", "SCALING.md.in")


class Blocks(unittest.TestCase):
    def test_blocks_keep_their_text_only_with_their_name(self):
        text = "a [% if x %]x=${x}[% if y %], y=${y}[% end %][% end %] b"
        self.assertEqual(rt.render(text, {"x": "1", "y": "2"}), "a x=1, y=2 b")
        self.assertEqual(rt.render(text, {"x": "1"}), "a x=1 b")
        self.assertEqual(rt.render(text, {"y": "2"}), "a  b")

    def test_a_name_outside_every_block_must_have_a_value(self):
        with self.assertRaises(KeyError):
            rt.render("${x}", {})


class ScalingTemplate(unittest.TestCase):
    """The report leaves the population and held-out values out when the trace data is not there
    (scaling_report.py without the Azure Functions trace): the template must render then too."""

    @classmethod
    def setUpClass(cls):
        with open(TEMPLATE, encoding="utf-8") as f:
            cls.template = f.read()
        cls.names = (set(re.findall(r"\$\{(\w+)\}", cls.template))
                     | set(re.findall(r"\[% if (\w+) %\]", cls.template)))

    def values(self, without=()):
        return {n: "V" for n in self.names if not n.startswith(tuple(without))}

    def test_renders_with_every_section(self):
        out = rt.render(self.template, self.values())
        self.assertIn("held-out function windows", out)
        self.assertNotIn("[%", out)

    def test_renders_without_the_held_out_windows(self):
        out = rt.render(self.template, self.values(without=("held_",)))
        self.assertIn("the population's functions", out)
        self.assertNotIn("held-out function windows", out)

    def test_renders_without_the_real_trace(self):
        out = rt.render(self.template, self.values(without=("pop_", "held_")))
        self.assertNotIn("the population's functions", out)
        self.assertNotIn("[%", out)


if __name__ == "__main__":
    unittest.main()

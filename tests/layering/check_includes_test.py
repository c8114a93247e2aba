#!/usr/bin/env python3
"""scripts/check_includes.py on small trees: it must fail on a layer-skipping include, a
reverse include and a reverse link, name the file and line, and pass a tree that keeps the
arrows."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

CHECKER = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check_includes.py"

LINKS = """traces:
comm: traces
emulator: traces comm
collectives: traces comm emulator
collectives/mpi: traces comm collectives
model: traces emulator collectives
"""


class CheckIncludesTest(unittest.TestCase):
    def run_checker(self, files, links=LINKS):
        with tempfile.TemporaryDirectory() as root:
            root = pathlib.Path(root)
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            (root / "links.txt").write_text(links)
            return subprocess.run([sys.executable, str(CHECKER), "--root", str(root),
                                   "--links", str(root / "links.txt")],
                                  capture_output=True, text=True)

    def test_a_tree_that_keeps_the_arrows_passes(self):
        result = self.run_checker({
            "traces/event.hpp": "#pragma once\n#include <vector>\n",
            "comm/buffer.hpp": '#include "traces/event.hpp"\n#include "comm/other.hpp"\n',
            "model/layer.cpp": '#include "collectives/communicator.hpp"\n#include "Eigen/Dense"\n',
            "collectives/mpi/mpi_run.hpp": '#include "comm/run_report.hpp"\n',
        })
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("includes follow the module links", result.stdout)

    def test_a_layer_skipping_include_fails_naming_file_and_line(self):
        # model links collectives, not comm: comm's headers come only through a PUBLIC link.
        result = self.run_checker({"model/layer.cpp": '#include <vector>\n\n#include "comm/buffer.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("model/layer.cpp:3: model includes comm/buffer.hpp of comm, which its target "
                      "does not link (it links: collectives, emulator, traces)", result.stdout)

    def test_a_reverse_include_fails(self):
        result = self.run_checker({"emulator/fabric.hpp": '  #  include "collectives/cluster.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("emulator/fabric.hpp:1: emulator includes collectives/cluster.hpp", result.stdout)

    def test_a_submodule_is_checked_against_its_own_links(self):
        # collectives/mpi does not link the emulator: none of its headers, not even one that
        # was once a listed exception (the run report's, before it moved to comm/).
        result = self.run_checker({"collectives/mpi/backend.cpp": '#include "emulator/fabric.hpp"\n',
                                   "collectives/mpi/mpi_run.hpp": '#include "emulator/report.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("collectives/mpi/backend.cpp:1: collectives/mpi includes emulator/fabric.hpp",
                      result.stdout)
        self.assertIn("collectives/mpi/mpi_run.hpp:1: collectives/mpi includes emulator/report.hpp",
                      result.stdout)

    def test_a_reverse_link_fails(self):
        result = self.run_checker({"traces/event.hpp": "\n"}, links=LINKS + "comm: traces model\n")
        self.assertEqual(result.returncode, 1)
        self.assertIn("comm links model: the layers are", result.stdout)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""size_report.py on a hand-written GNU ld map: sums per part, keeps .bss
apart, ignores discarded sections and other objects, fails over budget."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MAP = """Discarded input sections

 .text._Zdiscarded
                0x0000000000000000       0x99 rt/CMakeFiles/epctx_core_obj.dir/src/core/status.cc.o

Linker script and memory map

.text           0x0000000000001000     0x2000
 .text          0x0000000000001000       0x10 /usr/lib/crt1.o
 .text._ZN5epctx6StatusC2Ev
                0x0000000000001010      0x100 rt/CMakeFiles/epctx_core_obj.dir/src/core/status.cc.o
                0x0000000000001010                epctx::Status::Status()
 .text._ZN5epctx7kernels3AddEv
                0x0000000000001110      0x200 rt/CMakeFiles/epctx_core_obj.dir/src/kernels/binary.cc.o
 .text.vnpu     0x0000000000001310       0x40 hal/drivers/vnpu/CMakeFiles/epctx_vnpu_obj.dir/src/vnpu_driver.cc.o
 .text          0x0000000000001350       0x30 rt/CMakeFiles/epctx_core_obj.dir/src/trust/verifier.cc.o
 .text          0x0000000000001380       0x50 /usr/lib/libmbedcrypto.a(sha256.o)
.rodata         0x0000000000004000      0x100
 .rodata.str1.1
                0x0000000000004000        0x8 rt/CMakeFiles/epctx_core_obj.dir/src/core/status.cc.o
.bss            0x0000000000005000      0x100
 .bss.g         0x0000000000005000       0x20 rt/CMakeFiles/epctx_core_obj.dir/src/kernels/binary.cc.o
.debug_info     0x0000000000000000      0x999
 .debug_info    0x0000000000000000      0x999 rt/CMakeFiles/epctx_core_obj.dir/src/core/status.cc.o
"""


def run(budget):
    with tempfile.TemporaryDirectory() as d:
        m = os.path.join(d, "app.map")
        b = os.path.join(d, "budget.txt")
        open(m, "w").write(MAP)
        open(b, "w").write(budget)
        p = subprocess.run([sys.executable, os.path.join(HERE, "size_report.py"), "--target", "t",
                            "--map", m, "--budget", b], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr


def main():
    rc, out, err = run("t core 264\nt kernels 512\nother core 1\n")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]}
    assert rc == 0, (rc, out, err)
    assert rows["core"][:1] == ["264"], out       # 0x100 text + 0x8 rodata; discarded and debug not counted
    assert rows["kernels"] == ["512", "512", "32"], out  # .bss apart
    assert rows["vnpu"][0] == "64" and rows["trust"][0] == "48", out
    assert rows["mbedcrypto"][0] == "80", out
    assert rows["epctx"][0] == str(264 + 512 + 64 + 48), out
    rc, out, err = run("t core 263\n")
    assert rc == 1 and "t core: 264 bytes > budget 263" in err, (rc, err)
    rc, out, err = run("x core 1\n")
    assert rc == 1 and "no lines for target t" in err, (rc, err)
    print("test_size_report: 3 cases passed")


if __name__ == "__main__":
    main()

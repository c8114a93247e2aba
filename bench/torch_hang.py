"""The time from a hang to ranklab's report: two ranks that both send first, rank 1 the last to
block (one second after rank 0), which writes the wall-clock time at which it blocks to
argv[1]. bench/compare's torchrun section subtracts it from the moment `ranklab torchrun`
exits, its report printed (Gloo waits out its 30-minute timeout on the same script)."""
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    time.sleep(1.0)
    with open(sys.argv[1], "w") as out:
        out.write(repr(time.time()))
dist.send(torch.ones(16), dst=1 - rank)

"""ranklab's torch.distributed backend: run an unmodified PyTorch script on ranklab's
emulated fabric with `ranklab torchrun`, which starts each process through
`python -m ranklab_torch.launch`."""

from .process_group import RanklabProcessGroup, ReleasedError

__all__ = ["RanklabProcessGroup", "ReleasedError"]

"""Where the script made a call: the innermost frame outside torch, the bridge and Python's
own machinery, so that ranklab's reports name the user's line."""

import os
import sys

import torch

_SKIPPED = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep
    for path in (torch.__file__, __file__, os.__file__)
)


def _is_users(filename):
    if filename.startswith("<"):  # <frozen runpy>, <string>: Python's own
        return False
    return not os.path.abspath(filename).startswith(_SKIPPED)


def user_stack(limit=16):
    """The script's frames, innermost first, as [file, line, function] lists."""
    frames = []
    frame = sys._getframe(1)
    while frame is not None and len(frames) < limit:
        code = frame.f_code
        if _is_users(code.co_filename):
            frames.append([code.co_filename, frame.f_lineno, code.co_name])
        frame = frame.f_back
    return frames

"""A drawing process: reads pickled figures from stdin, writes their files, answers on stdout.

Drawing a figure (layout, then a rendering per format) is single-threaded Python that
costs a study seconds while the simulation cores sit idle, so `hmsim.plotting` hands
figures to a few of these. A separate interpreter started with `-m`, not multiprocessing:
multiprocessing's spawn would re-run the user's own script in the child.

Each message either way: an 8-byte little-endian length, then a pickle. A job is
(figure bytes, rcParams, output directory, name, formats); the answer is (None, the figure's facts
for `hmsim.plotting.DRAWN`) or (an error's text, None).
"""

from __future__ import annotations

import pickle
import signal
import struct
import sys
from typing import BinaryIO

_LEN = struct.Struct("<Q")


def send(stream: BinaryIO, obj: object) -> None:
    data = pickle.dumps(obj)
    stream.write(_LEN.pack(len(data)))
    stream.write(data)
    stream.flush()


def receive(stream: BinaryIO) -> object:
    """The next message, or EOFError when the other side has closed the pipe."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        raise EOFError
    n = _LEN.unpack(head)[0]
    data = stream.read(n)
    if len(data) < n:
        raise EOFError
    return pickle.loads(data)


def main() -> None:
    # A Ctrl-C reaches the whole process group; the parent decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    from hmsim.gc_policy import collect_less
    from hmsim.plotting import write_figure_files

    collect_less()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            blob, rc, out_dir, name, formats = receive(stdin)
        except EOFError:
            return
        try:
            fig = pickle.loads(blob)
            with matplotlib.rc_context(rc):
                facts = write_figure_files(fig, Path(out_dir), name, formats)
            send(stdout, (None, facts))
        except Exception as e:  # the parent raises it where the figure was saved
            send(stdout, (f"{type(e).__name__}: {e}", None))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""timed_run.py RSS_FILE TIMELINE_FILE COMMAND...: runs COMMAND with its stdout and stderr merged and
passed through unchanged, and records (a) the peak RSS of COMMAND's own process in KiB (its VmHWM,
sampled every 10 ms until it exits; unlike /usr/bin/time's, not the largest of its children, such as the
`kubelet --version` preflight runs) into RSS_FILE, and (b) each output line with the seconds since the
start into TIMELINE_FILE, so that a run shows where its time went. Exits with COMMAND's status."""

import os
import subprocess
import sys
import threading
import time


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rss_file, timeline_file, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    start = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peak = [0]

    def sample():
        status = f"/proc/{child.pid}/status"
        while child.poll() is None:
            try:
                with open(status) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            peak[0] = max(peak[0], int(line.split()[1]))
                            break
            except OSError:
                break
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = sys.stdout.buffer
    with open(timeline_file, "w") as timeline:
        for raw in child.stdout:
            out.write(raw)
            out.flush()
            timeline.write(f"{time.monotonic() - start:8.3f} {raw.decode(errors='replace')}")
    code = child.wait()
    sampler.join()
    with open(rss_file, "w") as f:
        f.write(f"{peak[0]}\n")
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()

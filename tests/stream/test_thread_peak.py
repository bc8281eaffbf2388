"""ThreadPeak, which the API load test relies on: threads held while it samples raise its
median and its peak; the count it starts from is its first sample."""

from __future__ import annotations

import os
import subprocess
import threading

from polling import wait_for

from spraycv.stream.loadgen import ThreadPeak, thread_count

HELD = 12


def test_threads_held_while_sampling_raise_the_median_and_the_peak() -> None:
    release = threading.Event()
    before = thread_count(os.getpid())
    with ThreadPeak(os.getpid()) as threads:
        held = [threading.Thread(target=release.wait, daemon=True) for _ in range(HELD)]
        for t in held:
            t.start()
        first = len(threads.samples)
        wait_for(lambda: len(threads.samples) >= first + 40, 30, "samples while held")
        release.set()
        for t in held:
            t.join()
    # the sampler itself is one thread; the held ones are the rest of the rise
    assert threads.peak >= before + HELD
    assert threads.median >= before + HELD


def test_a_process_at_rest_keeps_its_count() -> None:
    # a child of its own: this test process may hold threads of earlier tests that are
    # still winding down, and its count would move under the sampler
    child = subprocess.Popen(["sleep", "60"])
    try:
        before = thread_count(child.pid)
        with ThreadPeak(child.pid) as threads:
            wait_for(lambda: len(threads.samples) >= 20, 30, "samples")
    finally:
        child.kill()
        child.wait()
    assert threads.samples[0] == before == 1
    assert threads.median == threads.peak == before

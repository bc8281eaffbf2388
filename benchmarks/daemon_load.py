"""Daemon under load: N live 640x480 MJPEG cameras (ffmpeg) at F fps for M minutes.

Starts N real ffmpeg MJPEG-over-HTTP servers on 127.0.0.1 from the bundled sample video,
runs `spraycv daemon` as its own process on them, samples its metrics and resident memory
every `--sample-s` seconds, stops it with SIGTERM, and prints per source: frames read,
inferred per second and dropped; the p95 frame-to-measurement latency (capture -> stored
measurement, from the database); resident memory at start, middle and end; and whether
the stored frames equal the frames inferred.

With `--idle K` the last K cameras show nozzles that do not spray (a still rendered frame
of the held-out no-spray look), and `--idle-search-every-s` sets how often such a camera's
frames are searched, tiled and turned (spraycv.stream.idle; 0: every frame).

Usage: python benchmarks/daemon_load.py [--sources 8] [--fps 15] [--minutes 10]
       [--backend onnx|pytorch] [--threads 1] [--max-batch 2] [--idle 0]
       [--idle-search-every-s 10]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import cv2
import yaml

from spraycv.paths import REPO_ROOT as REPO
from spraycv.paths import SAMPLES_DIR, SHIPPED_CHECKPOINT, SHIPPED_MODEL
from spraycv.stream.store import StoreReader

# The ffmpeg test camera (and its free-port helper) live with the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from ffmpeg_camera import FfmpegMjpegServer, free_port


def api(port: int, path: str) -> object:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return json.loads(response.read())


def rss_mb(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * 4096 / 2**20


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc, clock ticks of 1/100 s)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100.0


def idle_video(work: Path, fps: float) -> Path:
    """A 10 s video of one still 640 x 480 frame of nozzles that do not spray."""
    from spraycv.config.render import RenderConfig
    from spraycv.data.synth import render_sample

    look = yaml.safe_load((REPO / "configs/render/heldout_nospray.yaml").read_text())
    frame = render_sample(0, size=640, height=480, config=RenderConfig.model_validate(look))
    still, video = work / "idle.png", work / "idle.mp4"
    cv2.imwrite(str(still), frame.image)
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-loop", "1", "-i", str(still), "-t", "10",
         "-r", f"{fps:g}", "-pix_fmt", "yuv420p", str(video)],
        check=True,
    )  # fmt: skip
    return video


def weights_for(backend: str) -> Path:
    """The shipped checkpoint (PyTorch) or its shipped FP32 ONNX export."""
    return SHIPPED_CHECKPOINT if backend == "pytorch" else SHIPPED_MODEL


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--fps", type=float, default=15.0)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--backend", choices=["onnx", "pytorch"], default="onnx")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-batch", type=int, default=2)
    parser.add_argument("--sample-s", type=float, default=15.0)
    parser.add_argument("--idle", type=int, default=0, help="cameras without spray (the last)")
    parser.add_argument("--idle-search-every-s", type=float, default=10.0)
    return parser.parse_args()


def _daemon_config(args: argparse.Namespace, servers: list, work: Path, port: int) -> dict:
    return {
        "sources": [
            {"name": f"cam{i}", "url": s.url, "max_fps": args.fps} for i, s in enumerate(servers)
        ],
        "inference": {
            "weights": str(weights_for(args.backend)),
            "threads": args.threads,
            "max_batch": args.max_batch,
            "idle_search_every_s": args.idle_search_every_s,
        },
        "store": {"path": str(work / "db.sqlite")},
        "api": {"port": port},
        "alarms": {"snapshot_dir": None},
        "log_level": "WARNING",
    }


def _start_daemon(config: dict, work: Path, port: int) -> subprocess.Popen:
    """`spraycv daemon` as its own process, once every source is connected."""
    (work / "daemon.yaml").write_text(yaml.safe_dump(config))
    daemon = subprocess.Popen(
        [sys.executable, "-m", "spraycv", "daemon", "--config", str(work / "daemon.yaml")],
        stdout=subprocess.PIPE, stderr=(work / "daemon.log").open("w"), text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:
        try:
            if all(s["state"] == "connected" for s in api(port, "/sources")):
                return daemon
        except OSError:
            pass
        if time.monotonic() > deadline or daemon.poll() is not None:
            sys.exit(f"daemon did not start: {(work / 'daemon.log').read_text()[-2000:]}")
        time.sleep(0.5)


def _print_rates(first: dict, last: dict, seconds: float) -> list[float]:
    """Per source frames read, inferred and dropped; returns the inferred frames/s."""
    print(f"\n{'source':>6} | {'read/s':>6} | {'inferred/s':>10} | {'dropped':>7} | {'bad':>3}")
    rates = []
    for name, end in last.items():
        begin = first[name]
        read = (end["frames_read"] - begin["frames_read"]) / seconds
        inferred = (end["frames_inferred"] - begin["frames_inferred"]) / seconds
        dropped = end["frames_dropped"] - begin["frames_dropped"]
        rates.append(inferred)
        print(f"{name:>6} | {read:6.2f} | {inferred:10.2f} | {dropped:7d} | {end['frames_bad']:3d}")
    return rates


def _print_totals(rates: list[float], seconds: float, samples: list, store: StoreReader) -> None:
    latencies = sorted(f["latency_s"] for f in store.frames())
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    mid = samples[len(samples) // 2][1]
    print(f"\nduration {seconds:.0f} s; inferred {sum(rates):.2f} frames/s in all")
    print(f"per source: mean {statistics.mean(rates):.2f}, min {min(rates):.2f} frames/s")
    print(f"frame-to-measurement latency: median {statistics.median(latencies) * 1000:.0f} ms,")
    print(f"  p95 {p95 * 1000:.0f} ms over {len(latencies)} frames")
    print(f"resident memory: start {samples[0][1]:.0f} MB, middle {mid:.0f} MB, ")
    print(
        f"  end {samples[-1][1]:.0f} MB (growth in the second half {samples[-1][1] - mid:+.1f} MB)"
    )


def main() -> None:
    args = _arguments()
    work = Path(tempfile.mkdtemp(prefix="spraycv-daemon-load-"))
    idle = idle_video(work, args.fps) if args.idle else None
    videos = [SAMPLES_DIR / "video.mp4"] * (args.sources - args.idle) + [idle] * args.idle
    servers = [FfmpegMjpegServer(video, fps=args.fps, size=(640, 480)).start() for video in videos]
    port = free_port()
    daemon = _start_daemon(_daemon_config(args, servers, work, port), work, port)
    start, start_cpu = time.monotonic(), cpu_seconds(daemon.pid)
    first = {s["name"]: s for s in api(port, "/sources")}
    samples = [(0.0, rss_mb(daemon.pid))]
    print(
        f"{args.sources} sources x {args.fps:g} fps, {args.backend}, {args.threads} threads,"
        f" batches of at most {args.max_batch}; {args.idle} without spray (searched every"
        f" {args.idle_search_every_s:g} s)"
    )
    while (elapsed := time.monotonic() - start) < args.minutes * 60:
        time.sleep(min(args.sample_s, args.minutes * 60 - elapsed))
        samples.append((time.monotonic() - start, rss_mb(daemon.pid)))
        done = sum(s["frames_inferred"] for s in api(port, "/sources"))
        print(f"  t={samples[-1][0]:6.0f} s  rss {samples[-1][1]:7.1f} MB  inferred {done}")
    last = {s["name"]: s for s in api(port, "/sources")}
    seconds = time.monotonic() - start
    daemon_cpu = cpu_seconds(daemon.pid) - start_cpu
    ffmpeg_cpu = sum(cpu_seconds(s.process.pid) for s in servers if s.running())
    daemon.send_signal(signal.SIGTERM)
    out, _ = daemon.communicate(timeout=60)
    summary = json.loads(out.strip().splitlines()[-1])["stopped"]
    for server in servers:
        server.stop()
    store = StoreReader(work / "db.sqlite")
    _print_totals(_print_rates(first, last, seconds), seconds, samples, store)
    print(
        f"CPU: daemon {daemon_cpu / seconds:.2f} cores; ffmpeg servers {ffmpeg_cpu / seconds:.2f}"
    )
    print(f"  cores (their whole life) on a {len(__import__('os').sched_getaffinity(0))}-core box")
    counts = store.counts()
    ok = counts["frames"] == summary["frames_inferred"]
    print(f"stored frames {counts['frames']} == inferred {summary['frames_inferred']}: {ok}")
    print(f"measurements stored {counts['measurements']} == {summary['measurements_written']}")


if __name__ == "__main__":
    main()

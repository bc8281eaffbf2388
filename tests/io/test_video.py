from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from spraycv.io.video import VideoReadError, is_video, open_video

needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg makes the videos")


def _video(path: Path, frames: int = 12, size: str = "64x48") -> Path:
    source = f"testsrc=size={size}:rate={frames}"
    subprocess.run(
        ["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", source, "-t", "1",
         "-c:v", "mjpeg", str(path)],
        check=True,
    )  # fmt: skip
    return path


@needs_ffmpeg
def test_a_whole_video_reads_its_announced_frames(tmp_path: Path):
    video = open_video(str(_video(tmp_path / "v.avi")))
    frames = list(video.frames())
    video.release()
    assert (video.announced, len(frames), video.width, video.height) == (12, 12, 64, 48)
    assert video.shortfall(len(frames)) is None
    assert video.expected(max_frames=5) == 5 and video.shortfall(5, max_frames=5) is None


@needs_ffmpeg
def test_a_cut_video_says_how_much_was_read(tmp_path: Path):
    whole = _video(tmp_path / "v.avi").read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole[: len(whole) // 2])
    video = open_video(str(cut), name="upload.avi")
    read = sum(1 for _ in video.frames())
    video.release()
    assert 0 < read < 12
    message = video.shortfall(read)
    assert message == (
        f"upload.avi: the video is cut short: {read} of the 12 frames its container "
        "announces could be read"
    )


@needs_ffmpeg
def test_the_frame_size_is_checked_before_a_frame_is_decoded(tmp_path: Path):
    path = _video(tmp_path / "v.avi")
    with pytest.raises(VideoReadError, match=r"64 x 48 px .* is over the limit"):
        open_video(str(path), max_pixels=1000)


def test_unreadable_sources_say_why(tmp_path: Path):
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "noise.mp4").write_bytes(b"not a video" * 100)
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        cases = {
            str(tmp_path / "missing.mp4"): "no such file",
            str(tmp_path / "empty.mp4"): "file is empty",
            str(tmp_path / "noise.mp4"): "not a readable video",
            "ftp://127.0.0.1/x.mp4": "URL scheme 'ftp' is not read",
            f"http://127.0.0.1:{port}/a//b.mjpg": "cannot open the stream",
        }
        for source, message in cases.items():
            with pytest.raises(VideoReadError, match=message) as info:
                open_video(source)
            assert str(info.value).startswith(f"{source}: ")  # the URL as given, "//" kept


def test_is_video():
    assert is_video("a.MP4") and is_video("rtsp://cam/1") and is_video("0")
    assert not is_video("a.png") and not is_video("folder")

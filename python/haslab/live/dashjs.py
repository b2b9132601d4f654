"""dash.js in headless Chromium, in a client namespace of the live testbed.

- **Media**: real fragmented MP4 made with ffmpeg (``testsrc2`` 640×360 at 25 fps, H.264,
  constant bitrate with filler so that each level's segments have the ladder's size, a key frame
  every 2 s, the DASH muxer writing the MPD and the segments). Cached by its parameters under
  ``.live-web/media/`` in the repository (or ``$HASLAB_LIVE_CACHE``).
- **Player**: npm ``dashjs`` (``make install`` puts it in ``.live-web/node_modules``; or
  ``$HASLAB_DASHJS`` = the path of ``dash.all.min.js``) on the page ``web/player.html``, ABR
  strategy selectable (``throughput`` → ``abrThroughput``, ``bola`` → ``abrBola``, ``dynamic`` →
  ``abrDynamic``). The page POSTs every video segment download (``FRAGMENT_LOADING_COMPLETED``:
  index, quality, bytes, request start/end), stalls (``waiting``/``playing``), and a sample per
  second to the origin's ``/log``; :func:`segments_from_log` turns them into rows of the same
  per-segment table as our players.
- **Browser**: ``chromium --headless --no-sandbox --disable-gpu --disable-quic`` … with
  ``--autoplay-policy=no-user-gesture-required`` (what headless Chromium needs as root in a network namespace; never
  ``--virtual-time-budget``, which runs JS timers faster than real time).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

ABR = {"throughput": "abrThroughput", "bola": "abrBola", "dynamic": "abrDynamic"}
WEB_DIR = Path(__file__).with_name("web")


def repo_root() -> Path:
    return Path(__file__).resolve().parents[3]


def cache_dir() -> Path:
    env = os.environ.get("HASLAB_LIVE_CACHE")
    return Path(env) if env else repo_root() / ".live-web"


def dashjs_path() -> Optional[Path]:
    env = os.environ.get("HASLAB_DASHJS")
    cands = [Path(env)] if env else []
    cands += [cache_dir() / "node_modules" / "dashjs" / "dist" / "dash.all.min.js"]
    for c in cands:
        if c.is_file():
            return c
    return None


def chromium_path() -> Optional[str]:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def missing() -> list[str]:
    out = []
    if chromium_path() is None:
        out.append("chromium (apt-get install chromium)")
    if shutil.which("ffmpeg") is None:
        out.append("ffmpeg (apt-get install ffmpeg)")
    if dashjs_path() is None:
        out.append("dash.js (npm install --prefix .live-web dashjs; make install does it)")
    return out


def make_media(bitrates_bps: list[int], duration_s: int, segment_s: int = 2, log=None) -> Path:
    """The fMP4 DASH video (manifest.mpd + segments) of a ladder, made once and cached."""
    key = hashlib.sha256(json.dumps([bitrates_bps, duration_s, segment_s, 2]).encode()).hexdigest()[:16]
    out = cache_dir() / "media" / key
    if (out / "manifest.mpd").is_file():
        return out
    tmp = out.with_name(key + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    fps = 25
    gop = fps * segment_s
    args = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
            f"testsrc2=size=640x360:rate={fps}", "-t", str(duration_s)]
    for _ in bitrates_bps:
        args += ["-map", "0:v"]
    args += ["-c:v", "libx264", "-preset", "ultrafast", "-profile:v", "baseline", "-pix_fmt", "yuv420p",
             "-g", str(gop), "-keyint_min", str(gop), "-sc_threshold", "0", "-x264-params", "nal-hrd=cbr:force-cfr=1"]
    for i, b in enumerate(bitrates_bps):
        k = f"{b // 1000}k"
        args += [f"-b:v:{i}", k, f"-minrate:v:{i}", k, f"-maxrate:v:{i}", k, f"-bufsize:v:{i}", f"{b // 2000}k"]
    # one AdaptationSet with every level (ffmpeg's default is one set per stream: no ABR then)
    args += ["-f", "dash", "-adaptation_sets", "id=0,streams=v", "-seg_duration", str(segment_s), "-use_template", "1", "-use_timeline", "0",
             "-init_seg_name", "init-$RepresentationID$.m4s",
             "-media_seg_name", "chunk-$RepresentationID$-$Number%05d$.m4s", "manifest.mpd"]
    if log:
        log(f"making the dash.js video with ffmpeg ({len(bitrates_bps)} levels, {duration_s} s)")
    p = subprocess.run(args, cwd=tmp, capture_output=True, text=True)
    if p.returncode != 0 or not (tmp / "manifest.mpd").is_file():
        raise RuntimeError(f"ffmpeg failed: {p.stderr[-2000:]}")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def site(run_dir: Path, media: Path) -> Path:
    """The origin's static directory for one run: the page, dash.js and the media (symlinks
    are not followed by the origin's path check, so files are copied/hard-linked)."""
    root = run_dir / "static"
    shutil.rmtree(root, ignore_errors=True)
    (root / "media").mkdir(parents=True)
    shutil.copy(WEB_DIR / "player.html", root / "player.html")
    shutil.copy(dashjs_path(), root / "dash.all.min.js")
    for f in media.iterdir():
        try:
            os.link(f, root / "media" / f.name)
        except OSError:
            shutil.copy(f, root / "media" / f.name)
    return root


def chromium_argv(url: str, profile: Path) -> list[str]:
    return [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            f"--user-data-dir={profile}", "--remote-debugging-port=0", url]


def remove_singleton_dir(profile: Path) -> None:
    """Removes the directory Chromium makes in the temporary folder for its singleton socket
    (``org.chromium.Chromium.XXXXXX``, which the profile's ``SingletonSocket`` links to): a
    Chromium stopped by a signal leaves it behind, one per run."""
    try:
        target = Path(os.readlink(profile / "SingletonSocket"))
    except OSError:
        return
    folder = target.parent
    if folder.name.startswith("org.chromium.Chromium.") and folder.is_dir():
        shutil.rmtree(folder, ignore_errors=True)


def segments_from_log(lines: list[dict], bitrates_bps: list[int], player: int) -> tuple[dict, dict]:
    """(per-segment rows as columns, a player summary) from the origin's metrics log of one
    dash.js session. Browser times (ms since the epoch) are put on the run's clock with each log
    line's receipt (``t_ns`` on the run's clock, ``wall_ns`` on the epoch)."""
    import numpy as np

    offs = [l["wall_ns"] - l["t_ns"] for l in lines if "wall_ns" in l]
    off = float(np.median(offs)) if offs else 0.0

    def run_ns(ms):
        return None if ms is None else int(ms * 1e6 - off)

    segs = [l["event"] for l in lines if isinstance(l.get("event"), dict) and l["event"].get("type") == "segment"]
    cols: dict[str, list] = {k: [] for k in ("player", "index", "level", "bitrate_bps", "bytes", "media_ns",
                                             "request_ns", "first_byte_ns", "done_ns", "download_ns",
                                             "ttfb_ns", "throughput_bps",
                                             "estimate_bps", "buffer_before_ns", "buffer_after_ns", "flow")}
    prev_buf = 0
    for e in segs:
        q = int(e.get("quality") or 0)
        start, end = run_ns(e.get("start_ms")), run_ns(e.get("end_ms"))
        if start is None or end is None:
            continue
        dl = max(end - start, 1)
        nbytes = int(e.get("bytes") or 0)
        buf = int((e.get("buffer_s") or 0) * 1e9)
        cols["player"].append(player)
        cols["index"].append(int(e.get("index") or 0))
        cols["level"].append(q)
        cols["bitrate_bps"].append(bitrates_bps[min(q, len(bitrates_bps) - 1)])
        cols["bytes"].append(nbytes)
        cols["media_ns"].append(int((e.get("duration_s") or 0) * 1e9))
        cols["request_ns"].append(max(start, 0))
        # the response's first byte (dash.js's firstByteDate); without one, the last byte's
        # time, as the simulator's driver takes it when none was measured
        fb = run_ns(e.get("first_byte_ms"))
        fb = end if fb is None else min(max(fb, start), end)
        cols["first_byte_ns"].append(max(fb, 0))
        cols["done_ns"].append(max(end, 0))
        cols["download_ns"].append(dl)
        cols["ttfb_ns"].append(fb - start)
        cols["throughput_bps"].append(nbytes * 8e9 / dl)
        t = e.get("throughput_kbps")
        cols["estimate_bps"].append(float(t) * 1e3 if t is not None else float("nan"))
        cols["buffer_before_ns"].append(prev_buf)
        cols["buffer_after_ns"].append(buf)
        cols["flow"].append(0)
        prev_buf = buf
    events = [l for l in lines if isinstance(l.get("event"), dict)]
    waits = [run_ns(l["event"]["wall_ms"]) for l in events if l["event"].get("type") == "waiting"]
    plays = [run_ns(l["event"]["wall_ms"]) for l in events if l["event"].get("type") == "playing"]
    first_play = min(plays) if plays else None
    # stalls: a `waiting` after playback started, until the next `playing`
    stalls = []
    for w in waits:
        if first_play is None or w <= first_play:
            continue
        nxt = [p for p in plays if p > w]
        stalls.append((w, (min(nxt) - w) if nxt else None))
    samples = [l["event"] for l in events if l["event"].get("type") == "sample"]
    played_ns = int(max([e.get("current_s") or 0 for e in samples] or [0]) * 1e9)
    bufs = [float(e.get("buffer_s") or 0) for e in samples]
    # the TcpHas paper's instability as the simulator computes it: the level of the latest
    # request sampled once per second (dash.js: getQualityFor("video") in each sample), the share
    # of seconds whose level differs from the previous second's
    quals = [int(e["quality"]) for e in samples if e.get("quality") is not None]
    instability = (100.0 * sum(1 for a, b in zip(quals, quals[1:]) if a != b) / (len(quals) - 1)
                   if len(quals) > 1 else None)
    levels = cols["level"]
    switches = sum(1 for a, b in zip(levels, levels[1:]) if a != b)
    media = sum(cols["media_ns"])
    summary = {
        "segments": len(levels),
        "media_bytes": sum(cols["bytes"]),
        "avg_bitrate_bps": (sum(b * m for b, m in zip(cols["bitrate_bps"], cols["media_ns"])) / media) if media else 0.0,
        "avg_level": (sum(l * m for l, m in zip(levels, cols["media_ns"])) / media) if media else 0.0,
        "switches": switches,
        "instability_pct": instability,
        "stalls": len(stalls),
        "stall_ns": sum(d for _, d in stalls if d is not None),
        "played_ns": played_ns,
        "rebuffering_ratio": 0.0,
        "avg_buffer_ns": (sum(bufs) / len(bufs) * 1e9) if bufs else 0.0,
        "goodput_bps": 0.0,
        "qoe_score": None,
        "startup_delay_ns": (first_play - cols["request_ns"][0]) if first_play and cols["request_ns"] else None,
        "errors": [l["event"].get("error") for l in events if l["event"].get("type") == "error"][:10],
        "version": next((l["event"].get("version") for l in events if l["event"].get("type") == "start"), None),
    }
    st = summary["stall_ns"]
    summary["rebuffering_ratio"] = st / (st + played_ns) if st + played_ns > 0 else 0.0
    return cols, summary

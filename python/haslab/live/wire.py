"""What live mode's HTTP messages look like on the wire, so that they are cut into the same TCP
segments as the simulator's (``has/http.rs``).

The simulator models a segment request as ``HTTP_REQUEST_BYTES`` and a response as a header of
``HTTP_RESPONSE_HEADER_BYTES`` followed by the body, written as one byte stream (300 bytes each:
a browser's GET and an Apache-like response header are 250–400 and 200–350 bytes). Live mode's
player and origin send the same sizes: their heads, built by ``h11``, are padded with an
``X-Pad`` header up to the simulator's size (Apache 1.3 padded some heads with an ``X-Pad`` header too), and the
origin writes a response's head together with the first bytes of its body.

Why it matters: a response's last segment is (header + body) mod MSS bytes. A drop-tail queue
counted in bytes that is nearly full still takes a short last segment; if it does, the ACK that
SACKs it starts fast recovery, and if it does not, a window lost whole waits for the RTO. With a
153-byte head sent on its own (Nagle off), the origin's 62,000-byte segment of the ``tcphas``
video ended in a 1,184-byte segment where the simulator's ended in 36 bytes (docs/live.md).
"""

from __future__ import annotations

PAD_NAME = b"X-Pad"


def padded_head(head: bytes, total_bytes: int) -> bytes:
    """An HTTP/1.1 message head (ending in the empty line) padded to ``total_bytes`` with an
    ``X-Pad`` header; a head too long for the pad header (``X-Pad: `` and CRLF, 9 bytes) is
    returned as it is."""
    if not head.endswith(b"\r\n\r\n"):
        raise ValueError("head: not an HTTP/1.1 message head ending in an empty line")
    fill = total_bytes - len(head) - len(PAD_NAME) - 4  # ": " and CRLF
    if fill < 0:
        return head
    return head[:-2] + PAD_NAME + b": " + b"x" * fill + b"\r\n\r\n"

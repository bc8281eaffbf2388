"""Credentials out of anything shown: the one redaction of camera and daemon URLs.

Camera URLs carry passwords (rtsp://admin:secret@cam/stream1, http://cam/video.cgi?pwd=x).
Every place that shows a URL or a text that may hold one (the API, log lines, events, the
dashboard) passes it through `redact_credentials`; only the readers see the real URL.
"""

from __future__ import annotations

import re

MASK = "***"
# scheme://user:password@ -> scheme://user:***@ (the user stays: it tells which account).
# The password runs to the last "@" before the host: unencoded "@" in passwords are common.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^\s/?#\"'<>]*@")
# ?password=x, &token=x, ... : query parameters that cameras and proxies use for secrets
_QUERY_SECRET = re.compile(
    r"(?P<head>[?&;](?:password|passwd|pass|pwd|token|access_token|auth|key|api_key|apikey"
    r"|secret|sig|signature)=)[^&#\s\"'<>]*",
    re.IGNORECASE,
)


def redact_credentials(text: str) -> str:
    """`text` with every URL password and secret query value replaced by ***."""
    if "://" in text:  # the common case (no URL at all) costs one substring search
        text = _USERINFO.sub(rf"\g<head>:{MASK}@", text)
    if "=" in text:
        text = _QUERY_SECRET.sub(rf"\g<head>{MASK}", text)
    return text

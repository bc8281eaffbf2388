"""The Streamlit field dashboard's logic: plain, typed functions the page scripts in app/ call.

Nothing here draws except `spraycv.dashboard.ui`; the rest is testable without Streamlit.
"""

from __future__ import annotations

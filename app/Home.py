"""spraycv field dashboard: `streamlit run app/Home.py` (Live first, then Analyse, History, Models).

With SPRAYCV_DAEMON_URL unset it starts an embedded daemon on the bundled sample video, so
the first run needs no camera and no configuration.
"""

from __future__ import annotations

import streamlit as st

from spraycv.dashboard.settings import load_settings

FLEET_PAGES = ("Fleet", "History", "Analyse")

# Wide, with the pages in the top bar and the (rarely changed) settings sidebar folded: the
# frame and the numbers get the whole screen. Material icons ship with Streamlit (no emoji
# font needed on a lab PC).
st.set_page_config(
    page_title="spraycv", page_icon=":material/water_drop:", layout="wide",
    initial_sidebar_state="collapsed",
)  # fmt: skip

# With a fleet's database (spraycv dashboard --db) the dashboard reads that database: the
# Fleet view first; no embedded daemon is started.
fleet = load_settings().fleet
pages = [
    st.Page("pages/4_Fleet.py", title="Fleet", icon=":material/agriculture:", default=fleet),
    st.Page("pages/0_Live.py", title="Live", icon=":material/videocam:", default=not fleet),
    st.Page("pages/1_Analyse.py", title="Analyse", icon=":material/image_search:"),
    st.Page("pages/2_History.py", title="History", icon=":material/timeline:"),
    st.Page("pages/3_Models.py", title="Models", icon=":material/model_training:"),
]
shown = [p for p in pages if p.title in FLEET_PAGES] if fleet else pages[1:]
page = st.navigation(shown, position="top")
page.run()

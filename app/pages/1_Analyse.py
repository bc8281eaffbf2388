"""Analyse: measure uploaded images or videos (or a bundled sample) with the shipped model."""

from __future__ import annotations

import hashlib

import streamlit as st

from spraycv.config.daemon import SpecRule
from spraycv.dashboard import analyse, ui
from spraycv.dashboard.analyse import Analysed, Analysis, Upload, UploadError
from spraycv.dashboard.settings import load_settings
from spraycv.dashboard.tables import csv_bytes
from spraycv.geometry import MeasureHints
from spraycv.spec import spec_summary

settings = load_settings()
SPEC_HELP = (
    "ok: within the tolerance; out_of_spec: further off (spec_deviation_deg says by how much); "
    "unreliable: the reading says why it is not to be trusted, so it is not checked; "
    "not_measured: no angle was read."
)
ui.style_page()
st.header("Analyse images and videos")


@st.cache_data(show_spinner="Measuring…", max_entries=32)
def measured(
    digest: str,
    _upload: Upload,
    max_frames: int,
    mm_per_px: float,
    height_mm: float,
    max_pixels: int,
) -> Analysis:
    """Cached by content digest, calibration and limit: reruns (a click, a download) do not
    measure again."""
    hints = MeasureHints(mm_per_px=mm_per_px or None, nozzle_height_mm=height_mm or None)
    return analyse.analyse_upload(_upload, ui.get_measurer(), max_frames, hints, max_pixels)


left, right = st.columns([3, 1])
mode = left.segmented_control(
    "Input", ["Upload", "Bundled sample"], default="Upload", key="analyse_mode"
)
max_frames = right.number_input(
    "Frames sampled per video", min_value=1, max_value=60, value=12, key="analyse_frames"
)
with st.expander("Calibration (optional): lengths, areas and coverage in mm"):
    scale_col, height_col = st.columns(2)
    mm_per_px = scale_col.number_input(
        "Scale, mm per pixel (from `spraycv calibrate`; 0: none)",
        min_value=0.0, value=0.0, step=0.01, format="%.4f", key="analyse_mm_per_px",
    )  # fmt: skip
    height_mm = height_col.number_input(
        "Nozzle height above the target, mm (0: none)",
        min_value=0.0, value=0.0, step=10.0, key="analyse_height_mm",
    )  # fmt: skip
with st.expander("Spec (optional): check each reading against the nozzle's nominal angle"):
    nominal_col, tolerance_col = st.columns(2)
    nominal = nominal_col.number_input(
        "Nominal included angle, deg (0: no check)",
        min_value=0.0, max_value=179.0, value=0.0, step=5.0, key="analyse_nominal",
    )  # fmt: skip
    tolerance = tolerance_col.number_input(
        "Tolerance, +- deg", min_value=0.1, max_value=89.0, value=5.0, step=0.5,
        key="analyse_tolerance",
    )  # fmt: skip
rule = SpecRule(nominal_deg=nominal, tolerance_deg=tolerance) if nominal > 0 else None
uploads: list[Upload] = []
if mode == "Bundled sample":
    samples = {p.name: p for p in analyse.bundled_samples()}
    chosen = st.selectbox("Sample", list(samples), key="analyse_sample")
    if chosen is not None:
        uploads.append(analyse.load_sample(samples[chosen]))
else:
    files = st.file_uploader(
        f"Images or videos (up to {settings.max_upload_mb:g} MB each)",
        accept_multiple_files=True,
        key="analyse_files",
    )
    for file in files or []:
        try:  # one bad file gets its message; the others are measured
            limits = (settings.max_upload_bytes, settings.max_pixels)
            uploads.append(analyse.check_upload(file.name, file, *limits))  # size before bytes
        except UploadError as exc:
            st.error(str(exc))

results: list[Analysed] = []
for upload in uploads:
    try:
        digest = hashlib.sha256(upload.data).hexdigest()
        calibration = (mm_per_px, height_mm)
        analysis = measured(digest, upload, int(max_frames), *calibration, settings.max_pixels)
    except UploadError as exc:
        st.error(str(exc))
        continue
    results += analysis.results
    for warning in analysis.warnings:
        st.warning(warning)

if results:
    table = analyse.measurement_table(results, rule)
    st.subheader(f"{sum(r.cones for r in results)} cone(s) in {len(results)} image(s)")
    if rule is not None:
        st.caption(spec_summary(rule, table["spec_status"]), help=SPEC_HELP)
    st.dataframe(table, hide_index=True, key="analyse_table")
    st.download_button(
        "Download CSV", csv_bytes(table), file_name="spraycv_measurements.csv", mime="text/csv"
    )
    columns = st.columns(3)
    for i, result in enumerate(results):
        with columns[i % 3]:
            st.image(result.overlay_rgb(), caption=f"{result.label}: {result.angles_text}")
elif not uploads:
    st.info("Upload images or a video, or pick a bundled sample.")

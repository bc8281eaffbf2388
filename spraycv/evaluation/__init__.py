"""Held-out evaluation of segmenters, end to end from images to cone angles."""

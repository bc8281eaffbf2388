"""The parts of the third spray drawer, benchmarks/photo_sprays.py: it imports nothing from
spraycv and shares no code with benchmarks/independent_sprays.py."""

"""`python -m spraycv ...`: the CLI, also under `torchrun -m spraycv train ...`."""

from __future__ import annotations

from spraycv.cli.app import main

if __name__ == "__main__":
    main()

"""scripts/ship_model.py keeps the record of the models shipped before (the card's changelog)."""

from __future__ import annotations

from repo_scripts import load_script

ship = load_script("ship_model")


def test_a_new_card_keeps_the_previous_head_and_changelog() -> None:
    previous = (
        "# Default model: Unet / a\n\nwhat it was\n\n## Figures\n\nthen\n\n"
        f"{ship.CHANGELOG}\n\n**Since monday**: a change\n"
    )
    out = ship.with_changelog("# Default model: Unet / b\n\nwhat it is\n", previous)
    assert out.startswith("# Default model: Unet / b\n\nwhat it is\n\n" + ship.CHANGELOG)
    after = out.split(ship.CHANGELOG, 1)[1]
    assert after.index("### Until this card: Default model: Unet / a") < after.index("what it was")
    assert after.index("what it was") < after.index("**Since monday**: a change")
    assert out.count(ship.CHANGELOG) == 1
    assert "\n#### Figures\n" in after and "\n## Figures" not in out  # a level down


def test_a_card_without_a_changelog_becomes_its_first_entry() -> None:
    out = ship.with_changelog("# New\n\nnow\n", "# Old\n\nall of it\n")
    assert out == f"# New\n\nnow\n\n{ship.CHANGELOG}\n\n### Until this card: Old\n\nall of it\n"
    assert ship.with_changelog("# New\n", None) == "# New\n"

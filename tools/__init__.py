"""Maintainer tools run from a checkout of this repository (not shipped in the wheel)."""

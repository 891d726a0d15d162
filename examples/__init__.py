"""Example applications built on ferry."""

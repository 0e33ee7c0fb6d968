"""recoveries package."""

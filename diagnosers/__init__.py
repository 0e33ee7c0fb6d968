"""diagnosers package."""

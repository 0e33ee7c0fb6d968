"""perturb package."""

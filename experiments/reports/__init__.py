"""Rendering of run metrics: markdown tables, PNG plots, run comparison."""

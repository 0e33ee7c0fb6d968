"""Test helpers that ship with ttir: a scripted local OpenAI-compatible server."""

from ttir.testing.server import RecordedRequest, Reply, VLMTestServer

__all__ = ["RecordedRequest", "Reply", "VLMTestServer"]

"""``python -m ttir.testing --port 8000 --reply reply.json``: a local endpoint for offline demos."""

from ttir.testing.server import main

main()

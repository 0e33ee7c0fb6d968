"""diagnosers package."""

from loguru import logger as _logger

_logger.disable(__name__)  # a library stays quiet until the application (or `ttir` CLI) enables it


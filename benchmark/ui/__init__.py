"""A tiny UI toolkit: widgets → layout in dp → Pillow rendering + uiautomator nodes.

Shared by the simulated device and the overlay engine (which draws pop-ups over
any device's screenshot)."""

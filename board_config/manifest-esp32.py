# The ESP32 production image: the port's own frozen modules (asyncio,
# neopixel, ...) and the firmware (manifest.py). Build with ESP-IDF:
#   make -C ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=/abs/path/board_config/manifest-esp32.py
include("$(PORT_DIR)/boards/manifest.py")  # noqa: F821 - manifest API
include("manifest.py")  # noqa: F821

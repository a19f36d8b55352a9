"""Text recognition (OCR) of scanned PDF pages and pictures, in a worker process of its own."""

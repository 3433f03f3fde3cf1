"""What lives per server process, apart from the pages' pure parts (``ui``) and the engine
(``blockstab``): the entry point (``python -m server``), each session's fair share, the Depth lab's
worker processes and shared runs, the instant Explorer's bundles, and the caches every
session shares. Light to import: the Depth lab's workers import it too."""

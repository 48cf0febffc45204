"""The section's statements as claims, one module per section heading (plus the engine's
own cross-checks).  Each module exports ``SECTION`` (the heading) and ``CLAIMS``."""

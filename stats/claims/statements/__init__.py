"""The section's statements as claims, one module per section heading (plus the engine's
own cross-checks).  Each module exports ``SECTION`` (the heading) and ``CLAIMS``; a module
whose claims span headings (``sources``: facts read at their sources, grouped by source)
also exports ``HEADINGS``, every heading its claims cite."""

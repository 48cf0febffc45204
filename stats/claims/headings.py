"""The section's headings, in the order the text has them, and the two headings the suite adds.

Every claim cites one (``Claim.section``), and ``docs/statements.md`` places every statement
of the section under one; the one spelling of each lives here."""

OPENING = 'The section\'s opening (before "The formula, piece by piece")'
FORMULA = "The formula, piece by piece"
WIDTH = "Why dot products grow with the width"
LARGE = "What large scores do to the softmax"
JACOBIAN = "The Jacobian of softmax, and what saturation does to it"
SATURATION = "Saturation, measured"
ASSUMPTION = "The assumption behind the argument, and when it fails"
STABILITY = "A vectorized implementation, and why stability is not optional"
BACKWARD = "The backward pass of attention"
PYTORCH = "In PyTorch"
READ_MORE = "Read more"

#: The section's own headings, in its order.
SECTION_HEADINGS = (OPENING, FORMULA, WIDTH, LARGE, JACOBIAN, SATURATION, ASSUMPTION, STABILITY, BACKWARD, PYTORCH, READ_MORE)

#: Headings of what the suite adds beyond the text: laws it derives, and its own engine's cross-checks.
BEYOND = "Beyond the text: the asymptotic laws of saturation"
ENGINE = "Engine fast paths"
SUITE_HEADINGS = (BEYOND, ENGINE)

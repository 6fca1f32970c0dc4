"""Imported at start-up by the opt-in hook line (jitframes.pth, written by
``python -m jitframes --install-hook``) when $JITFRAMES or
$JITFRAMES_CONTROL is set: activates jitframes from them. The line only
tests the two names, the cheapest code site can compile; what they say,
and ``python -E``/``-I``, is read here."""
from . import _activate_from_environment

_activate_from_environment()

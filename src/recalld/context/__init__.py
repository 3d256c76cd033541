"""Context channels: each compares a cue with a memory's encoding context, in [0, 1]."""

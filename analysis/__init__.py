"""dims analysis layer."""

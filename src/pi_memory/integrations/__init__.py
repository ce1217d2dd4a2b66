"""Host integrations (pi, ...)."""

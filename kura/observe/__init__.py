"""The observation log: a store's running notebook, read safely and consolidated as it grows."""

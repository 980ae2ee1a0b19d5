"""A memory's life: corrections, supersede and archive, use, decay, purge, and why it is believed."""

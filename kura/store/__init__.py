"""The store on disk: the only code that opens memory files, its state folder, locks and caches."""

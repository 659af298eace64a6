"""SRBench submission folder for CADSR; the entry points live in :mod:`.regressor`."""

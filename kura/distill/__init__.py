"""The distiller: reading agent transcripts without believing them (journals, the gate)."""

"""Energy vs responsiveness: shutdown policies on KTH-SP2 (experiments/energy_shutdown/README.md)."""

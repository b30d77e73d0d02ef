"""Adapters that put a real resource manager behind the protocol."""

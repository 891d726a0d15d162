"""Outbound webhooks delivered to a real HTTP receiver on 127.0.0.1."""

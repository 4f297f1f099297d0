"""Tests of trimcp.server."""

"""Tests of ``trimcp.supervision``: pure decisions, supervisors under a mock clock, the model."""

"""Processes: the agent's process started with limits and read as it streams, a cancel flag, the reaper."""

"""Agents working inside passk's environments: `passk-docker` (dockercli.py), the Docker command line an
agent harness shells out to, answered by passk's sandbox for a SWE-bench instance (images.py names it)."""
